/**
 * Binary size and cold start: time from spawning `dist/notesvc serve` in an empty folder to the first
 * byte of GET /v1/health, over several runs, beside the same for `bun run src/cli.ts serve`.
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

/** Milliseconds from spawn to the first byte of /v1/health, on a fresh empty data folder (the default one of an empty home). */
async function coldStart(cmd: string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-cold-'))
  const port = await freePort()
  const started = performance.now()
  const proc = Bun.spawn(cmd, { cwd: dir, env: { ...process.env, PORT: String(port), NOTESVC_DATA_DIR: '', HOME: dir, XDG_DATA_HOME: '' }, stdout: 'ignore', stderr: 'pipe' })
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/health`)
        await res.body?.getReader().read()
        return performance.now() - started
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
const binaryTimes: number[] = []
const sourceTimes: number[] = []
for (let i = 0; i < RUNS; i++) {
  binaryTimes.push(await coldStart([BINARY, 'serve']))
  sourceTimes.push(await coldStart(['bun', 'run', join(ROOT, 'src/cli.ts'), 'serve']))
}
console.log(`binary size:                  ${(statSync(BINARY).size / 1024 / 1024).toFixed(1)} MB (${statSync(BINARY).size} bytes)`)
console.log(`cold start, dist/notesvc:     ${summary(binaryTimes)}`)
console.log(`cold start, bun run (source): ${summary(sourceTimes)}`)
console.log('(each run: a new empty data folder, so the time includes creating the database, migrating it and making the first keys)')
