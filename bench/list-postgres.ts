#!/usr/bin/env bun
/**
 * GET /v1/notes?limit=50 on PostgreSQL at 100,000 notes, beside the same library on SQLite: req/s,
 * p50 and p99 from wrk, with the read cache as shipped and with it off. See bench/README.md.
 *
 *   bun run bench/list-postgres.ts                               # 100,000 notes, 3 rounds of 10 s
 *   BENCH_NOTES=10000 BENCH_SECONDS=5 BENCH_ROUNDS=1 bun run bench/list-postgres.ts
 *   BENCH_DATABASES=sqlite bun run bench/list-postgres.ts        # one back end only
 *
 * The library is made once: seeded into SQLite in one transaction by the seeding of list-notes.ts (one
 * account, a live key, notes with ~2,000-character transcripts over three years, some in folders), then
 * copied into a private PostgreSQL cluster (initdb and pg_ctl into a temporary folder, as the tests do)
 * with `notesvc db copy`'s own code: multi-row INSERTs in one transaction, checked before it commits.
 * So both servers hold the same rows, ids and dates, and must answer the same first page (checked).
 *
 * Needs wrk and PostgreSQL's binaries (apt-get install wrk postgresql).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyToPostgres } from '../src/db/copy'
import { startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { seedLibrary } from './list-notes'
import { BenchFailure, runBench, startLoggedNotesvc, stopServer, type LoggedServer } from './notesvc-process'

const PATH = '/v1/notes?limit=50'
const NOTES = Number(process.env.BENCH_NOTES ?? 100_000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const DATABASES = (process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',').map(s => s.trim())
const WARMUP_SECONDS = 2
const TARGET_P99_MS = 10
/** With taskset and two or more cores, the notesvc servers run on core 1 and wrk on core 0 (PostgreSQL floats). */
const PIN = Bun.which('taskset') !== null && navigator.hardwareConcurrency >= 2
const pinned = (core: number, args: string[]) => (PIN ? ['taskset', '-c', String(core), ...args] : args)

interface WrkResult { requestsPerSec: number; p50Ms: number; p99Ms: number }
type Server = LoggedServer

const UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 }

function parseWrk(output: string): WrkResult {
  const non2xx = /Non-2xx or 3xx responses:\s*(\d+)/.exec(output)
  if (non2xx) throw new BenchFailure(`wrk saw ${non2xx[1]} non-2xx/3xx responses:\n${output}`)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  if (socket && socket.slice(1).some(n => n !== '0')) throw new BenchFailure(`wrk saw ${socket[0]}:\n${output}`)
  const latency = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output)
    if (!m) throw new BenchFailure(`wrk output has no ${p}% latency:\n${output}`)
    return Number(m[1]) * UNITS_MS[m[2]!]!
  }
  const rps = /Requests\/sec:\s*([\d.]+)/.exec(output)
  if (!rps) throw new BenchFailure(`wrk output has no Requests/sec:\n${output}`)
  return { requestsPerSec: Number(rps[1]), p50Ms: latency('50'), p99Ms: latency('99') }
}

