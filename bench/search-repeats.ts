#!/usr/bin/env bun
/**
 * One search of a note repeating one word N times (issue 22): what the search of that word costs on
 * SQLite before (FTS5's snippet(), run here as the old statement) and after (the snippet made from
 * bounded windows), and on PostgreSQL. See bench/README.md.
 *
 *   bun run bench/search-repeats.ts
 *   BENCH_REPEATS=2000,10000 BENCH_DATABASES=sqlite bun run bench/search-repeats.ts
 *   BENCH_BEFORE_LIMIT_S=300 bun run bench/search-repeats.ts     # let the old statement run longer
 *
 * Each N gets a fresh library of one account and one note made as `POST /v1/notes` makes it (title
 * `r`, summary and transcript both `delta ` × N), in an in-memory SQLite store and in a database of a
 * private PostgreSQL cluster; a first row searches a library of 60 ordinary notes (about 2,000
 * characters each, the word 5 times in each) for a full page of 50, where a snippet costs what it
 * costs on most libraries. Times are of the notes repository's search page (`searchPage`, 50
 * results, no HTTP), the median of 9 runs after 10 warm-up runs. The old statement on a repeating
 * note runs once, in a child process stopped after BENCH_BEFORE_LIMIT_S seconds (default 60), since
 * it holds its thread for as long as it runs (and is not run at 1,000,000). "match + bm25" is the
 * first step alone (which notes, in what order): what a search costs without any snippet.
 */
import { migrateStore } from '../src/db/migrate-store'
import { postgresMigrations } from '../src/db/migrations-postgres'
import { memoryStore } from '../src/db/open'
import { PostgresStore, type Store } from '../src/db/store'
import { notesRepoFor } from '../src/services'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { BenchFailure, runBench } from './notesvc-process'

const REPEATS = (process.env.BENCH_REPEATS ?? '2000,10000,100000,1000000').split(',').map(Number)
const DATABASES = (process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',').map(s => s.trim())
const BEFORE_LIMIT_S = Number(process.env.BENCH_BEFORE_LIMIT_S ?? 60)
const RUNS = 9
const WARMUP = 10
const LIB = { accountId: 'acct_bench', sandbox: false }
const TERMS = { words: ['delta'] }

/** The statement SQLite searched with before issue 22 (repo.sqlite.ts at 7cf2c08), without filters. */
const OLD_SQLITE_SEARCH = `WITH page AS (
    SELECT s.rowid AS r, bm25(note_search, 10.0, 2.0, 1.0) AS score, n.date_created, n.id
    FROM note_search s JOIN notes n ON n.rowid = s.rowid
    WHERE note_search MATCH ? AND n.account_id = ? AND n.sandbox = ?
    ORDER BY score, n.date_created DESC, n.id DESC LIMIT ? OFFSET ?)
  SELECT n.list_item, snippet(note_search, -1, '«', '»', '…', 16) AS snippet
  FROM page JOIN note_search s ON s.rowid = page.r JOIN notes n ON n.rowid = page.r
  WHERE note_search MATCH ?
  ORDER BY page.score, page.date_created DESC, page.id DESC`
const OLD_PARAMS = ['"delta"*', LIB.accountId, 0, 51, 0, '"delta"*']

/** The first step alone: the page's keys in order, bm25 included. */
const MATCH_AND_RANK = `SELECT s.rowid, bm25(note_search, 10.0, 2.0, 1.0) AS score FROM note_search s JOIN notes n ON n.rowid = s.rowid
  WHERE note_search MATCH ? AND n.account_id = ? AND n.sandbox = ? ORDER BY score, n.date_created DESC, n.id DESC LIMIT 51`

/** Notes made as createNote makes a note from text (title, and the text as summary and transcript), in one library. */
async function seedNotes(store: Store, notes: { title: string; text: string }[]): Promise<void> {
  const at = (i: number) => new Date(Date.parse('2026-11-26T00:00:00.000Z') + i * 1000).toISOString()
  await store.run('INSERT INTO accounts (id, email, grant_period, created_at) VALUES (?, ?, ?, ?)', [LIB.accountId, 'bench@example.com', '2026-11', at(0)])
  const repo = notesRepoFor(store)
  await store.transaction(async () => {
    for (const [i, { title, text }] of notes.entries()) {
      await repo.insert({
        id: `note_${String(i).padStart(4, '0')}`, account_id: LIB.accountId, sandbox: 0, folder_id: null, title, summary: text, original_transcription: text,
        structured_content: JSON.stringify({ markdown: text }), status: 'Done', processing_stage: null, type: 'import', style_id: 'note',
        language: null, is_pinned: 0, source: 'api', error_code: null, error_message: null, date_created: at(i), updated_at: at(i),
      })
    }
  })
}

/** One note repeating `delta` `repeats` times, titled `r`. */
const seed = (store: Store, repeats: number) => seedNotes(store, [{ title: 'r', text: 'delta '.repeat(repeats) }])

/**
 * 60 ordinary notes of about 2,000 characters (300 words drawn from 50), each holding `delta` 5
 * times: a full page of 50 results, to compare the snippet's cost on the notes most libraries hold.
 */
function seedOrdinary(store: Store): Promise<void> {
  const vocabulary = Array.from({ length: 50 }, (_, i) => `word${i.toString(36)}`)
  let x = 7
  const next = () => (x = (x * 48271) % 2147483647)
  return seedNotes(store, Array.from({ length: 60 }, (_, n) => {
    const words = Array.from({ length: 300 }, () => vocabulary[next() % vocabulary.length]!)
    for (let k = 0; k < 5; k++) words[next() % words.length] = 'delta'
    return { title: `Meeting ${n}`, text: words.join(' ') }
  }))
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function timed(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await run()
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now()
    await run()
    times.push(performance.now() - start)
  }
  return median(times)
}

