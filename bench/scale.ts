#!/usr/bin/env bun
/**
 * Scaling out the job workers: the same batch of speech files (20 by default, 30 s each, real English
 * speech) through one `notesvc worker` process and then through two, each time beside a `serve` with
 * NOTESVC_WORKERS=0 (the API alone) on one data folder, PocketSphinx as the engine. Every file goes
 * upload → PUT → complete → Done through the HTTP API with an API key. Prints files/minute for each,
 * the ratio (2 workers / 1 worker; target at least 1.7 on a 2-core machine), each run's wall time and
 * the per-file median time to Done, and where the CPU went. See bench/README.md.
 *
 *   bun run bench/scale.ts                     # 20 files
 *   BENCH_FILES=4 bun run bench/scale.ts       # a quick smoke run
 *
 * The database (BENCH_DATABASE): `postgres` (the default) starts a private PostgreSQL cluster (initdb
 * and pg_ctl into a temporary folder, as the tests do) with a new database for each run, passed to
 * every process as NOTESVC_DATABASE_URL; `sqlite` uses the embedded database of each run's data
 * folder. NOTESVC_DATABASE_URL, if set, names a PostgreSQL server of your own instead (both runs use
 * it, each with a new account). The back end the server reports is printed, and must be the one asked for.
 *
 *   BENCH_DATABASE=sqlite bun run bench/scale.ts
 *
 * Needs: apt-get install ffmpeg pocketsphinx pocketsphinx-en-us pocketsphinx-testdata (and postgresql)
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { findPocketsphinx, POCKETSPHINX_DEFAULTS } from '../src/engines/asr/pocketsphinx'
import { LIBRIVOX } from '../test/fixtures/speech'
import { BenchFailure, freePort, runBench } from './notesvc-process'
import { startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { pocketsphinxAlone } from './speech-engine'

const ROOT = resolve(import.meta.dir, '..')
const FILES = Number(process.env.BENCH_FILES ?? 20)
const FILE_SECONDS = 30
const TARGET = 1.7
/** files the engine runs on by itself, one at a time and then in pairs (an even number) */
const ENGINE_FILES = 4
/** how often the script lists the notes to see which are Done (the times come from the notes themselves) */
const POLL_MS = 500
/** a PostgreSQL server of the caller's own; unset: BENCH_DATABASE decides */
const DATABASE_URL = process.env.NOTESVC_DATABASE_URL || undefined
const BACKEND = (process.env.BENCH_DATABASE || 'postgres') as 'postgres' | 'sqlite'
const CORES = navigator.hardwareConcurrency
const TICKS = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

// ---- the batch -----------------------------------------------------------------------------------

/** The k-th permutation (lexicographic) of 0..n-1. */
function permutation(n: number, k: number): number[] {
  const rest = Array.from({ length: n }, (_, i) => i)
  const out: number[] = []
  let f = 1
  for (let i = 2; i < n; i++) f *= i
  for (let i = n - 1; i >= 0; i--) {
    const at = Math.floor(k / f) % rest.length
    out.push(rest.splice(at, 1)[0]!)
    k %= f
    if (i > 0) f /= i
  }
  return out
}

/**
 * FILES distinct 30-second WAVs (16 kHz mono) of real speech: the testdata LibriVox clips (about 25 s
 * in all) joined by ffmpeg in a different order for each file, twice over, and cut 30 s out of that
 * from a different start.
 */
function makeBatch(dir: string, ffmpeg: string): string[] {
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(f => join(LIBRIVOX, f))
  if (clips.length < 3) throw new BenchFailure(`too few recordings in ${LIBRIVOX}; install them with: apt-get install pocketsphinx-testdata`)
  let orders = 1
  for (let i = 2; i <= clips.length; i++) orders *= i
  const paths: string[] = []
  const seen = new Set<string>()
  for (let i = 0; i < FILES; i++) {
    const order = permutation(clips.length, Math.floor((i * orders) / FILES))
    const inputs = [...order, ...order].flatMap(c => ['-i', clips[c]!])
    const labels = Array.from({ length: order.length * 2 }, (_, k) => `[${k}:a]`).join('')
    const start = ((i * 0.7) % 12).toFixed(2)
    const path = join(dir, `speech-${String(i + 1).padStart(2, '0')}.wav`)
    const r = Bun.spawnSync([
      ffmpeg, '-v', 'error', '-y', ...inputs,
      '-filter_complex', `${labels}concat=n=${order.length * 2}:v=0:a=1,atrim=start=${start}:duration=${FILE_SECONDS},asetpts=PTS-STARTPTS[out]`,
      '-map', '[out]', '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', '-map_metadata', '-1', '-fflags', '+bitexact', path,
    ], { stdout: 'ignore', stderr: 'pipe' })
    if (r.exitCode !== 0) throw new BenchFailure(`ffmpeg could not make ${path}: ${r.stderr.toString()}`)
    const bytes = readFileSync(path)
    const seconds = (bytes.length - 44) / 32_000
    if (Math.abs(seconds - FILE_SECONDS) > 0.1) throw new BenchFailure(`${path} holds ${seconds.toFixed(2)} s, not ${FILE_SECONDS} s`)
    const digest = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
    if (seen.has(digest)) throw new BenchFailure(`${path} is the same as an earlier file`)
    seen.add(digest)
    paths.push(path)
  }
  return paths
}