async function wrk(url: string, seconds: number, key: string): Promise<WrkResult> {
  const args = pinned(0, ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-H', `Authorization: Bearer ${key}`, url])
  const proc = Bun.spawn(args, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new BenchFailure(`wrk exited with code ${code}:\n${out}${err}`)
  return parseWrk(out)
}

/** The first page once: a 200 with 50 notes; its body. */
async function firstPage(s: Server, key: string): Promise<string> {
  const res = await fetch(s.base + PATH, { headers: { authorization: `Bearer ${key}` } })
  const body = await res.text()
  if (res.status !== 200) throw new BenchFailure(`${s.name}: GET ${PATH} answered ${res.status}: ${body.slice(0, 500)}`)
  const n = (JSON.parse(body) as { data?: unknown[] }).data?.length
  if (n !== 50) throw new BenchFailure(`${s.name}: GET ${PATH} returned ${n} notes, not 50`)
  return body
}

async function main() {
  if (!Number.isInteger(NOTES) || NOTES < 50) throw new BenchFailure(`BENCH_NOTES=${process.env.BENCH_NOTES}: a whole number of at least 50`)
  if (DATABASES.some(d => d !== 'sqlite' && d !== 'postgres') || DATABASES.length === 0) throw new BenchFailure(`BENCH_DATABASES=${process.env.BENCH_DATABASES}: sqlite, postgres or both`)
  if (!Bun.which('wrk')) throw new BenchFailure('wrk not found: apt-get install wrk')
  const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-pg-list-'))
  const servers: Server[] = []
  let pg: PostgresCluster | null = null
  try {
    const sqliteDir = join(work, 'sqlite')
    mkdirSync(sqliteDir)
    process.stderr.write(`seeding ${NOTES} notes into SQLite…\n`)
    let t = performance.now()
    const { key } = await seedLibrary(sqliteDir, NOTES)
    const seedSeconds = (performance.now() - t) / 1000
    const lines: string[] = []
    lines.push(`list benchmark: GET ${PATH} at ${NOTES} notes (one account; ~2,000-character transcripts), wrk -t1 -c${CONNECTIONS}, ${ROUNDS} round${ROUNDS > 1 ? 's' : ''} of ${SECONDS} s (median run), ${navigator.hardwareConcurrency} cores${PIN ? ' (notesvc on core 1, wrk on core 0, PostgreSQL floating)' : ''}, bun ${Bun.version}`)
    lines.push(`  seeded into SQLite in ${seedSeconds.toFixed(1)} s (one transaction)`)
    process.stderr.write(`${lines.at(-1)!.trim()}\n`)

    const configs: { name: string; env: Record<string, string> }[] = []
    if (DATABASES.includes('sqlite')) {
      configs.push({ name: 'sqlite', env: { NOTESVC_DATA_DIR: sqliteDir } }, { name: 'sqlite, cache off', env: { NOTESVC_DATA_DIR: sqliteDir, NOTESVC_READ_CACHE: 'off' } })
    }
    if (DATABASES.includes('postgres')) {
      process.stderr.write('starting a private PostgreSQL cluster and copying the library into it…\n')
      pg = await startPostgres()
      const url = await pg.createDatabase('notesvc_list')
      t = performance.now()
      const copied = await copyToPostgres({ sqlitePath: join(sqliteDir, 'notesvc.db'), targetUrl: url })
      const admin = new Bun.SQL(pg.url, { max: 1 })
      const version = String(((await admin.unsafe('SHOW server_version')) as { server_version: string }[])[0]!.server_version).split(' ')[0]
      await admin.close()
      const rows = copied.tables.reduce((s, x) => s + x.rows, 0)
      lines.push(`  copied into PostgreSQL ${version} (private cluster, fsync off) in ${((performance.now() - t) / 1000).toFixed(1)} s: ${rows} rows, multi-row INSERTs in one transaction, checked before commit`)
      process.stderr.write(`${lines.at(-1)!.trim()}\n`)
      for (const [i, name] of ['postgres', 'postgres, cache off'].entries()) {
        const dir = join(work, `pg-${i}`)
        mkdirSync(dir)
        configs.push({ name, env: { NOTESVC_DATA_DIR: dir, NOTESVC_DATABASE_URL: url, ...(i === 1 ? { NOTESVC_READ_CACHE: 'off' } : {}) } })
      }
    }

    let body: string | null = null
    for (const c of configs) {
      const s = await startLoggedNotesvc(c.name, c.env, join(work, `${c.name.replace(/\W+/g, '-')}.log`), args => pinned(1, args))
      servers.push(s)
      const page = await firstPage(s, key)
      if (body !== null && page !== body) throw new BenchFailure(`${c.name} answered a different first page than ${configs[0]!.name}`)
      body = page
      if (c.env.NOTESVC_DATABASE_URL) {
        const health = (await (await fetch(`${s.base}/v1/health?detail`)).json()) as { database?: string }
        if (health.database !== 'postgres') throw new BenchFailure(`${c.name} reports the ${health.database} back end: this notesvc does not run on PostgreSQL`)
      }
    }

    // the servers take turns, round after round, so a slow moment of the machine hits them alike
    const runs = new Map<string, WrkResult[]>(servers.map(s => [s.name, []]))
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of servers) {
        process.stderr.write(`round ${round}/${ROUNDS}: ${s.name}\n`)
        await wrk(s.base + PATH, WARMUP_SECONDS, key)
        runs.get(s.name)!.push(await wrk(s.base + PATH, SECONDS, key))
      }
    }
    const median = (rs: WrkResult[]) => [...rs].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[rs.length >> 1]!
    lines.push(`  first page ${Buffer.byteLength(body!)} bytes, the same from every server`)
    lines.push(`  ${'server'.padEnd(20)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`)
    const results = new Map<string, WrkResult>()
    for (const s of servers) {
      const r = median(runs.get(s.name)!)
      results.set(s.name, r)
      lines.push(`  ${s.name.padEnd(20)} ${r.requestsPerSec.toFixed(0).padStart(8)} ${r.p50Ms.toFixed(2).padStart(8)} ${r.p99Ms.toFixed(2).padStart(8)}`)
    }
    for (const name of ['postgres', 'postgres, cache off']) {
      const r = results.get(name)
      if (!r) continue
      const beside = results.get(name.replace('postgres', 'sqlite'))
      lines.push(`  ${name}: p99 ${r.p99Ms.toFixed(2)} ms -> target < ${TARGET_P99_MS} ms: ${r.p99Ms < TARGET_P99_MS ? 'PASS' : 'MISS'}${beside ? `; ${(r.requestsPerSec / beside.requestsPerSec).toFixed(2)}x the req/s of ${name.replace('postgres', 'sqlite')}` : ''}`)
    }
    for (const l of lines) console.log(l)
  } finally {
    await Promise.all(servers.map(stopServer))
    await pg?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runBench(import.meta, main)
