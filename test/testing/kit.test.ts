import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNotesvc, type Kit } from '../../src/testing'
import * as clientPackage from '@notesvc/client'
import { call, refuses, uploadRecording } from '../helpers/kit-calls'

/**
 * The test kit (src/testing): what a developer's test sees of it. Each expectation is the interface's
 * (SPEC: sandbox answers carry `notice`, the webhook payload names the note, createSummary costs 2
 * credits), written here as data.
 */
describe('startNotesvc', () => {
  let kit: Kit
  beforeAll(async () => {
    kit = await startNotesvc()
  })
  afterAll(() => kit.stop())

  test('answers GET /v1/health with 200 at its url, a loopback address', async () => {
    expect(kit.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await call(kit.url, 'GET', '/v1/health')
    expect(health.status).toBe(200)
  })

  test('its live and sandbox keys both work, and sandbox answers say they are sandbox ones', async () => {
    expect(kit.liveKey).toStartWith('svc_live_')
    expect(kit.sandboxKey).toStartWith('svc_test_')
    const note = await call(kit.url, 'POST', '/v1/notes', kit.liveKey, { title: 'Kit note', content: 'made with the live key' })
    expect(note.status).toBe(201)
    const live = await call(kit.url, 'GET', '/v1/notes', kit.liveKey)
    expect(live.status).toBe(200)
    expect(live.body.data.map((n: { id: string }) => n.id)).toContain(note.body.id)
    const upload = await call(kit.url, 'POST', '/v1/uploads', kit.sandboxKey, { fileName: 'a.wav', contentType: 'audio/wav' })
    expect(upload.status).toBe(201)
    expect(upload.body.notice).toMatch(/\S/)
    // the upload URL is the kit's own (its public URL names the port it listens on)
    expect(upload.body.uploadUrl).toStartWith(`${kit.url}/`)
  })

  test('a sandbox upload is Done, found by search, and webhooks.next("note.completed") names its note', async () => {
    const { created, completed } = await uploadRecording(kit.url, kit.sandboxKey, 'weekly sync.wav')
    expect(completed.status).toBe(202)
    const event = await kit.webhooks.next('note.completed')
    expect(event.data.noteId).toBe(created.body.noteId)
    expect(event.sandbox).toBe(true)
    expect(event.answeredStatus).toBe(200)
    const note = await call(kit.url, 'GET', `/v1/notes/${created.body.noteId}`, kit.sandboxKey)
    expect(note.body.status).toBe('Done')
    // a word of its summary (the sandbox's fixed one), searched without the read thread serve uses
    const word = JSON.stringify(note.body.summary).split(/\W+/).find(w => w.length > 5)!
    const found = await call(kit.url, 'GET', `/v1/notes?q=${encodeURIComponent(word)}`, kit.sandboxKey)
    expect(found.status).toBe(200)
    expect(found.body.data.map((n: { id: string }) => n.id)).toContain(created.body.noteId)
  })

  test('failNext(1): the refused delivery comes again, with the same webhook-id', async () => {
    kit.webhooks.failNext(1)
    const { created } = await uploadRecording(kit.url, kit.sandboxKey)
    const first = await kit.webhooks.next('note.completed', { timeoutMs: 40_000 })
    const again = await kit.webhooks.next('note.completed', { timeoutMs: 40_000 })
    expect(first.data.noteId).toBe(created.body.noteId)
    expect(first.answeredStatus).toBe(500)
    expect(again.id).toBe(first.id)
    expect(again.answeredStatus).toBe(200)
  }, 60_000)

  test('next() names what did come when the awaited event does not', async () => {
    await expect(kit.webhooks.next('note.failed', { timeoutMs: 50 })).rejects.toThrow(/no note\.failed webhook within 50 ms \(received so far: note\.completed/)
  })
})

describe('stop()', () => {
  test('removes the temporary folder, and the port refuses connections', async () => {
    const kit = await startNotesvc()
    expect(existsSync(join(kit.dataDir, 'notesvc.db'))).toBe(true)
    await kit.stop()
    expect(existsSync(kit.dataDir)).toBe(false)
    expect(await refuses(kit.url)).toBe(true)
    expect(await refuses(kit.webhooks.url)).toBe(true)
  })

  test('keeps a dataDir it was given, and a later kit on it finds the notes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-kit-fixtures-'))
    try {
      const first = await startNotesvc({ dataDir })
      const note = await call(first.url, 'POST', '/v1/notes', first.liveKey, { title: 'Fixture', content: 'kept between kits' })
      expect(note.status).toBe(201)
      await first.stop()
      expect(existsSync(join(dataDir, 'notesvc.db'))).toBe(true)
      const second = await startNotesvc({ dataDir })
      try {
        expect(second.liveKey).not.toBe(first.liveKey)
        const listed = await call(second.url, 'GET', '/v1/notes', second.liveKey)
        expect(listed.body.data.map((n: { title: string }) => n.title)).toEqual(['Fixture'])
        // the first kit's endpoints were deleted at its stop: the live key sees this kit's one
        expect((await call(second.url, 'GET', '/v1/webhooks', second.liveKey)).body.data).toHaveLength(1)
      } finally {
        await second.stop()
      }
      expect(existsSync(join(dataDir, 'notesvc.db'))).toBe(true)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('metering', () => {
  // createSummary costs 2 credits (SPEC); spentThisPeriod is what GET /v1/usage says was taken
  const cases = [
    { metering: true, spent: 2 },
    { metering: false, spent: 0 },
  ]
  for (const c of cases) {
    test(`metering ${c.metering ? 'on' : 'off'}: a live summary takes ${c.spent} credits`, async () => {
      const kit = await startNotesvc({ metering: c.metering })
      try {
        const summary = await call(kit.url, 'POST', '/v1/summaries', kit.liveKey, { text: 'We agreed to ship on Friday. Ana writes the release notes.' })
        expect(summary.status).toBe(200)
        const usage = await call(kit.url, 'GET', '/v1/usage', kit.liveKey)
        expect(usage.body.spentThisPeriod).toBe(c.spent)
      } finally {
        await kit.stop()
      }
    })
  }
})

describe('engines', () => {
  test("'sandbox' (the default) finds no speech engine whatever the machine has, and summarizes with the builtin engine", async () => {
    const kit = await startNotesvc()
    try {
      expect((await call(kit.url, 'GET', '/v1/health')).body.engines).toEqual({ asr: 'none', llm: 'builtin', diarization: 'off' })
      // a live upload then is refused as SPEC says for a server without one: 502, nothing charged
      const { completed } = await uploadRecording(kit.url, kit.liveKey)
      expect(completed.status).toBe(502)
      expect(completed.body.error.code).toBe('upstream_failure')
    } finally {
      await kit.stop()
    }
  })

  test.skipIf(!Bun.which('pocketsphinx_continuous'))("'installed' uses the machine's PocketSphinx", async () => {
    const kit = await startNotesvc({ engines: 'installed' })
    try {
      expect((await call(kit.url, 'GET', '/v1/health')).body.engines.asr).toBe('pocketsphinx')
    } finally {
      await kit.stop()
    }
  })

  test('an unknown option value is refused before the server starts, saying what it may be', async () => {
    await expect(startNotesvc({ engines: 'real' as 'installed' })).rejects.toThrow("startNotesvc: engines must be 'sandbox' or 'installed', not \"real\"")
    await expect(startNotesvc({ workers: -1 })).rejects.toThrow('startNotesvc: workers must be a whole number from 0 to 64, not -1')
  })
})

/** What this test calls of @notesvc/client's client (its types, once that package's client is in this checkout). */
interface NotesCalls {
  createNote(input: { title: string; content: string }): Promise<{ id: string }>
  listNotes(input?: object): Promise<{ data: { id: string }[] }>
  baseUrl: string
}
const packageHasClient = typeof (clientPackage as unknown as Record<string, unknown>).createClient === 'function'

// (skipped where @notesvc/client is still the placeholder of the set-up commit, issue 34)
test.skipIf(!packageHasClient)('kit.client and kit.sandboxClient are @notesvc/client clients of the kit, with its live and its sandbox key', async () => {
  const kit = await startNotesvc()
  try {
    const live = kit.client as unknown as NotesCalls
    const sandbox = kit.sandboxClient as unknown as NotesCalls
    expect(live.baseUrl).toBe(kit.url)
    const made = await live.createNote({ title: 'Through the client', content: 'made by kit.client' })
    expect((await live.listNotes()).data.map(n => n.id)).toEqual([made.id])
    // the sandbox library is another one: the live note is not in it
    expect((await sandbox.listNotes()).data).toEqual([])
    const raw = await call(kit.url, 'GET', '/v1/notes', kit.liveKey)
    expect(raw.body.data.map((n: { id: string }) => n.id)).toEqual([made.id])
  } finally {
    await kit.stop()
  }
})
