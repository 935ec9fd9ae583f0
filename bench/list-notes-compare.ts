#!/usr/bin/env bun
/**
 * list-notes.ts's requests, before and after a change, on the same library and the same machine minute:
 * BENCH_BEFORE names a checkout of the older code (with its node_modules). Its own seeding code
 * (bench/list-notes.ts there) seeds the library, so the schema is the older one; each side serves its
 * own copy (the newer code migrates its copy on start). Rounds alternate the sides (before, after, then
 * after, before, …), so a machine whose speed drifts within the hour (up to 40% here) slows both alike.
 *
 *   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   BENCH_BEFORE=/tmp/before bun run bench/list-notes-compare.ts
 *   BENCH_SIZES=1000,10000 BENCH_SECONDS=5 BENCH_ROUNDS=6 BENCH_BEFORE=/tmp/before bun run bench/list-notes-compare.ts
 *
 * Rows, each at every size: the first page (GET /v1/notes?limit=50) and the varied pages mixed (every
 * filter of list-notes.ts's varied mode at random offsets, 500 paths each), with the read cache on (as
 * shipped) and off (every request queries SQLite). wrk -t1 -c2 on one core of two, the server on the other
 * where taskset exists. Each round measures both sides one after the other, so after / before is taken
 * round by round and its median printed. The noise of a row is how much the older code's own rounds
 * differ: their interquartile range over their median. "No slower than its noise" holds when the median
 * after / before >= 1 - noise.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Subprocess } from 'bun'
import { variedFilters, variedPaths, type seedLibrary } from './list-notes'
import { BenchFailure, freePort, runBench } from './notesvc-process'
import { CAN_PIN } from './lib/wrk'
import { seededRandom } from '../test/fixtures/random'

const AFTER = resolve(import.meta.dir, '..')
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : ''
const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SIDES = ['before', 'after'] as const
type Side = (typeof SIDES)[number]

interface Served { proc: Subprocess; base: string }

async function serve(cwd: string, dataDir: string, readCache: 'on' | 'off'): Promise<Served> {
  const port = await freePort()
  const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', 'serve'], {
    cwd,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', NOTESVC_DATA_DIR: dataDir, NOTESVC_READ_CACHE: readCache, NOTESVC_WORKERS: '0', NOTESVC_RATE_LIMITS: 'read=1000000000,write=1000000000,processing=1000000000' },
    stdin: 'ignore', stdout: 'ignore', stderr: 'ignore',
  })
  if (CAN_PIN) Bun.spawnSync(['taskset', '-a', '-p', '-c', '1', String(proc.pid)])
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new BenchFailure(`the server in ${cwd} exited with code ${proc.exitCode}: start it by hand there (bun run src/cli.ts serve) to see why`)
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return { proc, base }
    } catch {
      // not listening yet
    }
    await Bun.sleep(50)
  }
  throw new BenchFailure(`the server in ${cwd} did not answer /v1/health within 30 s`)
}

/** requests per second of one wrk run (after a 1 s warm-up run), every answer checked 2xx by wrk's count */
function wrkRate(url: string, key: string, script: string | null): number {
  const args = ['wrk', '-t1', '-c2', '-H', `Authorization: Bearer ${key}`, ...(script ? ['-s', script] : [])]
  const pin = CAN_PIN ? ['taskset', '-c', '0'] : []
  Bun.spawnSync([...pin, ...args, '-d1s', url])
  const out = Bun.spawnSync([...pin, ...args, `-d${SECONDS}s`, url]).stdout.toString()
  if (/Non-2xx/.test(out)) throw new BenchFailure(`wrk saw answers other than 2xx from ${url}:\n${out}`)
  const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  if (!Number.isFinite(rate)) throw new BenchFailure(`wrk printed no rate:\n${out}`)
  return rate
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
/** the interquartile range over the median */
function spread(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))]!
  return (at(0.75) - at(0.25)) / median(xs)
}

