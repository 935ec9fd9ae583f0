/**
 * A private PostgreSQL cluster for a test file: `initdb` into a temporary folder, `pg_ctl start` on a
 * free loopback port (and a socket in that folder), trust authentication for the `postgres` role, and
 * everything removed at the end. PostgreSQL refuses to run as root, so as root the cluster is created
 * and run by the unprivileged `postgres` user that Debian's package creates (`runuser`).
 *
 * Binaries are looked up in PATH, then in Debian's /usr/lib/postgresql/<version>/bin. Outside CI a
 * machine without them skips the tests that need them, with the reason printed; in CI (CI=true) their
 * absence fails the run, since .ci/run installs them.
 */
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './process'

export interface PostgresCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string
  port: number
  /** a fresh empty database on this cluster (a copy of `template` when given), and its URL */
  createDatabase(name: string, template?: string): Promise<string>
  /** stops the server and keeps its data, as an outage does (open connections are cut); `resume` starts it again */
  halt(): Promise<void>
  /** starts a halted server again, on the same port and data */
  resume(): Promise<void>
  /**
   * Hangs the server rather than stopping it: SIGSTOP to the postmaster and every process it started
   * (backends, background workers). Connections stay open and new ones are accepted by the kernel,
   * but nothing answers, as with a server that is stuck or a network that drops packets; `thaw` lets it go on.
   */
  freeze(): number[]
  /** SIGCONT to the processes `freeze` stopped: the server answers again, from where it was */
  thaw(): void
  stop(): Promise<void>
  /** a shell command that stops the cluster and removes its folder, for an exit handler (no await there) */
  stopCommand: string
  /** the server's log file (with `logStatements`, every statement the server ran, with its parameters) */
  logPath: string
}

export interface PostgresOptions {
  /** `log_statement=all`: the log holds every statement and its bound parameters (test/helpers/scope-recorder.ts reads it) */
  logStatements?: boolean
}

/** The folder holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
function postgresBinDir(): string | null {
  const initdb = Bun.which('initdb')
  if (initdb && Bun.which('pg_ctl')) return join(initdb, '..')
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root).filter(v => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin')
  return null
}

/** Why PostgreSQL tests cannot run here, or null when they can. Throws in CI: there they must run. */
export function postgresUnavailable(): string | null {
  if (postgresBinDir()) return null
  const reason = 'PostgreSQL binaries (initdb, pg_ctl) not found: apt-get install postgresql'
  if (process.env.CI === 'true') throw new Error(`${reason} (required in CI; .ci/run installs it)`)
  return reason
}

function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find(l => l.startsWith('postgres:'))
  if (!line) throw new Error('running as root, but there is no postgres user to run PostgreSQL as (it refuses root): apt-get install postgresql creates one')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

async function run(args: string[], asUser: boolean, what: string): Promise<void> {
  const cmd = asUser ? ['runuser', '-u', 'postgres', '--', ...args] : args
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', cwd: tmpdir() })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${`${out}\n${err}`.trim().slice(-2000)}`)
}

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry))
    } catch {
      // ended while we looked
    }
  }
  return out
}

/** Starts a private cluster; call `stop()` in afterAll. */
export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir()
  if (!bin) throw new Error(postgresUnavailable() ?? 'PostgreSQL not found')
  const user = postgresUser()
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-pg-'))
  if (user) chownSync(dir, user.uid, user.gid)
  else chmodSync(dir, 0o700)
  const data = join(dir, 'data')
  const port = await freePort()
  const asUser = user !== null
  // fsync off: a test cluster is thrown away, and durability is not what the tests measure
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200${opts.logStatements ? ' -c log_statement=all' : ''}`
  const start = () => run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'], asUser, 'pg_ctl start')
  try {
    await run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], asUser, 'initdb')
    await start()
  } catch (err) {
    const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').slice(-2000) : ''
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`${(err as Error).message}${log ? `\nserver log:\n${log}` : ''}`)
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  let halted = false
  let frozen: number[] = []
  const thaw = () => {
    for (const pid of frozen.toReversed()) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {
        // a backend that ended meanwhile
      }
    }
    frozen = []
  }
  return {
    url,
    port,
    async createDatabase(name: string, template?: string) {
      for (const n of [name, template ?? 'x']) if (!/^[a-z_][a-z0-9_]*$/.test(n)) throw new Error(`database name ${n} must be lower-case letters, digits and _`)
      const admin = new Bun.SQL(url, { max: 1 })
      try {
        await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
      } finally {
        await admin.close()
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
    async halt() {
      // fast: the server rolls back open transactions and closes every connection, then exits
      await run([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop'], asUser, 'pg_ctl stop')
      halted = true
    },
    async resume() {
      await start()
      halted = false
    },
    freeze() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      process.kill(postmaster, 'SIGSTOP')
      frozen = [postmaster, ...childrenOf(postmaster)]
      for (const pid of frozen.slice(1)) process.kill(pid, 'SIGSTOP')
      return frozen
    },
    thaw,
    logPath: join(dir, 'log'),
    stopCommand: `${asUser ? 'runuser -u postgres -- ' : ''}'${join(bin, 'pg_ctl')}' -D '${data}' -m immediate -w stop; rm -rf '${dir}'`,
    async stop() {
      if (frozen.length) thaw()
      try {
        if (!halted) await run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'], asUser, 'pg_ctl stop')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