// ---- processes and CPU ---------------------------------------------------------------------------

interface Proc { name: string; proc: Subprocess; logPath: string }

function logTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-15).join('\n')
  } catch {
    return '(no log)'
  }
}

function spawn(name: string, args: string[], env: Record<string, string>, logPath: string): Proc {
  const log = openSync(logPath, 'a')
  const proc = Bun.spawn([process.execPath, 'src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdin: 'ignore', stdout: log, stderr: log })
  closeSync(log)
  return { name, proc, logPath }
}

async function stop(p: Proc): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return
  p.proc.kill('SIGTERM')
  const ended = await Promise.race([p.proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)])
  if (!ended) {
    p.proc.kill('SIGKILL')
    await p.proc.exited
  }
}

async function until<T>(what: string, get: () => T | Promise<T>, ms: number, procs: Proc[]): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms
  for (;;) {
    for (const p of procs) if (p.proc.exitCode !== null) throw new BenchFailure(`${p.name} exited with code ${p.proc.exitCode} while waiting for ${what}:\n${logTail(p.logPath)}`)
    const v = await get()
    if (v) return v as NonNullable<T>
    if (Date.now() > deadline) throw new BenchFailure(`timed out after ${ms / 1000} s waiting for ${what}`)
    await Bun.sleep(100)
  }
}

/** /proc/<pid>/stat fields from the state on (field 3 is index 0). */
function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return s.slice(s.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** CPU seconds of a process: its own, and its children's that it has waited for (ffmpeg, pocketsphinx). */
function cpuOf(pid: number): { own: number; children: number } {
  const f = statFields(pid)
  if (!f) throw new BenchFailure(`process ${pid} is gone; cannot read its CPU time`)
  return { own: (Number(f[11]) + Number(f[12])) / TICKS, children: (Number(f[13]) + Number(f[14])) / TICKS }
}

/** The machine's CPU ticks: all, idle (with I/O wait), stolen by the hypervisor. */
function machineTicks(): { total: number; idle: number; steal: number } {
  const v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
  return { total: v.reduce((a, b) => a + b, 0), idle: v[3]! + v[4]!, steal: v[7]! }
}

/** The engine processes running under the given parents right now, with their thread counts. */
function engineProcesses(parents: Set<number>): number[] {
  const threads: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const f = statFields(Number(d))
    if (!f || !parents.has(Number(f[1]))) continue
    let comm = ''
    try {
      comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim()
    } catch {
      continue
    }
    if (comm.startsWith('pocketsphinx')) threads.push(Number(f[17]))
  }
  return threads
}

// ---- one run -------------------------------------------------------------------------------------

interface RunResult {
  workers: number
  files: number
  database: string
  uploadSeconds: number
  wallSeconds: number
  filesPerMinute: number
  medianToDone: number
  maxToDone: number
  medianInWorker: number
  cpu: { serve: number; workersOwn: number[]; workersChildren: number[]; script: number }
  busy: number
  steal: number
  engineMax: number
  engineThreads: number
}

