/**
 * A recording the storage refuses to delete stops neither the sweep nor the accounts after it: that
 * note is left whole, counted as `failed` and logged with its id and the storage's error; every other
 * note is swept; the CLI prints the summary, says what to do and exits 1; once the storage is fixed the
 * next sweep takes the note. The refusal is a real one: on disk, the recording's path made a directory
 * with a file in it, which the storage's delete cannot remove (EISDIR), even as root.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { backEnds } from '../../helpers/backends'
import { createTestApp, fixedClock } from '../../helpers/app'
import { ROOT, tempDir } from '../../helpers/process'
import { createLogger } from '../../../src/log'
import { loadConfig } from '../../../src/config'
import { createIdGenerator } from '../../../src/ids'
import { silentLogger } from '../../../src/log'
import { openConfiguredStore } from '../../../src/db/open'
import { createServices } from '../../../src/services'
import { createApp } from '../../../src/app'

const DAY = 86_400_000
const T0 = '2026-01-10T09:00:00.000Z'
const SWEEP_AT = new Date(Date.parse(T0) + 41 * DAY).toISOString()
/** every account on the instance's default: whole notes after 30 days */
const ENV = { NOTESVC_RETENTION_MODE: 'notes', NOTESVC_RETENTION_DAYS: '30' }

/** Makes the stored recording at `key` undeletable by the disk storage: a directory with a file in it. */
function undeletable(dataDir: string, key: string) {
  const path = join(dataDir, 'media', key)
  rmSync(path)
  mkdirSync(path)
  writeFileSync(join(path, 'pinned'), 'x')
  return () => rmSync(path, { recursive: true })
}

for (const b of backEnds) describe.skipIf(b.skip)(`a recording that cannot be deleted, on ${b.name}`, () => {
  test('the other notes of its account and of the accounts after it are swept; it is counted, logged, and swept once the storage is fixed', async () => {
    const store = await b.open()
    const clock = fixedClock(T0)
    const lines: string[] = []
    const t = createTestApp({ store, clock, env: ENV, log: createLogger('info', l => lines.push(l)) })
    try {
      const tokens = [await t.key({ email: 'a@example.com' }), await t.key({ email: 'b@example.com' })]
      const notesOf = new Map<string, string[]>()
      for (const token of tokens) {
        const ids: string[] = []
        for (let i = 0; i < 3; i++) {
          const bytes = new TextEncoder().encode(`RIFF-recording-${i}`)
          const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: `r${i}.wav`, contentType: 'audio/wav', fileSize: bytes.length } })
          expect((await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: bytes }))).status).toBeLessThan(300)
          await store.run("UPDATE notes SET status = 'Done', processing_stage = NULL WHERE id = ?", [up.body.noteId])
          ids.push(up.body.noteId)
          clock.advance(1000)
        }
        notesOf.set(token, ids)
      }
      // the account swept first (accounts are swept in id order), and its oldest note (swept first in it)
      const accountOf = async (token: string) => (await store.get<{ account_id: string }>('SELECT account_id FROM notes WHERE id = ?', [notesOf.get(token)![0]!]))!.account_id
      const [firstToken, laterToken] = (await accountOf(tokens[0]!)) < (await accountOf(tokens[1]!)) ? tokens : [tokens[1]!, tokens[0]!]
      const stuck = notesOf.get(firstToken!)![0]!
      const fix = undeletable(t.config.dataDir, `uploads/${stuck}`)
      clock.set(SWEEP_AT)

      // before the fix the sweep threw here, at the same note on every run, and swept nothing after it
      const first = await t.services.retention.sweep()
      // the 5 notes deleted took their 5 files with them
      expect(first).toEqual({ notesDeleted: 5, recordingsRemoved: 5, skippedProcessing: 0, failed: 1, auditEventsPruned: 0 })
      const status = async (token: string, id: string) => (await t.call('GET', `/v1/notes/${id}`, { token })).status
      expect(await status(firstToken!, stuck)).toBe(200)
      for (const id of notesOf.get(firstToken!)!.slice(1)) expect(await status(firstToken!, id)).toBe(404)
      for (const id of notesOf.get(laterToken!)!) expect(await status(laterToken!, id)).toBe(404)
      // no audit event claims the stuck note was deleted
      expect(await store.all("SELECT target_id FROM audit_events WHERE action = 'note.deleted' AND target_id = ?", [stuck])).toEqual([])

      // the log names the note and the storage's error
      const logged = lines.map(l => JSON.parse(l)).filter(l => l.level === 'error' && String(l.msg).startsWith('retention sweep: could not delete'))
      expect(logged.length).toBe(1)
      expect(logged[0].noteId).toBe(stuck)
      expect(logged[0].error).toMatch(/directory/i)

      // the storage fixed, the next sweep takes it
      fix()
      // its file went with the fix (the directory removed by hand): the note is deleted, no file is
      expect(await t.services.retention.sweep()).toEqual({ notesDeleted: 1, recordingsRemoved: 0, skippedProcessing: 0, failed: 0, auditEventsPruned: 0 })
      expect(await status(firstToken!, stuck)).toBe(404)
    } finally {
      await store.close()
    }
  }, 60_000)
})

