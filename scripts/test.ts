#!/usr/bin/env bun
/**
 * The README's test command (package.json "test", called by .ci/run): runs every test file, spread
 * over N `bun test` processes that run side by side (most tests wait on processes, PostgreSQL, ffmpeg
 * or the network, so two processes on two cores finish well before one). Files are dealt to the
 * processes by their measured durations (test/timings.json; the longest first, each to the process
 * with the least time so far), so the processes end close together.
 *
 * Each process's output is printed whole when it ends (a failure's error stays right above its
 * "(fail)" line), then the counts of all of them, in bun's words (" N pass", " N fail", …, "Ran N
 * tests across M files."), which .ci/run reads. Exits 1 when any process fails.
 *
 *   bun scripts/test.ts                     every file, 2 processes (1 on a one-core machine)
 *   bun scripts/test.ts --shards 3          3 processes
 *   bun scripts/test.ts test/db test/jobs   only the files whose path contains one of these
 *   bun scripts/test.ts --update-timings    also writes the measured durations to test/timings.json
 *
 * Other arguments (such as `-t pattern`) go to every `bun test`. One file alone: `bun test test/x.test.ts`.
 */
import { availableParallelism, tmpdir } from 'node:os'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')
const TIMINGS = join(ROOT, 'test/timings.json')
/** bun's own timeout for one test (bunfig.toml says the same); integration tests start servers and builds */
const TEST_TIMEOUT_MS = '120000'

interface Options { shards: number; updateTimings: boolean; filters: string[]; passThrough: string[] }

function parseArgs(argv: string[]): Options {
  const o: Options = { shards: Math.min(2, availableParallelism()), updateTimings: false, filters: [], passThrough: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--shards') {
      o.shards = Number(argv[++i])
      if (!Number.isInteger(o.shards) || o.shards < 1) throw new Error(`--shards wants a whole number of processes, 1 or more (got ${argv[i]})`)
    } else if (a === '--update-timings') o.updateTimings = true
    else if (a === '--') continue
    else if (a.startsWith('-')) {
      o.passThrough.push(a)
      // a flag's value (`-t name`, `--bail 1`) goes with it
      if (!a.includes('=') && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('-') && !/\.test\.|^test\//.test(argv[i + 1]!)) o.passThrough.push(argv[++i]!)
    } else o.filters.push(a.replace(/^\.\//, ''))
  }
  return o
}

function testFiles(filters: string[]): string[] {
  const all = [...new Bun.Glob('test/**/*.test.ts').scanSync({ cwd: ROOT })].sort()
  const chosen = filters.length ? all.filter(f => filters.some(p => f.includes(p))) : all
  if (!chosen.length) throw new Error(`no test file matches ${filters.join(' ')}: give a folder or part of a path under test/`)
  return chosen
}

function readTimings(): Record<string, number> {
  return existsSync(TIMINGS) ? JSON.parse(readFileSync(TIMINGS, 'utf8')) : {}
}

/** Longest first, each to the shard with the least time so far; a file not yet measured counts as the median. */
export function dealFiles(files: string[], timings: Record<string, number>, shards: number): string[][] {
  const known = Object.values(timings).sort((a, b) => a - b)
  const median = known.length ? known[Math.floor(known.length / 2)]! : 1
  const cost = (f: string) => timings[f] ?? median
  const out = Array.from({ length: Math.min(shards, files.length) }, () => ({ files: [] as string[], total: 0 }))
  for (const f of [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b))) {
    const least = out.reduce((m, s) => (s.total < m.total ? s : m))
    least.files.push(f)
    least.total += cost(f)
  }
  return out.map(s => s.files.sort())
}

interface ShardResult { output: string; code: number; seconds: number; junit: string }

async function runShard(files: string[], passThrough: string[], junit: string, name: string): Promise<ShardResult> {
  const started = performance.now()
  const cmd = ['bun', 'test', '--timeout', TEST_TIMEOUT_MS, '--reporter=junit', `--reporter-outfile=${junit}`, ...passThrough, ...files.map(f => `./${f}`)]
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  // both streams into one text, in the order the chunks arrive (bun writes its report to stderr)
  const chunks: string[] = []
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    let partLine = ''
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      chunks.push(text)
      // a line as each file starts, so a long run shows it is alive (the file's output comes at the end)
      const lines = (partLine + text).split('\n')
      partLine = lines.pop()!
      for (const line of lines) if (/^test\/\S+\.test\.ts:$/.test(line)) console.log(`${name} started ${line.slice(0, -1)}`)
    }
  }
  await Promise.all([drain(proc.stdout), drain(proc.stderr)])
  const code = await proc.exited
  return { output: chunks.join(''), code, seconds: (performance.now() - started) / 1000, junit }
}

const COUNT_LINE = /^ (\d+) (pass|skip|todo|fail|errors?|snapshots?|expect\(\) calls)$/
const RAN_LINE = /^Ran (\d+) tests? across (\d+) files?\./
const FAILED_LIST = /^\d+ tests? failed:$/