/** The search page through the repository, checked to hold `notes` notes, each with a marked snippet. */
async function searchPage(store: Store, notes = 1): Promise<number> {
  const repo = notesRepoFor(store)
  const rows = (await repo.searchPage(LIB, {}, TERMS, 50, 0)).slice(0, 50)
  if (rows.length !== notes || rows.some(r => !r.snippet.includes('«delta»'))) throw new BenchFailure(`the search found ${rows.length} notes, snippets ${JSON.stringify(rows.map(r => r.snippet))}`)
  return timed(() => repo.searchPage(LIB, {}, TERMS, 50, 0))
}

/** Child process: the old statement once, on a fresh store; prints its time in ms. */
async function beforeOnce(repeats: number): Promise<void> {
  const store = memoryStore()
  await seed(store, repeats)
  const start = performance.now()
  await store.all(OLD_SQLITE_SEARCH, OLD_PARAMS)
  console.log((performance.now() - start).toFixed(1))
}

/** The old statement's time in a child process, or null when it ran past the limit (and was stopped). */
async function before(repeats: number): Promise<number | null> {
  const child = Bun.spawn(['bun', 'run', import.meta.path, '--before', String(repeats)], { stdout: 'pipe', stderr: 'inherit' })
  const timer = setTimeout(() => child.kill(), BEFORE_LIMIT_S * 1000)
  const out = await new Response(child.stdout).text()
  const code = await child.exited
  clearTimeout(timer)
  if (child.signalCode) return null
  if (code !== 0) throw new BenchFailure(`the old statement's child process exited ${code}`)
  return Number(out.trim())
}

const ms = (x: number | null) => (x === null ? `> ${BEFORE_LIMIT_S * 1000}` : x < 10 ? x.toFixed(2) : x.toFixed(0))

async function main() {
  if (REPEATS.some(n => !Number.isInteger(n) || n < 1)) throw new BenchFailure(`BENCH_REPEATS=${process.env.BENCH_REPEATS}: whole numbers separated by commas`)
  const lines = [`one note repeating a word N times, searched for it: repository search page, median of ${RUNS} after ${WARMUP} (ms); ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`]
  if (DATABASES.includes('sqlite')) {
    lines.push('', `SQLite (in memory)${''.padEnd(6)}${'before (snippet())'.padStart(20)}${'after'.padStart(12)}${'match + bm25'.padStart(16)}`)
    const ordinary = memoryStore()
    await seedOrdinary(ordinary)
    const oldPage = await timed(() => ordinary.all(OLD_SQLITE_SEARCH, OLD_PARAMS))
    const newPage = await searchPage(ordinary, 50)
    const rankPage = await timed(() => ordinary.all(MATCH_AND_RANK, ['"delta"*', LIB.accountId, 0]))
    lines.push(`  50 of 60 notes of 2,000 characters${ms(oldPage).padStart(7)}${ms(newPage).padStart(12)}${ms(rankPage).padStart(16)}`)
    await ordinary.close()
    for (const repeats of REPEATS) {
      process.stderr.write(`sqlite, ${repeats} repeats…\n`)
      const old = repeats <= 100_000 ? await before(repeats) : undefined
      const store = memoryStore()
      await seed(store, repeats)
      const after = await searchPage(store)
      const rank = await timed(() => store.all(MATCH_AND_RANK, ['"delta"*', LIB.accountId, 0]))
      lines.push(`  ${repeats.toLocaleString('en-US').padStart(9)} repeats${''.padEnd(5)}${(old === undefined ? 'not run' : ms(old)).padStart(20)}${ms(after).padStart(12)}${ms(rank).padStart(16)}`)
      await store.close()
    }
  }
  let pg: PostgresCluster | null = null
  try {
    if (DATABASES.includes('postgres')) {
      const skip = postgresUnavailable()
      if (skip !== null) lines.push('', `PostgreSQL: skipped (${skip})`)
      else {
        pg = await startPostgres()
        lines.push('', `PostgreSQL (private cluster; its search statement is unchanged by issue 22)${'after'.padStart(8)}`)
        const ordinary = new PostgresStore(await pg.createDatabase('ordinary'), { max: 2 })
        try {
          await migrateStore(ordinary, postgresMigrations())
          await seedOrdinary(ordinary)
          lines.push(`  50 of 60 notes of 2,000 characters${ms(await searchPage(ordinary, 50)).padStart(51)}`)
        } finally {
          await ordinary.close()
        }
        for (const repeats of REPEATS) {
          process.stderr.write(`postgres, ${repeats} repeats…\n`)
          const store = new PostgresStore(await pg.createDatabase(`repeats_${repeats}`), { max: 2 })
          try {
            await migrateStore(store, postgresMigrations())
            await seed(store, repeats)
            lines.push(`  ${repeats.toLocaleString('en-US').padStart(9)} repeats${ms(await searchPage(store)).padStart(69)}`)
          } finally {
            await store.close()
          }
        }
      }
    }
  } finally {
    await pg?.stop()
  }
  console.log(lines.join('\n'))
}

if (import.meta.main && process.argv[2] === '--before') await beforeOnce(Number(process.argv[3]))
else runBench(import.meta, main)