describe('notesvc retention sweep with a recording that cannot be deleted', () => {
  const dir = tempDir('notesvc-retention-failed-')
  const env = { ...process.env, NOTESVC_DATA_DIR: dir.path, NOTESVC_PUBLIC_URL: 'http://localhost', NOTESVC_LLM: 'builtin', NOTESVC_LOG_LEVEL: 'error', ...ENV } as Record<string, string>
  let stuck = ''
  let fix = () => {}

  beforeAll(async () => {
    const config = loadConfig(env)
    const store = await openConfiguredStore(config)
    const clock = fixedClock(new Date(Date.now() - 60 * DAY))
    const services = createServices({ config, store, clock, ids: createIdGenerator(() => clock.now().getTime()), log: silentLogger })
    const app = createApp({ config, clock, ids: createIdGenerator(), log: silentLogger, services })
    const token = (await services.accounts.createKey({ email: 'ops@example.com' })).key
    const call = async (method: string, path: string, body?: unknown) =>
      (await app.handle(new Request(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined }))).json() as Promise<any>
    for (let i = 0; i < 3; i++) {
      const bytes = new TextEncoder().encode(`RIFF-recording-${i}`)
      const up = await call('POST', '/v1/uploads', { fileName: 'a.wav', contentType: 'audio/wav', fileSize: bytes.length })
      await app.handle(new Request(up.uploadUrl, { method: 'PUT', headers: up.headers, body: bytes }))
      if (i === 0) stuck = up.noteId
      clock.advance(1000)
    }
    await store.run("UPDATE notes SET status = 'Done', processing_stage = NULL")
    await store.close()
    fix = undeletable(dir.path, `uploads/${stuck}`)
  }, 60_000)

  afterAll(() => dir.remove())

  test('prints the summary with the failed figure, says what to do, exits 1; after the fix, 0', async () => {
    const run = async () => {
      const p = Bun.spawn(['bun', 'run', 'src/cli.ts', 'retention', 'sweep'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
      return { out: out.trim(), err, code }
    }
    const first = await run()
    console.log(`notesvc retention sweep (one recording undeletable): exit ${first.code}\nstdout: ${first.out}\nstderr: ${first.err}`)
    expect(first.out).toBe('2 notes deleted, 2 recordings removed (files deleted from storage, with their notes or alone), 0 skipped while processing, 1 failed, 0 audit events pruned')
    expect(first.code).toBe(1)
    expect(first.err).toContain(stuck)
    expect(first.err).toContain('1 note was not swept')
    expect(first.err).toContain('Fix the storage')
    expect(first.err).toContain('notesvc retention sweep` again')

    fix()
    const second = await run()
    expect({ out: second.out, code: second.code }).toEqual({ out: '1 notes deleted, 0 recordings removed (files deleted from storage, with their notes or alone), 0 skipped while processing, 0 failed, 0 audit events pruned', code: 0 })
  }, 60_000)
})