async function run(workers: number, files: string[], work: string, databaseUrl: string | undefined): Promise<RunResult> {
  const dataDir = join(work, `data-${workers}`)
  mkdirSync(dataDir)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env: Record<string, string> = {
    NOTESVC_DATA_DIR: dataDir, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', PORT: String(port), HOST: '127.0.0.1',
    NOTESVC_RATE_LIMITS: 'read=1000000,write=1000000,processing=1000000', NOTESVC_ACCESS_LOG: '',
    ...(databaseUrl ? { NOTESVC_DATABASE_URL: databaseUrl } : {}),
  }
  const procs: Proc[] = []
  try {
    const serve = spawn('serve', ['serve'], { ...env, NOTESVC_WORKERS: '0' }, join(work, `serve-${workers}.log`))
    procs.push(serve)
    await until('serve to answer /v1/health', async () => {
      try {
        return (await fetch(`${base}/v1/health`)).ok
      } catch {
        return false
      }
    }, 30_000, procs)

    // an API key of a fresh account (so the run starts alike on an empty or a shared database)
    const email = `scale-${workers}-${Date.now()}@bench.invalid`
    const made = Bun.spawnSync([process.execPath, 'src/cli.ts', 'keys', 'create', '--email', email, '--plan', 'pro'], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    const key = made.stdout.toString().trim()
    if (made.exitCode !== 0 || !key) throw new BenchFailure(`keys create failed: ${made.stderr.toString()}`)
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await res.text()
      let json: any
      try {
        json = JSON.parse(text)
      } catch {
        json = text
      }
      return { status: res.status, body: json }
    }

    for (let i = 0; i < workers; i++) procs.push(spawn(`worker ${i + 1}`, ['worker'], { ...env, NOTESVC_WORKERS: '1' }, join(work, `worker-${workers}-${i + 1}.log`)))
    for (const w of procs.slice(1)) await until(`${w.name} to start`, () => readFileSync(w.logPath, 'utf8').includes('notesvc worker started'), 30_000, procs)
    const health = (await call('GET', '/v1/health?detail')).body as { database?: string; workers?: number }
    const database = health.database ?? 'unknown'
    if (databaseUrl && database !== 'postgres') {
      throw new BenchFailure(`NOTESVC_DATABASE_URL is set but the server reports the ${database} back end: this notesvc does not use the URL; run with BENCH_DATABASE=sqlite to measure SQLite`)
    }

    const workerPids = new Set(procs.slice(1).map(p => p.proc.pid))
    const cpu0 = { serve: cpuOf(serve.proc.pid), workers: procs.slice(1).map(p => cpuOf(p.proc.pid)), script: process.cpuUsage(), machine: machineTicks() }
    const t0 = Date.now()

    // the batch goes in as a client would send it, one file after another; workers start on the first at once
    const notes = new Map<string, { uploadAt: number; workAt?: number; doneAt?: number }>()
    let uploading = true
    let abandoned = false
    let engineMax = 0
    let engineThreads = 0
    const watch = (async () => {
      const deadline = t0 + 120_000 + (FILES * FILE_SECONDS * 1000) / workers
      while (!abandoned && (uploading || [...notes.values()].some(n => n.doneAt === undefined))) {
        if (Date.now() > deadline) throw new BenchFailure(`not every file was Done after ${((Date.now() - t0) / 1000).toFixed(0)} s`)
        for (const p of procs) if (p.proc.exitCode !== null) throw new BenchFailure(`${p.name} exited with code ${p.proc.exitCode} during the run:\n${logTail(p.logPath)}`)
        const engines = engineProcesses(workerPids)
        engineMax = Math.max(engineMax, engines.length)
        engineThreads = Math.max(engineThreads, ...engines)
        for (let offset = 0; ; offset += 100) {
          const page = await call('GET', `/v1/notes?limit=100&offset=${offset}`)
          if (page.status !== 200) throw new BenchFailure(`listing notes answered ${page.status}: ${JSON.stringify(page.body)}`)
          for (const n of page.body.data as { id: string; status: string; processingStage: string | null; updatedAt: string }[]) {
            const mine = notes.get(n.id)
            if (!mine) continue
            if (n.status === 'Error') throw new BenchFailure(`note ${n.id} failed: ${JSON.stringify(await call('GET', `/v1/notes/${n.id}/status`))}`)
            // the note's own stamps: when a worker set it converting (or transcribing, if that was first seen), and when Done
            if (mine.workAt === undefined && (n.processingStage === 'converting' || n.processingStage === 'transcribing')) mine.workAt = Date.parse(n.updatedAt)
            if (n.status === 'Done' && mine.doneAt === undefined) mine.doneAt = Date.parse(n.updatedAt)
          }
          if (!page.body.pagination.hasMore) break
        }
        await Bun.sleep(POLL_MS)
      }
    })()
    watch.catch(() => {}) // awaited below; a failure while uploads are still going is not left unhandled
    try {
      for (const path of files) {
        const wav = readFileSync(path)
        const uploadAt = Date.now()
        const up = await call('POST', '/v1/uploads', { fileName: path.split('/').pop(), contentType: 'audio/wav', fileSize: wav.length })
        if (up.status !== 201 && up.status !== 200) throw new BenchFailure(`createUpload answered ${up.status}: ${JSON.stringify(up.body)}`)
        const put = await fetch(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit })
        if (put.status !== 200) throw new BenchFailure(`PUT answered ${put.status}: ${await put.text()}`)
        const done = await call('POST', `/v1/uploads/${up.body.noteId}/complete`)
        if (done.status !== 202) throw new BenchFailure(`complete answered ${done.status}: ${JSON.stringify(done.body)}`)
        notes.set(up.body.noteId, { uploadAt })
      }
    } catch (err) {
      abandoned = true
      throw err
    } finally {
      uploading = false
    }
    const uploadSeconds = (Date.now() - t0) / 1000
    await watch
    const cpu1 = { serve: cpuOf(serve.proc.pid), workers: procs.slice(1).map(p => cpuOf(p.proc.pid)), script: process.cpuUsage(cpu0.script), machine: machineTicks() }

    const all = [...notes.values()]
    const wallSeconds = (Math.max(...all.map(n => n.doneAt!)) - t0) / 1000
    const toDone = all.map(n => (n.doneAt! - n.uploadAt) / 1000)
    const inWorker = all.filter(n => n.workAt !== undefined).map(n => (n.doneAt! - n.workAt!) / 1000)

    // what was made is right: a transcript for every file, no two alike, each upload charged once
    const transcripts = new Set<string>()
    for (const id of notes.keys()) {
      const note = (await call('GET', `/v1/notes/${id}`)).body
      const words = String(note.originalTranscription ?? '').split(/\s+/).filter(Boolean).length
      if (words < 20) throw new BenchFailure(`note ${id} has a transcript of ${words} words`)
      transcripts.add(note.originalTranscription)
    }
    if (transcripts.size !== notes.size) throw new BenchFailure(`${notes.size} files gave only ${transcripts.size} different transcripts`)
    const usage = (await call('GET', '/v1/usage?limit=100')).body
    const charged = (usage.recent as { operation: string; noteId: string | null }[]).filter(r => r.operation === 'completeUpload').map(r => r.noteId!)
    if (charged.length !== notes.size || new Set(charged).size !== notes.size || !charged.every(id => notes.has(id))) {
      throw new BenchFailure(`expected one completeUpload charge per file (${notes.size}), found ${charged.length}`)
    }

    const ticks = cpu1.machine.total - cpu0.machine.total
    return {
      workers, files: notes.size, database, uploadSeconds, wallSeconds,
      filesPerMinute: notes.size / (wallSeconds / 60),
      medianToDone: median(toDone), maxToDone: Math.max(...toDone),
      medianInWorker: inWorker.length ? median(inWorker) : NaN,
      cpu: {
        serve: cpu1.serve.own - cpu0.serve.own,
        workersOwn: cpu1.workers.map((c, i) => c.own - cpu0.workers[i]!.own),
        workersChildren: cpu1.workers.map((c, i) => c.children - cpu0.workers[i]!.children),
        script: (cpu1.script.user + cpu1.script.system) / 1e6,
      },
      busy: ticks ? 1 - (cpu1.machine.idle - cpu0.machine.idle) / ticks : NaN,
      steal: ticks ? (cpu1.machine.steal - cpu0.machine.steal) / ticks : NaN,
      engineMax, engineThreads,
    }
  } finally {
    for (const p of procs.slice(1)) await stop(p)
    if (procs[0]) await stop(procs[0])
  }
}

