/**
 * A notesvc installation of real processes for a test: `notesvc serve` nodes (NOTESVC_WORKERS=0, the
 * API alone) and `notesvc worker` processes, each its own `bun src/cli.ts` on a free loopback port,
 * sharing one database and one S3 bucket (s3rver, in the test process).
 *
 * - `postgres`: a fresh migrated database on the test run's shared PostgreSQL cluster
 *   (`freshPostgresUrl()`), passed to every process as NOTESVC_DATABASE_URL; each process has a data
 *   folder of its own, so nothing is shared through the disk: state is in PostgreSQL, media in S3.
 * - `sqlite`: the embedded database of one data folder, shared by one serve and the workers (what one
 *   machine runs today; its rate limits and read caches live in the one serve process).
 *
 * Every process's output is kept (its JSON log lines parsed) and printed when it fails to start;
 * `stop()` kills them all (SIGKILL) and removes what was made. `cli()` runs a command-line command
 * (`keys create`, `accounts credit`, …) against the same database, as an operator would.
 */
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import type { Subprocess } from 'bun'
import { openDatabase } from '../../src/db/database'
import { PostgresStore, SqliteStore, type Store } from '../../src/db/store'
import { freshPostgresUrl } from './backends'
import { freePort, ROOT, run, tempDir, type RunResult } from './process'
import { startS3 } from './s3'

export type ClusterBackEnd = 'postgres' | 'sqlite'

export interface ClusterOptions {
  backEnd: ClusterBackEnd
  /** `serve` processes with NOTESVC_WORKERS=0 (SQLite: one) */
  nodes: number
  /** `notesvc worker` processes, NOTESVC_WORKERS=1 each */
  workers: number
  /** NOTESVC_JOB_LEASE_SECONDS (default 3) */
  leaseSeconds?: number
  /** more environment for every process (NOTESVC_RATE_LIMITS, …) */
  env?: Record<string, string>
}

interface LogLine {
  msg: string
  level?: string
  [k: string]: unknown
}

/** One process of the cluster, with everything it printed. */
interface ClusterProcess {
  name: string
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  pid: number
  /** every line of stdout and stderr, in order */
  output: string[]
  /** the JSON log lines among them */
  lines: LogLine[]
  /** the last lines it printed, for a failure message */
  tail(n?: number): string
}

interface ClusterNode extends ClusterProcess {
  base: string
  port: number
}

export interface Cluster {
  backEnd: ClusterBackEnd
  /** the PostgreSQL URL every process uses (postgres only) */
  databaseUrl?: string
  /** the environment every process shares */
  env: Record<string, string>
  nodes: ClusterNode[]
  workers: ClusterProcess[]
  /** a store on the cluster's database, for the test's own counting (and setup) queries */
  store: Store
  s3: { endpoint: string; bucket: string }
  /** `bun src/cli.ts …args` against the cluster's database; throws unless it exits 0 */
  cli(args: string[], options?: { stdin?: string; env?: Record<string, string> }): Promise<RunResult>
  /** starts one more worker process and waits until it runs */
  startWorker(): Promise<ClusterProcess>
  /** starts serve node `i` again (after it was killed): same port, same data folder; resolves once it answers */
  restartNode(i: number): Promise<ClusterNode>
  stop(): Promise<void>
}

function spawnLogged(name: string, args: string[], env: Record<string, string>): ClusterProcess {
  const proc = Bun.spawn(['bun', 'src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const output: string[] = []
  const lines: LogLine[] = []
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      rest += decoder.decode(chunk, { stream: true })
      const parts = rest.split('\n')
      rest = parts.pop()!
      for (const l of parts) {
        output.push(l)
        if (l.startsWith('{')) {
          try {
            lines.push(JSON.parse(l))
          } catch {
            // a line that only looks like JSON
          }
        }
      }
    }
    if (rest) output.push(rest)
  }
  // drained as they come, so a chatty process never blocks on a full pipe
  void read(proc.stdout).catch(() => {})
  void read(proc.stderr).catch(() => {})
  return { name, proc, pid: proc.pid, output, lines, tail: (n = 30) => output.slice(-n).join('\n') }
}

