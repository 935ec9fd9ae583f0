#!/usr/bin/env bun
/**
 * GET /v1/notes?q=… at 10,000 notes over HTTP, on SQLite (FTS5) and PostgreSQL (tsvector + GIN), beside
 * a plain list request to the same server: p50 and p99 of one request at a time. See bench/README.md.
 *
 *   bun run bench/search.ts                                  # 10,000 notes, 400 requests per query
 *   BENCH_NOTES=50000 BENCH_REQUESTS=200 bun run bench/search.ts
 *   BENCH_DATABASES=sqlite bun run bench/search.ts           # one back end only
 *
 * Two libraries of BENCH_NOTES notes, one account each:
 * - **uniform**: the seeding of list-notes.ts: ~40-character titles, ~300-character summaries and
 *   ~2,000-character transcripts drawn from 53 words, so every word is in almost every note. The worst
 *   case: every search ranks every note of the library.
 * - **zipf**: titles of 5 words, summaries of 40, transcripts of 300 (~2,000 characters), drawn from a
 *   vocabulary of 5,000 made-up words with Zipf's law (word r is drawn in proportion to 1/r), as the
 *   words of real speech are: word 100 is in about 30% of the notes, word 1,000 in about 4%.
 * Each is seeded into SQLite (through the notes repository, in one transaction), then copied into a
 * private PostgreSQL cluster by `notesvc db copy`'s own code (whose triggers build the search index).
 * Each back end gets a `notesvc serve` process as shipped; requests are sent one at a time from this
 * process on one keep-alive connection, each timed from send to the last byte of its body. The load
 * average is printed: on a shared machine, p99 measures the neighbours as much as notesvc.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyToPostgres } from '../src/db/copy'
import { createIdGenerator } from '../src/ids'
import { notesRepoFor } from '../src/services'
import { seededRandom } from '../test/fixtures/random'
import { loadavg } from 'node:os'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { seedLibrary, seeding } from './list-notes'
import { BenchFailure, runBench, startLoggedNotesvc, stopServer, type LoggedServer } from './notesvc-process'

const NOTES = Number(process.env.BENCH_NOTES ?? 10_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400)
const WARMUP = 30
const DATABASES = (process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',').map(s => s.trim())
const TARGET_P99_MS = 20

/** What is measured on each library: the plain list first (the baseline), then searches. */
export const PATHS: Record<'uniform' | 'zipf', [string, string][]> = {
  uniform: [
    ['list (baseline)', '/v1/notes?limit=50'],
    ['a word in ~every note', '/v1/notes?q=budget&limit=50'],
    ['  same, page at offset 5000', '/v1/notes?q=budget&limit=50&offset=5000'],
    ['two words', '/v1/notes?q=customer%20launch&limit=50'],
    ['prefix (retr*)', '/v1/notes?q=retr&limit=50'],
    ['a word + status + type', '/v1/notes?q=budget&status=Done&type=video&limit=50'],
    ['no match', '/v1/notes?q=zzyzx&limit=50'],
  ],
  zipf: [
    ['list (baseline)', '/v1/notes?limit=50'],
    // filled in by zipfPaths() with the library's own words
  ],
}

/** Word r of the made-up vocabulary: syllables as the digits of r, so every r has its own word. */
const SYLLABLES = ['ka', 'lo', 'mi', 'nu', 'pe', 'ra', 'si', 'to', 'vu', 'ze', 'bo', 'da', 'fi', 'gu', 'he', 'jo']
export function zipfWord(r: number): string {
  let w = ''
  let n = r + SYLLABLES.length // at least two syllables
  while (n > 0) {
    w += SYLLABLES[n % SYLLABLES.length]
    n = Math.floor(n / SYLLABLES.length)
  }
  return w
}
const VOCABULARY = 5000

export function zipfPaths(): [string, string][] {
  const w = (r: number) => zipfWord(r - 1)
  return [
    ['list (baseline)', '/v1/notes?limit=50'],
    [`word 10 (in ~98%)`, `/v1/notes?q=${w(10)}&limit=50`],
    [`word 100 (in ~30%)`, `/v1/notes?q=${w(100)}&limit=50`],
    [`word 1000 (in ~4%)`, `/v1/notes?q=${w(1000)}&limit=50`],
    [`words 100 + 300`, `/v1/notes?q=${w(100)}%20${w(300)}&limit=50`],
    [`prefix of word 200`, `/v1/notes?q=${w(200).slice(0, 4)}&limit=50`],
    [`word 100 + status + type`, `/v1/notes?q=${w(100)}&status=Done&type=video&limit=50`],
  ]
}

/**
 * The zipf library: one account, a live key, `size` notes in its live library (dates over three
 * years, ~30% in folders, 2% failed), through the notes repository in one transaction.
 */
