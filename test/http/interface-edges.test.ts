import { describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createTestApp } from '../helpers/app'

/**
 * The edges of the interface where notesvc once differed from it: the Note's `structuredContent` is an
 * object, never null; sandbox answers carry a `notice`; integer body fields are JSON numbers; offsets
 * beyond what the database holds and empty folder ids are refused naming the field, not a 500.
 */

const SANDBOX_NOTICE_WORDS = /fixed|sample/i

async function app() {
  const t = createTestApp()
  return { ...t, live: await t.key(), sandbox: await t.key({ sandbox: true }) }
}

describe('a Note still processing has structuredContent {}, never null', () => {
  test('getNote, updateNote and listNotes of a note made by createUpload', async () => {
    const t = await app()
    const up = await t.call('POST', '/v1/uploads', { token: t.live, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    expect(up.status).toBe(201)
    const got = await t.call('GET', `/v1/notes/${up.body.noteId}`, { token: t.live })
    expect(got.body.status).toBe('Summarizing')
    expect(got.body.structuredContent).toEqual({})
    const patched = await t.call('PATCH', `/v1/notes/${up.body.noteId}`, { token: t.live, body: { isPinned: true } })
    expect(patched.status).toBe(200)
    expect(patched.body.structuredContent).toEqual({})
    const list = await t.call('GET', '/v1/notes', { token: t.live })
    expect(list.body.data.map((n: any) => n.structuredContent === null)).toEqual([false])
  })

  test('the getNote tool of the MCP endpoint, through the SDK client', async () => {
    const t = await app()
    const up = await t.call('POST', '/v1/uploads', { token: t.live, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    let base = ''
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => t.app.handle(new Request(r.url.replace(base, 'http://localhost'), r)) })
    base = `http://127.0.0.1:${server.port}`
    const client = new Client({ name: 'edges-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.live}` } } }))
    try {
      const res = (await client.callTool({ name: 'getNote', arguments: { id: up.body.noteId } })) as { isError?: boolean; structuredContent?: any }
      expect(res.isError ?? false).toBe(false)
      expect(res.structuredContent.structuredContent).toEqual({})
    } finally {
      await client.close()
      server.stop(true)
    }
  })
})

describe('askNoteQuestion with a sandbox key answers with a notice, as every processing route does', () => {
  test('sandbox: notice present, nothing charged; live: no notice', async () => {
    const t = await app()
    const sNote = await t.call('POST', '/v1/notes', { token: t.sandbox, body: { title: 'Plan', content: 'The beta ships on March third.' } })
    const sandbox = await t.call('POST', `/v1/notes/${sNote.body.id}/questions`, { token: t.sandbox, body: { question: 'When does the beta ship?' } })
    expect(sandbox.status).toBe(200)
    expect(sandbox.body.creditsCharged).toBe(0)
    expect(sandbox.body.notice).toMatch(SANDBOX_NOTICE_WORDS)

    const lNote = await t.call('POST', '/v1/notes', { token: t.live, body: { title: 'Plan', content: 'The beta ships on March third.' } })
    const live = await t.call('POST', `/v1/notes/${lNote.body.id}/questions`, { token: t.live, body: { question: 'When does the beta ship?' } })
    expect(live.status).toBe(200)
    expect(live.body.creditsCharged).toBe(1)
    expect('notice' in live.body).toBe(false)
  })

  test('the OpenAPI document lists notice on Answer', async () => {
    const t = await app()
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    const op = doc.paths['/v1/notes/{id}/questions'].post
    const schema = op.responses['200'].content['application/json'].schema
    const answer = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema
    expect(Object.keys(answer.properties).sort()).toEqual(['answer', 'creditsCharged', 'noteId', 'notice', 'question'])
    expect(answer.required.sort()).toEqual(['answer', 'creditsCharged', 'noteId', 'question'])
  })
})

describe('integer and boolean body fields must be JSON numbers and booleans, not strings', () => {
  const CASES = [
    { name: 'createTranscription timeoutSeconds', method: 'POST', path: () => '/v1/transcriptions', body: { audioUrl: 'https://127.0.0.1/a.mp3', timeoutSeconds: '300' }, field: 'timeoutSeconds' },
    { name: 'createUpload fileSize', method: 'POST', path: () => '/v1/uploads', body: { fileName: 'a.wav', contentType: 'audio/wav', fileSize: '1000' }, field: 'fileSize' },
    { name: 'updateNote isPinned', method: 'PATCH', path: (id: string) => `/v1/notes/${id}`, body: { isPinned: 'true' }, field: 'isPinned' },
  ]
  for (const c of CASES) {
    test(`${c.name} as a string → 400 naming ${c.field}`, async () => {
      const t = await app()
      const note = await t.call('POST', '/v1/notes', { token: t.live, body: { title: 'x', content: 'y' } })
      for (const token of [t.live, t.sandbox]) {
        const res = await t.call(c.method, c.path(note.body.id), { token, body: c.body })
        expect(res.status).toBe(400)
        expect(res.body.error.code).toBe('invalid_request')
        expect(res.body.error.details.map((d: any) => d.field)).toEqual([c.field])
      }
    })
  }

  test('the same values as JSON numbers are accepted', async () => {
    const t = await app()
    const up = await t.call('POST', '/v1/uploads', { token: t.live, body: { fileName: 'a.wav', contentType: 'audio/wav', fileSize: 1000 } })
    expect(up.status).toBe(201)
    const tr = await t.call('POST', '/v1/transcriptions', { token: t.sandbox, body: { audioUrl: 'https://example.com/a.mp3', timeoutSeconds: 300 } })
    expect(tr.status).toBe(200)
  })
})

describe('listNotes offset is bounded to what the database holds', () => {
  // 2^53 - 1: the largest whole number JSON clients and the server carry exactly
  const LARGEST = 9007199254740991
  for (const offset of ['9223372036854775807', '9223372036854775808', '18446744073709551616', '9007199254740992']) {
    test(`offset=${offset} → 400 naming offset`, async () => {
      const t = await app()
      const res = await t.call('GET', `/v1/notes?offset=${offset}`, { token: t.live })
      expect(res.status).toBe(400)
      expect(res.body.error.details).toEqual([{ field: 'offset', issue: `must be a whole number from 0 to ${LARGEST}` }])
    })
  }

  test('the largest offset is accepted: an empty page', async () => {
    const t = await app()
    await t.call('POST', '/v1/notes', { token: t.live, body: { title: 'x', content: 'y' } })
    const res = await t.call('GET', `/v1/notes?offset=${LARGEST}`, { token: t.live })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [], pagination: { limit: 50, offset: LARGEST, hasMore: false } })
  })

  test('the OpenAPI document states the bound', async () => {
    const t = await app()
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    const offset = doc.paths['/v1/notes'].get.parameters.find((p: any) => p.name === 'offset')
    expect(offset.schema).toMatchObject({ type: 'integer', minimum: 0, maximum: LARGEST })
  })
})

describe('an empty folderId is refused naming the field, not a 500', () => {
  test('createNote with folderId ""', async () => {
    const t = await app()
    const res = await t.call('POST', '/v1/notes', { token: t.live, body: { title: 'x', content: 'y', folderId: '' } })
    expect(res.status).toBe(400)
    expect(res.body.error.details.map((d: any) => d.field)).toEqual(['folderId'])
    expect((await t.call('GET', '/v1/notes', { token: t.live })).body.data).toEqual([])
  })

  test('updateNote with folderId "" leaves the note as it was', async () => {
    const t = await app()
    const folder = await t.call('POST', '/v1/folders', { token: t.live, body: { name: 'Inbox' } })
    const note = await t.call('POST', '/v1/notes', { token: t.live, body: { title: 'x', content: 'y', folderId: folder.body.id } })
    const res = await t.call('PATCH', `/v1/notes/${note.body.id}`, { token: t.live, body: { folderId: '' } })
    expect(res.status).toBe(400)
    expect(res.body.error.details.map((d: any) => d.field)).toEqual(['folderId'])
    expect((await t.call('GET', `/v1/notes/${note.body.id}`, { token: t.live })).body.folderId).toBe(folder.body.id)
  })

  test('folderId null still moves a note to the top level', async () => {
    const t = await app()
    const folder = await t.call('POST', '/v1/folders', { token: t.live, body: { name: 'Inbox' } })
    const note = await t.call('POST', '/v1/notes', { token: t.live, body: { title: 'x', content: 'y', folderId: folder.body.id } })
    const res = await t.call('PATCH', `/v1/notes/${note.body.id}`, { token: t.live, body: { folderId: null } })
    expect(res.status).toBe(200)
    expect(res.body.folderId).toBe(null)
  })
})