// ---- the report ----------------------------------------------------------------------------------

const s1 = (x: number) => x.toFixed(1)
const pct = (x: number) => `${(x * 100).toFixed(0)}%`

function describe(r: RunResult): string[] {
  const work = r.cpu.workersChildren.reduce((a, b) => a + b, 0)
  const own = r.cpu.workersOwn.reduce((a, b) => a + b, 0)
  const total = r.cpu.serve + work + own + r.cpu.script
  const label = `${r.workers} worker${r.workers > 1 ? 's' : ''}:`.padEnd(11)
  return [
    `  ${label}wall ${s1(r.wallSeconds)} s (uploads sent in ${r.uploadSeconds.toFixed(2)} s), ${r.filesPerMinute.toFixed(2)} files/minute; per file, median time to Done ${s1(r.medianToDone)} s (max ${s1(r.maxToDone)} s), median time in a worker ${s1(r.medianInWorker)} s`,
    `             CPU seconds: engines (ffmpeg, pocketsphinx) ${r.cpu.workersChildren.map(s1).join(' + ')} (${s1(work / r.files)} a file), worker processes ${r.cpu.workersOwn.map(s1).join(' + ')}, serve ${s1(r.cpu.serve)} (${pct(r.cpu.serve / total)}), this script ${s1(r.cpu.script)}; machine busy ${pct(r.busy)} of ${CORES} cores, stolen ${pct(r.steal)}; pocketsphinx processes at once: at most ${r.engineMax}, ${r.engineThreads} thread${r.engineThreads === 1 ? '' : 's'} each`,
  ]
}

