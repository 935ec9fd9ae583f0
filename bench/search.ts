#!/usr/bin/env bun
/**
 * GET /v1/notes?q=… at 10,000 notes over HTTP, on SQLite (FTS5) and PostgreSQL (tsvector + GIN), beside
 * a plain list request to the same server: p50 and p99 of one request at a time. See bench/README.md.
 *
 *   bun run bench/search.ts                                  # 10,000 notes, 400 requests per query
 *   BENCH_NOTES=50000 BENCH_REQUESTS=200 bun run bench/search.ts
 *   BENCH_DATABASES=sqlite bun run bench/search.ts           # one back end only
 *
 * The library is seeded into SQLite by the seeding of list-notes.ts (one account, notes with
 * ~40-character titles, ~300-character summaries and ~2,000-character transcripts drawn from 53 words,
 * so a common word is in almost every note: the worst case, every note ranked), then copied into a
 * private PostgreSQL cluster by `notesvc db copy`'s own code (whose triggers build the search index).
 * Each back end gets a `notesvc serve` process as shipped; requests are sent one at a time from this
 * process on one keep-alive connection, each timed from send to the last byte of its body.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { copyToPostgres } from '../src/db/copy'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { seedLibrary } from './list-notes'

const HOST = '127.0.0.1'
const ROOT = resolve(import.meta.dir, '..')
const NOTES = Number(process.env.BENCH_NOTES ?? 10_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400)
const WARMUP = 30
const DATABASES = (process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',').map(s => s.trim())
const TARGET_P99_MS = 20

/** What is measured: the plain list first (the baseline), then searches from worst to best case. */
const PATHS: [string, string][] = [
  ['list (baseline)', '/v1/notes?limit=50'],
  ['search, a word in ~every note', '/v1/notes?q=budget&limit=50'],
  ['  same, deep page', '/v1/notes?q=budget&limit=50&offset=5000'],
  ['search, two words', '/v1/notes?q=customer%20launch&limit=50'],
  ['search, prefix (retr*)', '/v1/notes?q=retr&limit=50'],
  ['search + status + type', '/v1/notes?q=budget&status=Done&type=video&limit=50'],
  ['search, no match', '/v1/notes?q=zzyzx&limit=50'],
]

class BenchFailure extends Error {}

interface Server { name: string; proc: Subprocess; base: string; logPath: string }

const logTail = (path: string) => {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n')
  } catch {
    return '(no log)'
  }
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: HOST, port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

async function startNotesvc(name: string, env: Record<string, string>, logPath: string): Promise<Server> {
  const port = await freePort()
  const log = openSync(logPath, 'a')
  const proc = Bun.spawn([process.execPath, 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST, NOTESVC_WORKERS: '0', NOTESVC_ACCESS_LOG: '', NOTESVC_RATE_LIMITS: 'read=1000000000,write=1000000000,processing=1000000000' },
    stdin: 'ignore', stdout: log, stderr: log,
  })
  closeSync(log)
  const server = { name, proc, base: `http://${HOST}:${port}`, logPath }
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

async function stopServer(s: Server): Promise<void> {
  if (s.proc.exitCode !== null) return
  s.proc.kill('SIGTERM')
  if (!(await Promise.race([s.proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)]))) {
    s.proc.kill('SIGKILL')
    await s.proc.exited
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** `REQUESTS` requests one after another (after a warm-up); p50 and p99 in ms, and the page's size. */
async function measure(s: Server, path: string, key: string): Promise<{ p50: number; p99: number; items: number }> {
  const headers = { authorization: `Bearer ${key}` }
  let items = 0
  const times: number[] = []
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const start = performance.now()
    const res = await fetch(s.base + path, { headers })
    const body = await res.text()
    const ms = performance.now() - start
    if (res.status !== 200) throw new BenchFailure(`${s.name}: GET ${path} answered ${res.status}: ${body.slice(0, 300)}`)
    if (i === 0) {
      const page = JSON.parse(body) as { data: { snippet?: string }[] }
      items = page.data.length
      if (path.includes('q=') && page.data.some(n => typeof n.snippet !== 'string')) throw new BenchFailure(`${s.name}: GET ${path}: an item without a snippet`)
    }
    if (i >= WARMUP) times.push(ms)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99), items }
}

