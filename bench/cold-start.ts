/**
 * Binary size and cold start: time from spawning `dist/notesvc serve` in an empty folder to the first
 * byte of GET /v1/health, over several runs, beside the same for `bun run src/cli.ts serve`; then the
 * median of each phase the server reports with NOTESVC_STARTUP_TIMING=1 (src/startup-timing.ts).
 * BASELINE=path/to/an/older/notesvc runs that binary too, interleaved with dist/notesvc, so that a
 * busy machine slows both alike; several, comma-separated, run in turn the same way. SOURCE=0 leaves
 * out the (slow) source runs.
 * Run: bun run build && bun run bench/cold-start.ts   (RUNS=10 by default)
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')
const BINARY = join(ROOT, 'dist', 'notesvc')
const RUNS = Number(process.env.RUNS ?? 10)

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/** phase → the times it took in each run, from the `startup: <phase> <ms> ms` lines */
const phases = new Map<string, number[]>()

function notePhases(stderr: string): void {
  for (const m of stderr.matchAll(/^startup: (.+?) ([\d.]+) ms \(at/gm)) {
    const list = phases.get(m[1]!) ?? []
    list.push(Number(m[2]))
    phases.set(m[1]!, list)
  }
}

/** Waits (up to 2 s) until health says a job worker runs: serve starts them a moment after it listens. */
async function workersRunning(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const health = (await (await fetch(`http://127.0.0.1:${port}/v1/health?detail=1`)).json()) as { workers?: number }
    if ((health.workers ?? 0) >= 1) return
    await Bun.sleep(20)
  }
}

/** Milliseconds from spawn to the first byte of /v1/health, on a fresh empty data folder (the default one of an empty home). */
async function coldStart(cmd: string[], timing = false): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-cold-'))
  const port = await freePort()
  const started = performance.now()
  const proc = Bun.spawn(cmd, { cwd: dir, env: { ...process.env, PORT: String(port), NOTESVC_DATA_DIR: '', HOME: dir, XDG_DATA_HOME: '', ...(timing ? { NOTESVC_STARTUP_TIMING: '1' } : {}) }, stdout: 'ignore', stderr: 'pipe' })
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/health`)
        await res.body?.getReader().read()
        const took = performance.now() - started
        // the phases are reported once the job workers run, a moment after the first answer
        if (timing) await workersRunning(port)
        return took
      } catch {
        if (proc.exitCode !== null) {
          const said = (await new Response(proc.stderr).text()).trim().split('\n').slice(-5).join('\n')
          throw new Error(`${cmd.join(' ')} exited with ${proc.exitCode}; its last words:\n${said}`)
        }
        if (performance.now() - started > 20_000) throw new Error('no answer within 20 s')
        await Bun.sleep(2)
      }
    }
  } finally {
    proc.kill()
    await proc.exited
    if (timing) notePhases(await new Response(proc.stderr).text())
    rmSync(dir, { recursive: true, force: true })
  }
}

function summary(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  return `median ${median.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms (${times.length} runs)`
}

if (!existsSync(BINARY)) {
  console.error('dist/notesvc is missing; run: bun run build')
  process.exit(1)
}
const BASELINES = (process.env.BASELINE ?? '').split(',').filter(Boolean)
const WITH_SOURCE = process.env.SOURCE !== '0'
const binaryTimes: number[] = []
const baselineTimes = BASELINES.map(() => [] as number[])
const sourceTimes: number[] = []
for (let i = 0; i < RUNS; i++) {
  binaryTimes.push(await coldStart([BINARY, 'serve']))
  for (const [b, baseline] of BASELINES.entries()) baselineTimes[b]!.push(await coldStart([baseline, 'serve']))
  if (WITH_SOURCE) sourceTimes.push(await coldStart(['bun', 'run', join(ROOT, 'src/cli.ts'), 'serve']))
}
// The phases come from separate runs, so that writing them is not in the times above.
for (let i = 0; i < RUNS; i++) await coldStart([BINARY, 'serve'], true)
console.log(`binary size:                  ${(statSync(BINARY).size / 1024 / 1024).toFixed(1)} MB (${statSync(BINARY).size} bytes)`)
console.log(`cold start, dist/notesvc:     ${summary(binaryTimes)}`)
for (const [b, baseline] of BASELINES.entries()) {
  console.log(`cold start, ${baseline} (${(statSync(baseline).size / 1024 / 1024).toFixed(1)} MB): ${summary(baselineTimes[b]!)}`)
}
if (WITH_SOURCE) console.log(`cold start, bun run (source): ${summary(sourceTimes)}`)
console.log('\nwhere dist/notesvc spends its start (median of each phase; the rest of the time to the first byte is the request itself):')
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const [phase, times] of phases) console.log(`  ${phase.padEnd(30)} ${median(times).toFixed(1).padStart(6)} ms`)
if (phases.size === 0) console.log('  (the binary printed no startup: lines; it predates NOTESVC_STARTUP_TIMING)')
console.log('(each run: a new empty data folder, so the time includes creating the database, migrating it and making the first keys)')