export async function seedZipfLibrary(dataDir: string, size: number): Promise<{ key: string }> {
  return seeding(dataDir, async ({ store, services, key, account }) => {
    const folders: string[] = []
    for (const name of ['Work', 'Personal']) folders.push((await services.folders.create({ accountId: account.id, sandbox: false }, { name })).id)
    const rand = seededRandom(size + 7)
    const cumulative: number[] = []
    let total = 0
    for (let r = 1; r <= VOCABULARY; r++) cumulative.push((total += 1 / r))
    const word = () => {
      const x = rand() * total
      let lo = 0
      let hi = cumulative.length - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (cumulative[mid]! < x) lo = mid + 1
        else hi = mid
      }
      return zipfWord(lo)
    }
    const text = (n: number) => Array.from({ length: n }, word).join(' ')
    let noteTime = 0
    const noteIds = createIdGenerator(() => noteTime)
    const end = Date.now()
    const step = (3 * 365 * 24 * 3600 * 1000) / size
    const notes = notesRepoFor(store)
    await store.transaction(async () => {
      for (let i = 0; i < size; i++) {
        noteTime = Math.round(end - (size - i) * step + rand() * step)
        const failed = rand() < 0.02
        const summary = text(40)
        await notes.insert({
          id: noteIds.next('note'), account_id: account.id, sandbox: 0, folder_id: rand() < 0.3 ? folders[Math.floor(rand() * folders.length)]! : null,
          title: text(5), summary: failed ? '' : summary, original_transcription: failed ? '' : text(300),
          structured_content: failed ? null : JSON.stringify({ markdown: summary }),
          status: failed ? 'Error' : 'Done', processing_stage: failed ? 'transcribing' : null,
          type: ['audio', 'audio', 'video', 'youtube', 'import'][Math.floor(rand() * 5)]!, style_id: 'note', language: 'en', is_pinned: 0, source: 'api',
          error_code: failed ? 'transcription_failed' : null, error_message: failed ? 'the recording could not be transcribed' : null,
          date_created: new Date(noteTime).toISOString(), updated_at: new Date(noteTime).toISOString(),
        })
      }
    })
    return { key }
  })
}


type Server = LoggedServer

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

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
  PATHS.zipf = zipfPaths()
  // a search within tags (issue 33; not in search-compare.ts, whose older side may have no tags), the
  // tags as list-notes.ts seeds them: ~30% of notes carry one of four, a third of those a second
  PATHS.uniform.splice(-1, 0, ['a word + tag', '/v1/notes?q=budget&tag=meeting&limit=50'], ['a word + two tags', '/v1/notes?q=budget&tag=meeting&tag=customer&limit=50'])
  const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-search-'))
  const servers: Server[] = []
  let pg: PostgresCluster | null = null
  const load = () => loadavg().map(x => x.toFixed(1)).join(' ')
  try {
    const lines: string[] = [`search benchmark: ${NOTES} notes per library (one account), ${REQUESTS} requests per row one at a time after ${WARMUP} warm-up, ${navigator.hardwareConcurrency} cores, bun ${Bun.version}, load average at start ${load()}`]
    const pgSkip = DATABASES.includes('postgres') ? postgresUnavailable() : 'not asked for'
    if (pgSkip === null) pg = await startPostgres()
    else lines.push(`  PostgreSQL: skipped (${pgSkip})`)
    const worst: Record<string, number> = {}

    for (const library of ['uniform', 'zipf'] as const) {
      const sqliteDir = join(work, `${library}-sqlite`)
      mkdirSync(sqliteDir)
      let t = performance.now()
      const { key } = library === 'uniform' ? await seedLibrary(sqliteDir, NOTES) : await seedZipfLibrary(sqliteDir, NOTES)
      lines.push('', `${library} library: seeded into SQLite in ${((performance.now() - t) / 1000).toFixed(1)} s (one transaction; the FTS5 index by its triggers)`)
      process.stderr.write(`${lines.at(-1)!.trim()}\n`)
      const configs: { name: string; env: Record<string, string> }[] = []
      if (DATABASES.includes('sqlite')) configs.push({ name: 'sqlite', env: { NOTESVC_DATA_DIR: sqliteDir } })
      if (pg) {
        const url = await pg.createDatabase(`notesvc_search_${library}`)
        t = performance.now()
        await copyToPostgres({ sqlitePath: join(sqliteDir, 'notesvc.db'), targetUrl: url })
        lines.push(`  copied into PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s (the tsvector index by its triggers)`)
        process.stderr.write(`${lines.at(-1)!.trim()}\n`)
        const dir = join(work, `${library}-pg`)
        mkdirSync(dir)
        configs.push({ name: 'postgres', env: { NOTESVC_DATA_DIR: dir, NOTESVC_DATABASE_URL: url } })
      }

      const results: Record<string, { p50: number; p99: number; items: number }[]> = {}
      for (const c of configs) {
        const s = await startLoggedNotesvc(c.name, c.env, join(work, `${library}-${c.name}.log`))
        servers.push(s)
        results[c.name] = []
        for (const [, path] of PATHS[library]) results[c.name]!.push(await measure(s, path, key))
        await stopServer(s)
      }
      const names = Object.keys(results)
      lines.push(`  ${'request'.padEnd(30)}${names.map(n => `${n} p50 / p99 ms (items)`.padStart(34)).join('')}`)
      PATHS[library].forEach(([label], i) => {
        lines.push(`  ${label.padEnd(30)}${names.map(n => {
          const r = results[n]![i]!
          return `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} (${r.items})`.padStart(34)
        }).join('')}`)
      })
      for (const n of names) worst[`${library}, ${n}`] = Math.max(...results[n]!.slice(1).map(r => r.p99))
    }
    lines.push('', `load average at the end ${load()}`)
    for (const [name, p99] of Object.entries(worst)) lines.push(`  ${name}: worst search p99 ${p99.toFixed(2)} ms -> target < ${TARGET_P99_MS} ms: ${p99 < TARGET_P99_MS ? 'PASS' : 'MISS'}`)
    console.log(lines.join('\n'))
  } finally {
    for (const s of servers) await stopServer(s)
    await pg?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runBench(import.meta, main)