async function waitReady(p: ClusterProcess, ready: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (p.proc.exitCode !== null || p.proc.signalCode !== null) {
      await Bun.sleep(50) // the last output
      throw new Error(`${p.name} exited (${p.proc.exitCode ?? p.proc.signalCode}) before it was ready:\n${p.tail()}`)
    }
    if (await ready().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${p.name} was not ready after ${ms} ms:\n${p.tail()}`)
    await Bun.sleep(25)
  }
}

/**
 * Starts the cluster: the database (and its URL), s3rver, then the serve nodes and the worker
 * processes together; resolves when every node answers GET /v1/health and every worker has logged
 * that it started. On a failure everything started so far is stopped.
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  if (o.backEnd === 'sqlite' && o.nodes !== 1) throw new Error('on SQLite one serve process owns a data folder: nodes must be 1')
  const dir = tempDir('notesvc-cluster-')
  const started: ClusterProcess[] = []
  let s3: Awaited<ReturnType<typeof startS3>> | null = null
  let store: Store | null = null
  const stop = async () => {
    for (const p of started) {
      p.proc.kill('SIGCONT')
      p.proc.kill('SIGKILL')
    }
    await Promise.all(started.map(p => p.proc.exited))
    await store?.close().catch(() => {})
    await s3?.close().catch(() => {})
    dir.remove()
  }
  try {
    const databaseUrl = o.backEnd === 'postgres' ? await freshPostgresUrl() : undefined
    s3 = await startS3('notesvc-cluster')
    const env: Record<string, string> = {
      ...(databaseUrl ? { NOTESVC_DATABASE_URL: databaseUrl } : {}),
      NOTESVC_STORAGE: 's3', NOTESVC_S3_BUCKET: s3.bucket, NOTESVC_S3_ENDPOINT: s3.endpoint, NOTESVC_S3_REGION: 'us-east-1',
      NOTESVC_S3_FORCE_PATH_STYLE: '1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER',
      NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_JOB_LEASE_SECONDS: String(o.leaseSeconds ?? 3),
      NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_ACCESS_LOG: '', HOST: '127.0.0.1',
      ...o.env,
    }
    // PostgreSQL: a data folder per process (nothing shared through the disk); SQLite: the one folder
    let folders = 0
    const dataDir = () => {
      const path = o.backEnd === 'sqlite' ? join(dir.path, 'data') : join(dir.path, `data-${++folders}`)
      mkdirSync(path, { recursive: true })
      return path
    }
    const sharedDataDir = dataDir()
    if (o.backEnd === 'sqlite') store = new SqliteStore(openDatabase(join(sharedDataDir, 'notesvc.db')))
    else store = new PostgresStore(databaseUrl!, { max: 4 })

    const nodes: ClusterNode[] = []
    const nodeDirs: string[] = []
    const spawnNode = (i: number, port: number): ClusterNode => {
      const p = spawnLogged(`serve ${String.fromCharCode(65 + i)}`, ['serve'], { ...env, NOTESVC_WORKERS: '0', PORT: String(port), NOTESVC_DATA_DIR: nodeDirs[i]! })
      started.push(p)
      return { ...p, port, base: `http://127.0.0.1:${port}` }
    }
    for (let i = 0; i < o.nodes; i++) {
      nodeDirs.push(i === 0 ? sharedDataDir : dataDir())
      nodes.push(spawnNode(i, await freePort()))
    }
    const restartNode = async (i: number) => {
      const node = (nodes[i] = spawnNode(i, nodes[i]!.port))
      await waitReady(node, async () => (await fetch(`${node.base}/v1/health`)).ok, 30_000)
      return node
    }
    const workers: ClusterProcess[] = []
    const startWorker = async () => {
      const p = spawnLogged(`worker ${workers.length + 1}`, ['worker'], { ...env, NOTESVC_WORKERS: '1', NOTESVC_DATA_DIR: dataDir() })
      started.push(p)
      workers.push(p)
      await waitReady(p, async () => p.lines.some(l => l.msg === 'notesvc worker started'), 30_000)
      return p
    }
    await Promise.all([
      ...nodes.map(n => waitReady(n, async () => (await fetch(`${n.base}/v1/health`)).ok, 30_000)),
      ...Array.from({ length: o.workers }, () => startWorker()),
    ])

    const cli = async (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) => {
      const cmd = ['bun', 'src/cli.ts', ...args]
      const cliEnv = { ...env, NOTESVC_DATA_DIR: sharedDataDir, ...options.env }
      const r = options.stdin === undefined
        ? await run(cmd, { env: cliEnv })
        : await (async () => {
          const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...cliEnv }, stdin: new Blob([options.stdin!]), stdout: 'pipe', stderr: 'pipe' })
          const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
          return { code, stdout, stderr }
        })()
      if (r.code !== 0) throw new Error(`notesvc ${args.join(' ')} exited ${r.code}:\n${r.stderr}`)
      return r
    }
    return { backEnd: o.backEnd, databaseUrl, env, nodes, workers, store, s3: { endpoint: s3.endpoint, bucket: s3.bucket }, cli, startWorker, restartNode, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
