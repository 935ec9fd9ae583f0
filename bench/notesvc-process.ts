import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import type { Subprocess } from 'bun'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/**
 * A notesvc server as its own process on a fresh data folder: waits for its first-start live key and
 * for /v1/health; stop() ends it and removes the folder.
 */
export async function startNotesvc(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-bench-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const proc = Bun.spawn(['bun', 'run', join(ROOT, 'src/cli.ts'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), NOTESVC_DATA_DIR: dataDir },
    stdout: 'pipe',
    stderr: 'ignore',
  })
  const stop = async () => {
    proc.kill()
    await proc.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const reader = proc.stdout.getReader()
    let out = ''
    while (!/sandbox key: +\S+/.test(out)) {
      const { value, done } = await reader.read()
      if (done) throw new Error('notesvc exited before printing its first key')
      out += new TextDecoder().decode(value)
    }
    const key = /live key: +(\S+)/.exec(out)![1]!
    const sandboxKey = /sandbox key: +(\S+)/.exec(out)![1]!
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/v1/health`)).ok) break
      } catch {
        if (i > 500) throw new Error('notesvc did not answer /v1/health')
        await Bun.sleep(20)
      }
    }
    return { base, key, sandboxKey, dataDir, pid: proc.pid, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/** Something broke (not a missed target): a benchmark exits 1. */
export class BenchFailure extends Error {}

/**
 * Runs a benchmark's `main` when its file is the entry point: exit 0 when it measured (a missed
 * target included), 1 with the reason when it could not (a BenchFailure's message, else the stack).
 */
export function runBench(meta: ImportMeta, main: () => Promise<void>): void {
  if (!meta.main) return
  main().then(() => process.exit(0), err => {
    process.stderr.write(`bench failed: ${err instanceof BenchFailure ? err.message : (err as Error).stack ?? err}\n`)
    process.exit(1)
  })
}

/** Resident and peak-resident memory of a process, from /proc, in MB. */
export function processMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 }
}

/** A notesvc `serve` whose output goes to a log file (list-postgres.ts, search.ts). */
export interface LoggedServer { name: string; proc: Subprocess; base: string; logPath: string }

export function logTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n')
  } catch {
    return '(no log)'
  }
}

/**
 * `serve` on a free loopback port with the caller's data (env), API only, no access log and limits out
 * of the way, its output appended to `logPath`; `wrap` prefixes the command (taskset). Waits for
 * /v1/health, at most 30 s.
 */
export async function startLoggedNotesvc(name: string, env: Record<string, string>, logPath: string, wrap: (args: string[]) => string[] = a => a): Promise<LoggedServer> {
  const port = await freePort()
  const log = openSync(logPath, 'a')
  const proc = Bun.spawn(wrap([process.execPath, 'src/cli.ts', 'serve']), {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', NOTESVC_WORKERS: '0', NOTESVC_ACCESS_LOG: '', NOTESVC_RATE_LIMITS: 'read=1000000000,write=1000000000,processing=1000000000' },
    stdin: 'ignore', stdout: log, stderr: log,
  })
  closeSync(log)
  const server = { name, proc, base: `http://127.0.0.1:${port}`, logPath }
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new BenchFailure(`${name} exited with code ${proc.exitCode} before answering:\n${logTail(logPath)}`)
    try {
      if ((await fetch(`${server.base}/v1/health`)).ok) return server
    } catch {
      // not listening yet
    }
    await Bun.sleep(50)
  }
  await stopServer(server)
  throw new BenchFailure(`${name} did not answer /v1/health within 30 s:\n${logTail(logPath)}`)
}

export async function stopServer(s: LoggedServer): Promise<void> {
  if (s.proc.exitCode !== null) return
  s.proc.kill('SIGTERM')
  if (!(await Promise.race([s.proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)]))) {
    s.proc.kill('SIGKILL')
    await s.proc.exited
  }
}
