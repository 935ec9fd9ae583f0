/**
 * A real `notesvc retention sweep` process killed with SIGKILL mid-sweep, then a second one run to the
 * end: together they leave exactly the notes and files the policy keeps, nothing half-done (no note
 * whose recording is gone but which still claims it, no file of a deleted note), and one audit event
 * per note. SQLite in a data folder, disk storage: the data folder of an installation.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../../src/config'
import { fixedClock } from '../../../src/clock'
import { createIdGenerator } from '../../../src/ids'
import { silentLogger } from '../../../src/log'
import { openConfiguredStore } from '../../../src/db/open'
import { createServices } from '../../../src/services'
import { createApp } from '../../../src/app'
import type { Store } from '../../../src/db/store'
import { ROOT, tempDir } from '../../helpers/process'

const DAY = 86_400_000
/** the account on the instance default (notes after 30 days): old settled notes, old processing ones, young ones */
const OLD_DONE = 1500
const OLD_PROCESSING = 5
const YOUNG = 5
/** the account with its own policy (media after 30 days) */
const MEDIA_OLD_DONE = 300

describe('notesvc retention sweep killed with SIGKILL, then run again', () => {
  const dir = tempDir('notesvc-retention-kill-')
  const env = {
    ...process.env, NOTESVC_DATA_DIR: dir.path, NOTESVC_PUBLIC_URL: 'http://localhost', NOTESVC_LLM: 'builtin',
    NOTESVC_RETENTION_MODE: 'notes', NOTESVC_RETENTION_DAYS: '30', NOTESVC_JOB_LEASE_SECONDS: '2', NOTESVC_LOG_LEVEL: 'warn',
    // the seeding client makes thousands of uploads in a minute
    NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000',
  } as Record<string, string>
  let store: Store
  const ids = { old: [] as string[], processing: [] as string[], young: [] as string[], media: [] as string[], mediaYoung: [] as string[] }

  const files = () => readdirSync(join(dir.path, 'media'), { recursive: true, withFileTypes: true }).filter(f => f.isFile()).length
  const count = async (sql: string) => Number((await store.get<{ n: number | string }>(sql))!.n)
  const sweep = () => Bun.spawn(['bun', 'run', 'src/cli.ts', 'retention', 'sweep'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })

  beforeAll(async () => {
    const config = loadConfig(env)
    const seedStore = await openConfiguredStore(config)
    const clock = fixedClock(new Date(Date.now() - 60 * DAY))
    const services = createServices({ config, store: seedStore, clock, ids: createIdGenerator(() => clock.now().getTime()), log: silentLogger })
    const app = createApp({ config, clock, ids: createIdGenerator(), log: silentLogger, services })
    const keyOf = async (email: string) => (await services.accounts.createKey({ email })).key
    const call = async (token: string, method: string, path: string, body?: unknown) =>
      (await app.handle(new Request(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined }))).json() as Promise<any>
    const defaultKey = await keyOf('default@example.com')
    const mediaKey = await keyOf('media@example.com')
    await call(mediaKey, 'PATCH', '/v1/settings/retention', { mode: 'media', days: 30 })
    async function upload(token: string, into: string[]) {
      const bytes = new TextEncoder().encode(`RIFF-recording-${into.length}`)
      const up = await call(token, 'POST', '/v1/uploads', { fileName: 'a.wav', contentType: 'audio/wav', fileSize: bytes.length })
      const put = await app.handle(new Request(up.uploadUrl, { method: 'PUT', headers: up.headers, body: bytes }))
      if (put.status >= 300) throw new Error(`PUT answered ${put.status}`)
      into.push(up.noteId)
    }
    for (let i = 0; i < OLD_DONE; i++) await upload(defaultKey, ids.old)
    for (let i = 0; i < OLD_PROCESSING; i++) await upload(defaultKey, ids.processing)
    for (let i = 0; i < MEDIA_OLD_DONE; i++) await upload(mediaKey, ids.media)
    clock.set(new Date(Date.now() - DAY))
    for (let i = 0; i < YOUNG; i++) await upload(defaultKey, ids.young)
    for (let i = 0; i < YOUNG; i++) await upload(mediaKey, ids.mediaYoung)
    // finished (as the pipeline leaves them), but for the ones still processing
    await seedStore.run("UPDATE notes SET status = 'Done', processing_stage = NULL")
    for (const id of ids.processing) await seedStore.run("UPDATE notes SET status = 'Summarizing', processing_stage = 'transcribing' WHERE id = ?", [id])
    await seedStore.close()
    store = await openConfiguredStore(config)
  }, 300_000)

  afterAll(async () => {
    await store?.close()
    dir.remove()
  })

  test('the second sweep finishes what the killed one started, and exactly what the policy keeps remains', async () => {
    const before = { notes: await count('SELECT count(*) AS n FROM notes'), files: files() }
    expect(before).toEqual({ notes: OLD_DONE + OLD_PROCESSING + YOUNG + MEDIA_OLD_DONE + YOUNG, files: OLD_DONE + OLD_PROCESSING + YOUNG + MEDIA_OLD_DONE + YOUNG })

    // the first sweep, killed once it reported its first page of deleted notes
    const first = sweep()
    const said: string[] = []
    const decoder = new TextDecoder()
    const reader = first.stderr.getReader()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      said.push(decoder.decode(value))
      if (/retention sweep: \d+ accounts done, [1-9]\d* notes deleted/.test(said.join(''))) break
    }
    // a moment more, so that the kill lands inside the next page, between a note's file and its row
    // or within a transaction, rather than at the page boundary where the line was printed
    await Bun.sleep(15)
    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)
    const mid = { notes: await count('SELECT count(*) AS n FROM notes'), files: files() }
    // a note whose file the killed sweep deleted but whose row it did not reach
    const halfDone = mid.files < mid.notes ? mid.notes - mid.files : 0
    console.log(`killed mid-sweep after: ${said.join('').trim().split('\n').at(-1)}; notes ${before.notes} → ${mid.notes}, files ${before.files} → ${mid.files} (${halfDone} notes whose file was gone but row remained)`)
    // killed part-way: some old notes gone, not all
    expect(mid.notes).toBeLessThan(before.notes)
    expect(mid.notes).toBeGreaterThan(before.notes - OLD_DONE)

    // the second sweep waits for the killed one's lease (2 s) to run out, then finishes
    const second = sweep()
    const [out, err, code] = await Promise.all([new Response(second.stdout).text(), new Response(second.stderr).text(), second.exited])
    console.log(`second sweep: ${out.trim()}`)
    expect(code, err).toBe(0)
    expect(err).toContain('another sweep is running')
    const after = { notes: await count('SELECT count(*) AS n FROM notes'), files: files() }
    // recordings removed: exactly the files this sweep deleted (the old notes' it reached with their
    // file, and the media account's); a half-done note's file, gone already, is not counted again
    expect(out.trim()).toBe(`${OLD_DONE - (before.notes - mid.notes)} notes deleted, ${mid.files - after.files} recordings removed (files deleted from storage, with their notes or alone), ${OLD_PROCESSING} skipped while processing, 0 failed, 0 audit events pruned`)
    expect(mid.files - after.files).toBe(OLD_DONE - (before.notes - mid.notes) - halfDone + MEDIA_OLD_DONE)

    console.log(`after the second sweep: notes ${after.notes}, files ${after.files}`)
    // kept: the processing and young notes of the first account, every note of the second
    expect(after).toEqual({ notes: OLD_PROCESSING + YOUNG + MEDIA_OLD_DONE + YOUNG, files: OLD_PROCESSING + YOUNG + YOUNG })
    expect(await count(`SELECT count(*) AS n FROM notes WHERE id IN (${ids.old.map(i => `'${i}'`).join(',')})`)).toBe(0)
    expect(await count("SELECT count(*) AS n FROM notes WHERE media_removed_at IS NOT NULL")).toBe(MEDIA_OLD_DONE)
    expect(await count('SELECT count(*) AS n FROM uploads WHERE note_id NOT IN (SELECT id FROM notes)')).toBe(0)
    // one audit event per note, none twice (each is written with its note's deletion)
    expect(await count("SELECT count(*) AS n FROM audit_events WHERE action = 'note.deleted'")).toBe(OLD_DONE)
    expect(await count("SELECT count(DISTINCT target_id) AS n FROM audit_events WHERE action = 'note.deleted'")).toBe(OLD_DONE)
    expect(await count("SELECT count(*) AS n FROM audit_events WHERE action = 'note.media_deleted'")).toBe(MEDIA_OLD_DONE)

    // and a third sweep has nothing left to do
    const third = sweep()
    expect((await new Response(third.stdout).text()).trim()).toBe(`0 notes deleted, 0 recordings removed (files deleted from storage, with their notes or alone), ${OLD_PROCESSING} skipped while processing, 0 failed, 0 audit events pruned`)
    expect(await third.exited).toBe(0)
  }, 120_000)
})