async function compareSize(size: number, out: string[]) {
  const work = mkdtempSync(join(tmpdir(), `notesvc-compare-${size}-`))
  const servers: Served[] = []
  try {
    const before = (await import(join(BEFORE, 'bench/list-notes.ts'))) as { seedLibrary: typeof seedLibrary }
    const end = Date.now()
    process.stderr.write(`N=${size}: seeding with the code in ${BEFORE}\n`)
    const lib = await before.seedLibrary(join(work, 'seed'), size)
    const rand = seededRandom(size + 1) // as list-notes.ts's varied mode
    const paths = variedFilters(lib, end).flatMap(f => variedPaths(f, lib.notes.filter(f.matches).length, 500, rand))
    const mixed = join(work, 'mixed.lua')
    writeFileSync(mixed, `local paths = {\n${paths.map(p => `  ${JSON.stringify(p)},`).join('\n')}\n}\nlocal n = #paths\nmath.randomseed(7)\nrequest = function()\n  return wrk.format(nil, paths[math.random(n)])\nend\n`)
    const at: Record<Side, Record<'on' | 'off', Served>> = { before: {} as never, after: {} as never }
    for (const side of SIDES) {
      for (const cache of ['on', 'off'] as const) {
        const dir = join(work, `${side}-${cache}`)
        cpSync(join(work, 'seed'), dir, { recursive: true })
        const s = await serve(side === 'before' ? BEFORE : AFTER, dir, cache)
        servers.push(s)
        at[side][cache] = s
      }
    }
    const rows = [
      { name: 'first page, read cache on', cache: 'on' as const, path: '/v1/notes?limit=50', script: null },
      { name: 'first page, read cache off', cache: 'off' as const, path: '/v1/notes?limit=50', script: null },
      { name: 'varied pages mixed, cache on', cache: 'on' as const, path: '/v1/notes', script: mixed },
      { name: 'varied pages mixed, cache off', cache: 'off' as const, path: '/v1/notes', script: mixed },
    ]
    const rates = rows.map(() => ({ before: [] as number[], after: [] as number[] }))
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`N=${size}: round ${round + 1}/${ROUNDS}\n`)
      rows.forEach((row, i) => {
        for (const side of round % 2 === 0 ? SIDES : [...SIDES].reverse()) rates[i]![side].push(wrkRate(at[side][row.cache].base + row.path, lib.key, row.script))
      })
    }
    rows.forEach((row, i) => {
      const r = rates[i]!
      const ratio = median(r.after.map((x, round) => x / r.before[round]!))
      const noise = spread(r.before)
      out.push(`${size.toLocaleString('en-US').padStart(7)}  ${row.name.padEnd(31)}${Math.round(median(r.before)).toLocaleString('en-US').padStart(9)}${Math.round(median(r.after)).toLocaleString('en-US').padStart(9)}${ratio.toFixed(2).padStart(8)}${`±${noise.toFixed(2)}`.padStart(8)}  ${ratio >= 1 - noise ? 'yes' : 'NO'}   (before ${r.before.map(Math.round).join(' ')}; after ${r.after.map(Math.round).join(' ')})`)
    })
  } finally {
    for (const s of servers) s.proc.kill()
    await Promise.all(servers.map(s => s.proc.exited))
    rmSync(work, { recursive: true, force: true })
  }
}

async function main() {
  if (!BEFORE) throw new BenchFailure('BENCH_BEFORE: the folder of a checkout of the older code, with its node_modules (see the top of this file)')
  if (!SIZES.every(n => Number.isInteger(n) && n >= 100)) throw new BenchFailure(`BENCH_SIZES=${process.env.BENCH_SIZES}: whole numbers of at least 100, comma-separated`)
  const rev = (dir: string) => Bun.spawnSync(['git', '-C', dir, 'rev-parse', '--short', 'HEAD']).stdout.toString().trim()
  const out = [
    `list-notes compare: before ${rev(BEFORE)} (${BEFORE}), after ${rev(AFTER)}; ${ROUNDS} rounds of ${SECONDS} s alternating, wrk -t1 -c2${CAN_PIN ? ', wrk on core 0 and the servers on core 1' : ''}`,
    `  notes  row                              before    after   after/before   noise  no slower than its noise`,
  ]
  for (const size of SIZES) await compareSize(size, out)
  console.log(out.join('\n'))
}

runBench(import.meta, main)
