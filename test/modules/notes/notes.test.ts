import { describe, expect, test } from 'bun:test'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

for (const b of backEnds) describe.skipIf(b.skip)(`notes on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const t = createTestApp({ clock, store: await open() })
    const token = await t.key()
    const create = async (title: string, extra: Record<string, unknown> = {}) => {
      clock.advance(1000)
      const r = await t.call('POST', '/v1/notes', { token, body: { title, content: `Body of ${title}`, ...extra } })
      expect(r.status).toBe(201)
      return r.body
    }
    return { ...t, clock, token, create }
  }

  describe('createNote', () => {
    test('stores text as a finished import note, per DECISIONS "Notes created from text"', async () => {
      const t = await setup()
      const r = await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'Standup', content: '# Standup\n- shipped', format: 'markdown', source: 'obsidian' } })
      expect(r.status).toBe(201)
      expect(r.body).toMatchObject({
        title: 'Standup', summary: '# Standup\n- shipped', originalTranscription: '# Standup\n- shipped',
        structuredContent: { markdown: '# Standup\n- shipped' }, type: 'import', status: 'Done', processingStage: null,
        styleId: 'note', folderId: null, isPinned: false, source: 'obsidian', language: null,
        dateCreated: '2026-11-01T10:00:00.000Z', updatedAt: '2026-11-01T10:00:00.000Z',
      })
      expect(r.body.id).toMatch(/^note_[0-9a-z]{26}$/)
      const got = await t.call('GET', `/v1/notes/${r.body.id}`, { token: t.token })
      expect(got.body).toEqual(r.body)
    })

    test('keys structured content by the given format and defaults source to api', async () => {
      const t = await setup()
      const r = await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'x', content: 'plain', format: 'text' } })
      expect(r.body.structuredContent).toEqual({ text: 'plain' })
      expect(r.body.source).toBe('api')
    })

    test('files the note in an existing folder; an unknown folder is a 400 naming folderId', async () => {
      const t = await setup()
      const folder = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'Work' } })).body
      const n = await t.create('filed', { folderId: folder.id })
      expect(n.folderId).toBe(folder.id)
      const bad = await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'x', content: 'y', folderId: 'fld_nope' } })
      expect(bad.status).toBe(400)
      expect(bad.body.error.details).toEqual([{ field: 'folderId', issue: 'no such folder' }])
    })
  })

  describe('listNotes', () => {
    test('newest first, pages with hasMore, and the last page says no more', async () => {
      const t = await setup()
      for (let i = 1; i <= 5; i++) await t.create(`n${i}`)
      const p1 = await t.call('GET', '/v1/notes?limit=2', { token: t.token })
      expect(p1.body.data.map((n: any) => n.title)).toEqual(['n5', 'n4'])
      expect(p1.body.pagination).toEqual({ limit: 2, offset: 0, hasMore: true })
      const p3 = await t.call('GET', '/v1/notes?limit=2&offset=4', { token: t.token })
      expect(p3.body.data.map((n: any) => n.title)).toEqual(['n1'])
      expect(p3.body.pagination).toEqual({ limit: 2, offset: 4, hasMore: false })
      const exact = await t.call('GET', '/v1/notes?limit=5', { token: t.token })
      expect(exact.body.pagination.hasMore).toBe(false)
    })

    test('default page size is 50 and list items leave out the transcript', async () => {
      const t = await setup()
      await t.create('one')
      const r = await t.call('GET', '/v1/notes', { token: t.token })
      expect(r.body.pagination).toEqual({ limit: 50, offset: 0, hasMore: false })
      expect(r.body.data[0].originalTranscription).toBeUndefined()
      expect(r.body.data[0].summary).toBe('Body of one')
    })

    test('a list item is the full note without its transcript and structured content, also after changes', async () => {
      const t = await setup()
      const folder = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'F' } })).body
      const n = await t.create('quote " and ünïcode ✓', { folderId: folder.id })
      await t.call('PATCH', `/v1/notes/${n.id}`, { token: t.token, body: { isPinned: true, summary: 'new "summary"\n' } })
      // the whole note's summaryStale (migration 21) is not in list items either
      const { originalTranscription, structuredContent, summaryStale, ...expected } = (await t.call('GET', `/v1/notes/${n.id}`, { token: t.token })).body
      expect(summaryStale).toBe(false)
      expect(originalTranscription).toBe('Body of quote " and ünïcode ✓')
      expect(structuredContent).toEqual({ markdown: 'Body of quote " and ünïcode ✓' })
      expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data).toEqual([expected])
      await t.call('DELETE', `/v1/folders/${folder.id}`, { token: t.token })
      expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data[0].folderId).toBeNull()
    })

    test('notes created in the same millisecond are ordered by id, stably across pages', async () => {
      const t = await setup()
      const ids: string[] = []
      for (let i = 0; i < 4; i++) ids.push((await t.call('POST', '/v1/notes', { token: t.token, body: { title: `same${i}`, content: 'x' } })).body.id)
      const all = (await t.call('GET', '/v1/notes', { token: t.token })).body.data.map((n: any) => n.id)
      expect(all).toEqual([...ids].sort().reverse())
      const paged = [
        ...(await t.call('GET', '/v1/notes?limit=2', { token: t.token })).body.data,
        ...(await t.call('GET', '/v1/notes?limit=2&offset=2', { token: t.token })).body.data,
      ].map((n: any) => n.id)
      expect(paged).toEqual(all)
    })

    test('filters by folder (and null for the top level), status, type and updatedAfter', async () => {
      const t = await setup()
      const folder = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'F' } })).body
      const a = await t.create('in folder', { folderId: folder.id })
      const b = await t.create('top level')
      const titles = async (q: string) => (await t.call('GET', `/v1/notes?${q}`, { token: t.token })).body.data.map((n: any) => n.title)
      expect(await titles(`folderId=${folder.id}`)).toEqual(['in folder'])
      expect(await titles('folderId=null')).toEqual(['top level'])
      expect(await titles('status=Done')).toEqual(['top level', 'in folder'])
      expect(await titles('status=Error')).toEqual([])
      expect(await titles('type=import')).toEqual(['top level', 'in folder'])
      expect(await titles('type=audio')).toEqual([])
      t.clock.advance(60_000)
      await t.call('PATCH', `/v1/notes/${a.id}`, { token: t.token, body: { isPinned: true } })
      expect(await titles(`updatedAfter=${encodeURIComponent(b.updatedAt)}`)).toEqual(['in folder'])
      expect(await titles('updatedAfter=2030-01-01T00:00:00Z')).toEqual([])
    })
  })

  describe('updateNote, deleteNote', () => {
    test('changes only the fields sent and moves updatedAt', async () => {
      const t = await setup()
      const n = await t.create('before')
      t.clock.advance(5000)
      const r = await t.call('PATCH', `/v1/notes/${n.id}`, { token: t.token, body: { title: 'after', isPinned: true } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ title: 'after', isPinned: true, summary: n.summary, dateCreated: n.dateCreated })
      expect(r.body.updatedAt > n.updatedAt).toBe(true)
    })

    test('folderId null moves a note to the top level', async () => {
      const t = await setup()
      const folder = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'F' } })).body
      const n = await t.create('x', { folderId: folder.id })
      const r = await t.call('PATCH', `/v1/notes/${n.id}`, { token: t.token, body: { folderId: null } })
      expect(r.body.folderId).toBeNull()
    })

    test('unknown fields are refused rather than ignored', async () => {
      const t = await setup()
      const n = await t.create('x')
      const r = await t.call('PATCH', `/v1/notes/${n.id}`, { token: t.token, body: { titel: 'typo' } })
      expect(r.status).toBe(400)
      expect(r.body.error.details.map((d: any) => d.field)).toContain('titel')
    })

    test('404 for unknown notes on get, update, delete, status and transcript', async () => {
      const t = await setup()
      for (const [m, p, body] of [['GET', '/v1/notes/note_x'], ['PATCH', '/v1/notes/note_x', { title: 'a' }], ['DELETE', '/v1/notes/note_x'], ['GET', '/v1/notes/note_x/status'], ['GET', '/v1/notes/note_x/transcript']] as const) {
        const r = await t.call(m, p, { token: t.token, body })
        expect(`${m} ${p} ${r.status} ${r.body.error.code}`).toBe(`${m} ${p} 404 not_found`)
      }
    })

    test('delete answers 204 with no body, and the note is gone', async () => {
      const t = await setup()
      const n = await t.create('doomed')
      const r = await t.call('DELETE', `/v1/notes/${n.id}`, { token: t.token })
      expect(r.status).toBe(204)
      expect(r.text).toBe('')
      expect((await t.call('GET', `/v1/notes/${n.id}`, { token: t.token })).status).toBe(404)
      expect((await t.call('DELETE', `/v1/notes/${n.id}`, { token: t.token })).status).toBe(404)
    })
  })

  describe('getNoteStatus, getNoteTranscript', () => {
    test('a text note is complete and its transcript is its content', async () => {
      const t = await setup()
      const n = await t.create('t')
      expect((await t.call('GET', `/v1/notes/${n.id}/status`, { token: t.token })).body).toEqual({
        status: 'Done', processingStage: null, progress: 1, isComplete: true, hasError: false, errorMessage: null, errorCode: null,
      })
      expect((await t.call('GET', `/v1/notes/${n.id}/transcript`, { token: t.token })).body).toEqual({ noteId: n.id, transcript: 'Body of t', language: null })
    })

    test('a note still processing answers 409 for its transcript and reports its stage', async () => {
      const t = await setup()
      const up = await t.call('POST', '/v1/uploads', { token: t.token, body: { fileName: 'call.mp3', contentType: 'audio/mpeg' } })
      expect(up.status).toBe(201)
      const s = await t.call('GET', `/v1/notes/${up.body.noteId}/status`, { token: t.token })
      expect(s.body).toMatchObject({ status: 'Summarizing', processingStage: 'awaiting_upload', isComplete: false, hasError: false })
      const tr = await t.call('GET', `/v1/notes/${up.body.noteId}/transcript`, { token: t.token })
      expect(tr.status).toBe(409)
      expect(tr.body.error.code).toBe('conflict')
    })
  })

  describe('sandbox library', () => {
    test('a sandbox key sees its own notes and folders, never the live ones of the same account', async () => {
      const t = await setup()
      const sandbox = await t.key({ sandbox: true })
      const live = await t.create('live note')
      const sb = await t.call('POST', '/v1/notes', { token: sandbox, body: { title: 'sandbox note', content: 'x' } })
      expect(sb.status).toBe(201)
      await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'live folder' } })
      const sbList = await t.call('GET', '/v1/notes', { token: sandbox })
      expect(sbList.body.data.map((n: any) => n.title)).toEqual(['sandbox note'])
      expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data.map((n: any) => n.title)).toEqual(['live note'])
      expect((await t.call('GET', `/v1/notes/${live.id}`, { token: sandbox })).status).toBe(404)
      expect((await t.call('DELETE', `/v1/notes/${sb.body.id}`, { token: t.token })).status).toBe(404)
      expect((await t.call('GET', '/v1/folders', { token: sandbox })).body.data).toEqual([])
    })

    test('another account never sees this account\'s notes', async () => {
      const t = await setup()
      const n = await t.create('private')
      const other = await t.key({ email: 'other@example.com' })
      expect((await t.call('GET', `/v1/notes/${n.id}`, { token: other })).status).toBe(404)
      expect((await t.call('GET', '/v1/notes', { token: other })).body.data).toEqual([])
    })
  })
})
