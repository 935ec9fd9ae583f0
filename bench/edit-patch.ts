#!/usr/bin/env bun
/**
 * One segment of a two-hour transcript corrected, on the server alone, on both back ends (issue 31):
 * the note of bench/edit-transcript.ts (BENCH_WORDS words, 20,000 by default, in 1,662 segments),
 * made as the pipeline makes one on a SQLite database file (WAL, as `serve` opens it) and on a fresh
 * database of a private PostgreSQL cluster; then BENCH_EDITS (50) segments spread over the note each
 * corrected (PATCH /v1/notes/{id}/segments/{index} with one more word, through the app's handler, so
 * no browser or socket in the figure): p50/p95 of the PATCH; what the revisions table holds per edit;
 * then the oldest revision read (GET …/revisions/1) and restored (POST …/revisions/1/restore), the
 * revisions furthest from the note as it is now.
 * Run: bun run bench/edit-patch.ts   (BENCH_BACKENDS=sqlite to skip PostgreSQL)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database'
import { migrateStore } from '../src/db/migrate-store'
import { postgresMigrations } from '../src/db/migrations-postgres'
import { PostgresStore } from '../src/db/postgres-store'
import { SqliteStore } from '../src/db/sqlite-store'
import type { Store } from '../src/db/store'
import { createTestApp } from '../test/helpers/app'
import { startPostgres } from '../test/helpers/postgres'
import { percentile, twoHourNote, twoHours } from './lib/two-hours'

const WORDS = Number(process.env.BENCH_WORDS ?? 20_000)
const EDITS = Number(process.env.BENCH_EDITS ?? 50)
const BACKENDS = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',')
const segments = twoHours(WORDS)

const ms = (t0: number) => performance.now() - t0
const fmt = (x: number) => x.toFixed(1)

async function measure(name: string, store: Store, bytesOf: (column: string) => string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-bench-patch-'))
  try {
    const { services, call, key } = createTestApp({ store, env: { NOTESVC_DATA_DIR: dataDir, NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    const token = await key({ email: 'bench@example.com' })
    const account = (await services.accounts.ensureAccount('bench@example.com')).id
    const id = await twoHourNote(services, { accountId: account, sandbox: false }, segments)
    const patch: number[] = []
    for (let k = 0; k < EDITS; k++) {
      const i = Math.floor((k * segments.length) / EDITS)
      const t0 = performance.now()
      const r = await call('PATCH', `/v1/notes/${id}/segments/${i}`, { token, body: { text: `${segments[i]!.text} agreed` } })
      patch.push(ms(t0))
      if (r.status !== 200) throw new Error(`PATCH answered ${r.status}: ${r.text.slice(0, 300)}`)
    }
    const columns = (await store.all<{ name: string }>("SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'transcript_revisions'").catch(() => null))
      ?? (await store.all<{ name: string }>("SELECT name FROM pragma_table_info('transcript_revisions')"))
    const sum = columns.map(c => `coalesce(sum(${bytesOf(c.name)}), 0)`).join(' + ')
    const stored = (await store.get<{ rows: number | string; bytes: number | string }>(`SELECT count(*) AS rows, ${sum} AS bytes FROM transcript_revisions WHERE note_id = ?`, [id]))!
    let t0 = performance.now()
    const old = await call('GET', `/v1/notes/${id}/revisions/1`, { token })
    const readOld = ms(t0)
    t0 = performance.now()
    const restored = await call('POST', `/v1/notes/${id}/revisions/1/restore`, { token })
    const restore = ms(t0)
    if (old.status !== 200 || restored.status !== 200) throw new Error(`revision 1: GET ${old.status}, restore ${restored.status}`)
    const bytes = Number(stored.bytes)
    console.log(`${name}: ${EDITS} PATCHes of one segment: p50 ${fmt(percentile(patch, 50))} ms, p95 ${fmt(percentile(patch, 95))} ms, max ${fmt(Math.max(...patch))} ms`)
    console.log(`  transcript_revisions: ${stored.rows} rows, ${(bytes / 1024).toFixed(0)} KiB, ${(bytes / EDITS / 1024).toFixed(1)} KiB per edit (version 0 counted in)`)
    console.log(`  revision 1 (${EDITS} edits back): GET ${fmt(readOld)} ms, restore ${fmt(restore)} ms`)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

console.log(`transcript: ${WORDS} words in ${segments.length} segments`)
if (BACKENDS.includes('sqlite')) {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-patch-db-'))
  const store = new SqliteStore(openDatabase(join(dir, 'notesvc.db')))
  try {
    await measure('SQLite (file, WAL)', store, c => `length(CAST(${c} AS BLOB))`)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
if (BACKENDS.includes('postgres')) {
  const pg = await startPostgres()
  try {
    const store = new PostgresStore(await pg.createDatabase('bench_patch'))
    await migrateStore(store, postgresMigrations())
    try {
      await measure('PostgreSQL 15', store, c => `octet_length(${c}::text)`)
    } finally {
      await store.close()
    }
  } finally {
    await pg.stop()
  }
}