/** Splits bun's closing counts from the rest of its output, and reads them. */
function splitSummary(output: string): { body: string; counts: Map<string, number>; tests: number; files: number; failedList: string[] } {
  const lines = output.trimEnd().split('\n')
  const counts = new Map<string, number>()
  let tests = 0
  let files = 0
  let end = lines.length
  while (end > 0) {
    const line = lines[end - 1]!
    const count = COUNT_LINE.exec(line)
    const ran = RAN_LINE.exec(line)
    if (count) counts.set(count[2]!, (counts.get(count[2]!) ?? 0) + Number(count[1]))
    else if (ran) { tests = Number(ran[1]); files = Number(ran[2]) }
    else if (line.trim() !== '') break
    end--
  }
  // bun may list the failed tests again above its counts ("2 tests failed:" and their "(fail)" lines):
  // taken out here; every process's failures are listed once, above the summed counts
  const failedAt = lines.slice(0, end).findLastIndex(l => FAILED_LIST.test(l))
  if (failedAt >= 0) end = failedAt
  const body = lines.slice(0, end)
  return { body: body.join('\n'), counts, tests, files, failedList: body.filter(l => l.startsWith('(fail)')) }
}

/** Each file's duration in seconds, from a shard's JUnit report. */
function junitDurations(path: string): Record<string, number> {
  if (!existsSync(path)) return {}
  const out: Record<string, number> = {}
  for (const m of readFileSync(path, 'utf8').matchAll(/<testsuite name="([^"]+)" file="[^"]*"[^>]*? time="([\d.]+)"/g)) {
    out[m[1]!.replace(/^\.\//, '')] = Math.round(Number(m[2]) * 10) / 10
  }
  return out
}

const LABELS = ['pass', 'skip', 'todo', 'fail', 'error', 'errors', 'snapshot', 'snapshots', 'expect() calls']

async function main() {
  const o = parseArgs(Bun.argv.slice(2))
  const timings = readTimings()
  const shards = dealFiles(testFiles(o.filters), timings, o.shards)
  const reports = mkdtempSync(join(tmpdir(), 'notesvc-test-run-'))
  const started = performance.now()
  console.log(`${shards.flat().length} test files in ${shards.length} processes`)
  const results = await Promise.all(shards.map((files, i) => runShard(files, o.passThrough, join(reports, `shard-${i + 1}.xml`), `process ${i + 1}/${shards.length}`).then(r => {
    // printed whole as each ends, so one process's lines never mix with another's
    const { body, counts, tests, files: ran, failedList } = splitSummary(r.output)
    console.log(`\n──── process ${i + 1}/${shards.length}: ${files.length} files ────\n${body}`)
    console.log(`──── process ${i + 1}/${shards.length}: ${counts.get('pass') ?? 0} pass, ${counts.get('fail') ?? 0} fail, ${tests} tests across ${ran} files, exit ${r.code}, ${r.seconds.toFixed(1)} s ────`)
    return { ...r, counts, tests, files: ran, failedList, expectedFiles: files.length }
  })))

  const total = new Map<string, number>()
  for (const r of results) for (const [k, v] of r.counts) total.set(k, (total.get(k) ?? 0) + v)
  // a process that ended without its counts (a crash) or that ran fewer files than it was given counts as a failure
  const broken = results.filter(r => !r.counts.has('pass') || r.files !== r.expectedFiles)
  if (broken.length) total.set('fail', (total.get('fail') ?? 0) + broken.length)
  if (o.updateTimings) {
    const measured = Object.assign({}, ...results.map(r => junitDurations(r.junit))) as Record<string, number>
    const all = testFiles([])
    const merged = Object.fromEntries(all.filter(f => f in measured || f in timings).map(f => [f, measured[f] ?? timings[f]!]))
    writeFileSync(TIMINGS, `${JSON.stringify(merged, null, 2)}\n`)
    console.log(`\nwrote ${Object.keys(measured).length} measured durations to test/timings.json`)
  }
  rmSync(reports, { recursive: true, force: true })

  console.log('')
  const failedList = results.flatMap(r => r.failedList)
  if (failedList.length) console.log(`${failedList.length} tests failed:\n${failedList.join('\n')}\n`)
  for (const label of LABELS) if (total.has(label) || label === 'pass' || label === 'fail') console.log(` ${total.get(label) ?? 0} ${label}`)
  const tests = results.reduce((n, r) => n + r.tests, 0)
  const files = results.reduce((n, r) => n + r.files, 0)
  console.log(`Ran ${tests} test${tests === 1 ? '' : 's'} across ${files} file${files === 1 ? '' : 's'}. [${((performance.now() - started) / 1000).toFixed(2)}s]`)
  process.exit(results.some(r => r.code !== 0) || broken.length ? 1 : 0)
}

if (import.meta.main) await main()
