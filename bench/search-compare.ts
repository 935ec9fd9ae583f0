#!/usr/bin/env bun
/**
 * search.ts's PostgreSQL requests, before and after a change, request by request on the same machine
 * minute: BENCH_BEFORE names a checkout of the older code (with its node_modules). Each library is seeded
 * into SQLite by the older checkout's own seeding code (its bench/list-notes.ts and bench/search.ts), then
 * copied into two databases of one private PostgreSQL cluster, each by its own side's `notesvc db copy`
 * code (the newer one migrates its copy first); each side serves its own. The requests alternate between
 * the sides one at a time (before then after, then after then before, …), so a machine whose speed drifts
 * within minutes (by up to 40% here) slows both alike, where search.ts's runs one after the other do not.
 *
 *   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   BENCH_BEFORE=/tmp/before bun run bench/search-compare.ts
 *   BENCH_BEFORE=/tmp/before BENCH_REQUESTS=400 BENCH_LIBRARIES=uniform bun run bench/search-compare.ts
 *
 * Prints per row both sides' p50 and p99 (ms, one request at a time, send to the last byte of the body)
 * and after / before of each, then the worst search p99 of each library and side.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { copyToPostgres } from '../src/db/copy'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { PATHS, percentile, zipfPaths } from './search'
import { BenchFailure, runBench, startLoggedNotesvc, stopServer, type LoggedServer } from './notesvc-process'

const AFTER = resolve(import.meta.dir, '..')
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : ''
const NOTES = Number(process.env.BENCH_NOTES ?? 10_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300)
const LIBRARIES = (process.env.BENCH_LIBRARIES ?? 'uniform,zipf').split(',').map(s => s.trim()) as ('uniform' | 'zipf')[]
const WARMUP = 30
const SIDES = ['before', 'after'] as const

async function timed(s: LoggedServer, path: string, key: string): Promise<number> {
  const start = performance.now()
  const res = await fetch(s.base + path, { headers: { authorization: `Bearer ${key}` } })
  const body = await res.text()
  if (res.status !== 200) throw new BenchFailure(`${s.name}: GET ${path} answered ${res.status}: ${body.slice(0, 300)}`)
  return performance.now() - start
}

interface BeforeCode {
  seedLibrary(dir: string, size: number): Promise<{ key: string }>
  seedZipfLibrary(dir: string, size: number): Promise<{ key: string }>
  copyToPostgres(o: { sqlitePath: string; targetUrl: string }): Promise<unknown>
}

async function compareLibrary(library: 'uniform' | 'zipf', pg: PostgresCluster, work: string, before: BeforeCode, out: string[], worst: string[]) {
  const seed = join(work, `${library}-seed`)
  mkdirSync(seed)
  process.stderr.write(`${library}: seeding ${NOTES} notes with the code in ${BEFORE}\n`)
  const { key } = library === 'uniform' ? await before.seedLibrary(seed, NOTES) : await before.seedZipfLibrary(seed, NOTES)
  const servers: Partial<Record<(typeof SIDES)[number], LoggedServer>> = {}
  try {
    for (const side of SIDES) {
      const dir = join(work, `${library}-${side}`)
      cpSync(seed, dir, { recursive: true })
      const url = await pg.createDatabase(`compare_${library}_${side}`)
      process.stderr.write(`${library}: copying into PostgreSQL with the ${side} code\n`)
      await (side === 'before' ? before.copyToPostgres : copyToPostgres)({ sqlitePath: join(dir, 'notesvc.db'), targetUrl: url })
      servers[side] = await startLoggedNotesvc(side, { NOTESVC_DATA_DIR: dir, NOTESVC_DATABASE_URL: url }, join(work, `${library}-${side}.log`), args => (side === 'before' ? ['sh', '-c', `cd '${BEFORE}' && exec '${args[0]}' src/cli.ts serve`] : args))
    }
    const paths = library === 'uniform' ? PATHS.uniform : zipfPaths()
    out.push('', `${library} library (PostgreSQL): ${REQUESTS} requests a side per row, alternating, after ${WARMUP} warm-up each`)
    out.push(`  ${'request'.padEnd(30)}${'before p50 / p99'.padStart(20)}${'after p50 / p99'.padStart(20)}${'after/before p50, p99'.padStart(24)}`)
    const worstOf = { before: 0, after: 0 }
    for (const [label, path] of paths) {
      process.stderr.write(`${library}: ${label}\n`)
      const times = { before: [] as number[], after: [] as number[] }
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        for (const side of i % 2 === 0 ? SIDES : [...SIDES].reverse()) {
          const ms = await timed(servers[side]!, path, key)
          if (i >= WARMUP) times[side].push(ms)
        }
      }
      const [b, a] = SIDES.map(side => times[side].sort((x, y) => x - y)) as [number[], number[]]
      const [b50, b99, a50, a99] = [percentile(b, 50), percentile(b, 99), percentile(a, 50), percentile(a, 99)]
      if (!label.startsWith('list')) {
        worstOf.before = Math.max(worstOf.before, b99)
        worstOf.after = Math.max(worstOf.after, a99)
      }
      out.push(`  ${label.padEnd(30)}${`${b50.toFixed(2)} / ${b99.toFixed(2)}`.padStart(20)}${`${a50.toFixed(2)} / ${a99.toFixed(2)}`.padStart(20)}${`${(a50 / b50).toFixed(2)}, ${(a99 / b99).toFixed(2)}`.padStart(24)}`)
    }
    worst.push(`  ${library}: worst search p99 before ${worstOf.before.toFixed(2)} ms, after ${worstOf.after.toFixed(2)} ms: after/before ${(worstOf.after / worstOf.before).toFixed(2)}`)
  } finally {
    for (const s of Object.values(servers)) await stopServer(s)
  }
}

async function main() {
  if (!BEFORE) throw new BenchFailure('BENCH_BEFORE: the folder of a checkout of the older code, with its node_modules (see the top of this file)')
  if (!Number.isInteger(REQUESTS) || REQUESTS < 100) throw new BenchFailure(`BENCH_REQUESTS=${process.env.BENCH_REQUESTS}: a whole number of at least 100`)
  const skip = postgresUnavailable()
  if (skip !== null) throw new BenchFailure(`PostgreSQL is needed: ${skip}`)
  const before: BeforeCode = {
    ...((await import(join(BEFORE, 'bench/list-notes.ts'))) as Pick<BeforeCode, 'seedLibrary'>),
    ...((await import(join(BEFORE, 'bench/search.ts'))) as Pick<BeforeCode, 'seedZipfLibrary'>),
    ...((await import(join(BEFORE, 'src/db/copy.ts'))) as Pick<BeforeCode, 'copyToPostgres'>),
  }
  const rev = (dir: string) => Bun.spawnSync(['git', '-C', dir, 'rev-parse', '--short', 'HEAD']).stdout.toString().trim()
  const load = () => loadavg().map(x => x.toFixed(1)).join(' ')
  const out = [`search compare: before ${rev(BEFORE)} (${BEFORE}), after ${rev(AFTER)}; ${NOTES} notes per library, ${navigator.hardwareConcurrency} cores, load average at start ${load()}`]
  const worst: string[] = []
  const work = mkdtempSync(join(tmpdir(), 'notesvc-search-compare-'))
  const pg = await startPostgres()
  try {
    for (const library of LIBRARIES) await compareLibrary(library, pg, work, before, out, worst)
  } finally {
    await pg.stop()
    rmSync(work, { recursive: true, force: true })
  }
  console.log([...out, '', `load average at the end ${load()}`, ...worst].join('\n'))
}

runBench(import.meta, main)
