import { afterAll, describe, expect, test } from 'bun:test'
import { createClient, InvalidRequestError, InvalidTokenError, NotesvcError, NotFoundError, RateLimitedError, type Fetch } from '@notesvc/client'
import { createTestApp } from '../helpers/app'
import { freePort } from '../helpers/process'

/** The client against a complete app behind a real HTTP server on loopback. */
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const t = createTestApp({ env: { NOTESVC_PUBLIC_URL: base, NOTESVC_RATE_LIMITS: 'read=10000,write=10000,processing=10000' } })
const server = Bun.serve({ port, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
afterAll(() => server.stop(true))

/** A fetch that keeps every request and answer it passes on, to compare with what the client reports. */
function recordingFetch() {
  const seen: { request: Request; response: Response }[] = []
  const fetcher: Fetch = async request => {
    const response = await fetch(request)
    seen.push({ request, response })
    return response
  }
  return { seen, fetcher }
}

describe('createClient against a running server', () => {
  test('creates, reads and lists notes with the typed methods', async () => {
    const client = createClient({ baseUrl: `${base}/`, apiKey: await t.key({ email: 'crud@example.com' }) })
    const created = await client.createNote({ title: 'Typed client', content: 'Written through @notesvc/client.' })
    expect(created).toMatchObject({ title: 'Typed client', status: 'Done' })
    const read = await client.getNote({ id: created.id })
    expect(read.id).toBe(created.id)
    const page = await client.listNotes({ limit: 5 })
    expect(page.data.map(n => n.id)).toEqual([created.id])
    expect(page.pagination).toEqual({ limit: 5, offset: 0, hasMore: false })
    const updated = await client.updateNote({ id: created.id, title: 'Renamed' })
    expect(updated.title).toBe('Renamed')
    expect(await client.deleteNote({ id: created.id })).toBeUndefined()
    expect((await client.listNotes()).data).toEqual([])
  })

  test('a 404 is a NotFoundError whose requestId is the answer\'s X-Request-Id', async () => {
    const { seen, fetcher } = recordingFetch()
    const client = createClient({ baseUrl: base, apiKey: await t.key({ email: 'missing@example.com' }), fetch: fetcher })
    const error = await client.getNote({ id: 'note_missing' }).catch(e => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error).toBeInstanceOf(NotesvcError)
    const header = seen.at(-1)!.response.headers.get('x-request-id')
    expect(header).toMatch(/\S/)
    expect(error).toMatchObject({ name: 'NotFoundError', code: 'not_found', status: 404, requestId: header, retryAfter: null, details: [] })
    expect(error.docUrl).toEndWith('/errors#not_found')
    expect(error.message).toContain('note_missing')
  })

  test('a 400 carries the details naming each field at fault', async () => {
    const client = createClient({ baseUrl: base, apiKey: await t.key({ email: 'invalid@example.com' }) })
    // @ts-expect-error: a title must be a string, which the types say too
    const error = await client.createNote({ title: 42, content: 'x' }).catch(e => e)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error.status).toBe(400)
    expect(error.details.map((d: { field: string }) => d.field)).toEqual(['title'])
  })

  test('a wrong key is an InvalidTokenError', async () => {
    const client = createClient({ baseUrl: base, apiKey: 'svc_live_not_a_key' })
    const error = await client.listNotes().catch(e => e)
    expect(error).toBeInstanceOf(InvalidTokenError)
    expect(error.status).toBe(401)
  })

  test('paginate.listNotes walks 120 notes page after page, each once', async () => {
    const key = await t.key({ email: 'pages@example.com' })
    const client = createClient({ baseUrl: base, apiKey: key })
    const created: string[] = []
    for (let i = 0; i < 120; i++) created.push((await client.createNote({ title: `Note ${i}`, content: `Body ${i}` })).id)
    const { seen, fetcher } = recordingFetch()
    const walking = createClient({ baseUrl: base, apiKey: key, fetch: fetcher })
    const walked: string[] = []
    for await (const note of walking.paginate.listNotes({ limit: 50 })) walked.push(note.id)
    expect(walked.length).toBe(120)
    expect(new Set(walked).size).toBe(120)
    expect([...walked].sort()).toEqual([...created].sort())
    expect(seen.map(s => new URL(s.request.url).search)).toEqual(['?limit=50', '?limit=50&offset=50', '?limit=50&offset=100'])
  }, 30_000)
})

describe('retries against the real rate limiter', () => {
  test('with retries off, the second write in a window of one is a RateLimitedError with the Retry-After it was sent', async () => {
    const limited = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'write=1' } })
    const { seen, fetcher } = recordingFetch()
    const own = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => limited.app.handle(r) })
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${own.port}`, apiKey: await limited.key(), retry: false, fetch: fetcher })
      await client.createNote({ title: 'First', content: 'fits the window' })
      const error = await client.createNote({ title: 'Second', content: 'over the limit' }).catch(e => e)
      expect(error).toBeInstanceOf(RateLimitedError)
      const answer = seen.at(-1)!.response
      expect(answer.status).toBe(429)
      expect(error.retryAfter).toBe(Number(answer.headers.get('retry-after')))
      expect(error.retryAfter).toBeGreaterThan(0)
      expect(seen.length).toBe(2)
    } finally {
      own.stop(true)
    }
  })
})