async function main() {
  if (!Number.isInteger(FILES) || FILES < 1 || FILES > 100) throw new BenchFailure(`BENCH_FILES=${process.env.BENCH_FILES} is not valid; use a whole number from 1 to 100`)
  const ffmpeg = process.env.NOTESVC_FFMPEG || Bun.which('ffmpeg')
  if (!ffmpeg) throw new BenchFailure('ffmpeg not found; install it with: apt-get install ffmpeg')
  const engine = findPocketsphinx()
  if ('missing' in engine) throw new BenchFailure(`pocketsphinx: ${engine.missing}; install it with: apt-get install pocketsphinx pocketsphinx-en-us`)

  if (BACKEND !== 'postgres' && BACKEND !== 'sqlite') throw new BenchFailure(`BENCH_DATABASE=${BACKEND}: use postgres or sqlite`)

  const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-scale-'))
  // a private PostgreSQL cluster for the runs, unless a server of the caller's own is named
  let pg: PostgresCluster | null = null
  let pgVersion = ''
  try {
    if (BACKEND === 'postgres' && !DATABASE_URL) {
      process.stderr.write('starting a private PostgreSQL cluster…\n')
      pg = await startPostgres()
      const admin = new Bun.SQL(pg.url, { max: 1 })
      pgVersion = String(((await admin.unsafe('SHOW server_version')) as { server_version: string }[])[0]!.server_version).split(' ')[0]!
      await admin.close()
    }
    process.stderr.write(`making ${FILES} files of ${FILE_SECONDS} s of speech with ffmpeg…\n`)
    const files = makeBatch(work, ffmpeg)

    // the engine by itself on this machine: four files one at a time, then the same four two at once
    // (after one run to warm the caches)
    process.stderr.write('the engine alone: one file at a time, then two at once…\n')
    const pick = (i: number) => files[i % files.length]!
    await pocketsphinxAlone(pick(0))
    let sequential = 0
    for (let i = 1; i <= ENGINE_FILES; i++) sequential += (await pocketsphinxAlone(pick(i))).seconds
    let paired = 0
    for (let i = 1; i <= ENGINE_FILES; i += 2) {
      const started = performance.now()
      await Promise.all([pocketsphinxAlone(pick(i)), pocketsphinxAlone(pick(i + 1))])
      paired += (performance.now() - started) / 1000
    }

    const results: RunResult[] = []
    for (const workers of [1, 2]) {
      process.stderr.write(`${FILES} files through ${workers} worker process${workers > 1 ? 'es' : ''}…\n`)
      // a new database for each run (the nodes migrate it as they start), or the caller's server
      const databaseUrl = pg ? await pg.createDatabase(`notesvc_scale_${workers}`) : DATABASE_URL
      results.push(await run(workers, files, work, databaseUrl))
      process.stderr.write(`  ${s1(results.at(-1)!.wallSeconds)} s\n`)
    }
    const [a, b] = results as [RunResult, RunResult]
    const ratio = b.filesPerMinute / a.filesPerMinute
    const backend = pg ? `${a.database} (a private cluster started by this script, PostgreSQL ${pgVersion}, one new database per run)`
      : DATABASE_URL ? `${a.database} (NOTESVC_DATABASE_URL set)` : `${a.database} (embedded, in the data folder)`
    console.log(`scale benchmark: ${FILES} files x ${FILE_SECONDS} s of speech (pocketsphinx-testdata LibriVox clips, reordered and cut by ffmpeg), PocketSphinx (${POCKETSPHINX_DEFAULTS.hmm}), builtin summaries`)
    console.log(`  database: ${backend}; serve with NOTESVC_WORKERS=0 and notesvc worker processes (NOTESVC_WORKERS=1 each), media on disk in one data folder; ${CORES} cores, bun ${Bun.version}`)
    console.log(`  engine alone (pocketsphinx_continuous, ${ENGINE_FILES} files): ${s1(sequential / ENGINE_FILES)} s per file one at a time, ${s1(paired / (ENGINE_FILES / 2))} s per pair two at once -> the engine's own scaling here ${(sequential / paired).toFixed(2)}`)
    for (const r of results) for (const line of describe(r)) console.log(line)
    const verdict = ratio >= TARGET ? 'PASS' : 'MISS'
    console.log(`  ratio (2 workers / 1 worker) = ${ratio.toFixed(2)} -> target >= ${TARGET} on a 2-core machine: ${verdict}${CORES === 2 ? '' : ` (this machine has ${CORES} cores)`}`)
  } finally {
    await pg?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runBench(import.meta, main)