async function main() {
  if (!Number.isInteger(NOTES) || NOTES < 50) throw new BenchFailure(`BENCH_NOTES=${process.env.BENCH_NOTES}: a whole number of at least 50`)
  if (!Number.isInteger(REQUESTS) || REQUESTS < 100) throw new BenchFailure(`BENCH_REQUESTS=${process.env.BENCH_REQUESTS}: a whole number of at least 100`)
  const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-search-'))
  const servers: Server[] = []
  let pg: PostgresCluster | null = null
  try {
    const sqliteDir = join(work, 'sqlite')
    mkdirSync(sqliteDir)
    const lines: string[] = [`search benchmark: ${NOTES} notes (one account), ${REQUESTS} requests per row one at a time after ${WARMUP} warm-up, ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`]
    let t = performance.now()
    const { key } = await seedLibrary(sqliteDir, NOTES)
    lines.push(`  seeded into SQLite in ${((performance.now() - t) / 1000).toFixed(1)} s (one transaction; the FTS5 index by its triggers)`)
    process.stderr.write(`${lines.at(-1)!.trim()}\n`)

    const configs: { name: string; env: Record<string, string> }[] = []
    if (DATABASES.includes('sqlite')) configs.push({ name: 'sqlite', env: { NOTESVC_DATA_DIR: sqliteDir } })
    const pgSkip = DATABASES.includes('postgres') ? postgresUnavailable() : 'not asked for'
    if (pgSkip === null) {
      pg = await startPostgres()
      const url = await pg.createDatabase('notesvc_search')
      t = performance.now()
      await copyToPostgres({ sqlitePath: join(sqliteDir, 'notesvc.db'), targetUrl: url })
      lines.push(`  copied into PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s (the tsvector index by its triggers)`)
      process.stderr.write(`${lines.at(-1)!.trim()}\n`)
      const dir = join(work, 'pg')
      mkdirSync(dir)
      configs.push({ name: 'postgres', env: { NOTESVC_DATA_DIR: dir, NOTESVC_DATABASE_URL: url } })
    } else lines.push(`  PostgreSQL: skipped (${pgSkip})`)

    const results: Record<string, { p50: number; p99: number; items: number }[]> = {}
    for (const c of configs) {
      const s = await startNotesvc(c.name, c.env, join(work, `${c.name}.log`))
      servers.push(s)
      results[c.name] = []
      for (const [, path] of PATHS) results[c.name]!.push(await measure(s, path, key))
      await stopServer(s)
    }

    const names = Object.keys(results)
    lines.push('')
    lines.push(`  ${'request'.padEnd(32)}${names.map(n => `${n} p50 / p99 ms (items)`.padStart(34)).join('')}`)
    PATHS.forEach(([label], i) => {
      lines.push(`  ${label.padEnd(32)}${names.map(n => {
        const r = results[n]![i]!
        return `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} (${r.items})`.padStart(34)
      }).join('')}`)
    })
    lines.push('')
    for (const n of names) {
      const worst = Math.max(...results[n]!.slice(1).map(r => r.p99))
      lines.push(`  ${n}: worst search p99 ${worst.toFixed(2)} ms -> target < ${TARGET_P99_MS} ms: ${worst < TARGET_P99_MS ? 'PASS' : 'MISS'}`)
    }
    console.log(lines.join('\n'))
  } finally {
    for (const s of servers) await stopServer(s)
    await pg?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  main().then(() => process.exit(0), err => {
    process.stderr.write(`bench failed: ${err instanceof BenchFailure ? err.message : (err as Error).stack ?? err}\n`)
    process.exit(1)
  })
}
