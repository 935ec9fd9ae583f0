/**
 * Request bodies by route (src/http/body-limit.ts), on a real loopback server: JSON routes refuse a
 * body over 16 MiB with 413 in the envelope before reading it (a declared length) or as soon as it
 * passes the limit (a chunked body); a note's text is bounded at 2,000,000 characters; the media
 * routes keep their own limits.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import type { Server } from 'bun'
import { listen, type Fetching } from '../../src/http/listen'
import { createTestApp } from '../helpers/app'
import { rawRequest } from '../helpers/hostile'

const MiB = 1024 * 1024
let server: Server<unknown> | null = null
afterEach(() => {
  server?.stop(true)
  server = null
})

function serving() {
  const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
  server = listen(t.app as unknown as Fetching, { port: 0, hostname: '127.0.0.1', maxRequestBodySize: 6 * 1024 ** 3 })
  return { t, port: server.port! }
}

const postNotes = (key: string | null, extra: string) =>
  `POST /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}Content-Type: application/json\r\n${extra}\r\n`

describe('JSON bodies', () => {
  test('a declared 100 MB body is refused with 413 in the envelope before any of it is read', async () => {
    const { t, port } = serving()
    const key = await t.key()
    const r = await rawRequest(port, postNotes(key, `Content-Length: ${100 * MiB}\r\n`), { total: 100 * MiB, chunked: false })
    expect(r.status).toBe(413)
    expect(r.json.error.code).toBe('payload_too_large')
    expect(r.json.error.message).toContain('16 MB')
    // answered while most of the body was still unsent
    expect(r.sentBeforeAnswer).toBeLessThan(16 * MiB)
  })

  test('a chunked body is refused as soon as it passes 16 MiB, without waiting for its end', async () => {
    const { t, port } = serving()
    const key = await t.key()
    const r = await rawRequest(port, postNotes(key, 'Transfer-Encoding: chunked\r\n'), { total: 40 * MiB, chunked: true })
    expect(r.status).toBe(413)
    expect(r.json.error.code).toBe('payload_too_large')
    expect(r.sentBeforeAnswer).toBeGreaterThan(16 * MiB)
    expect(r.sentBeforeAnswer).toBeLessThan(40 * MiB)
  })

  // Fails if a chunked body at the limit were refused (`size >= limit`): the limit is docs/usage.md's
  // "JSON requests at most 16 MiB", a body of exactly that many bytes is allowed.
  test('a body of exactly 16 MiB is accepted, chunked or declared (the note made); one byte more is refused with 413', async () => {
    const { t, port } = serving()
    const key = await t.key()
    const LIMIT = 16 * MiB
    /**
     * A note's JSON padded with spaces (still JSON) to `size` bytes: sent chunked in pieces of 1 MiB
     * (no Content-Length), or `declared` with its Content-Length.
     */
    const post = (title: string, size: number, declared = false) => {
      const json = Buffer.from(JSON.stringify({ title, content: 'padded with spaces' }))
      const bytes = Buffer.alloc(size, 0x20)
      json.copy(bytes)
      const body = declared ? bytes : new ReadableStream<Uint8Array>({
        start(c) {
          for (let at = 0; at < size; at += MiB) c.enqueue(bytes.subarray(at, at + MiB))
          c.close()
        },
      })
      return fetch(`http://127.0.0.1:${port}/v1/notes`, { method: 'POST', body, duplex: 'half', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } } as RequestInit)
    }
    const atLimit = await post('chunked at the limit', LIMIT)
    expect(atLimit.status).toBe(201)
    const over = await post('chunked over', LIMIT + 1)
    expect(over.status).toBe(413)
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe('payload_too_large')
    // the same with a Content-Length
    expect((await post('declared at the limit', LIMIT, true)).status).toBe(201)
    expect((await post('declared over', LIMIT + 1, true)).status).toBe(413)
    const listed = (await (await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { title: string }[] }
    expect(listed.data.map(n => n.title).sort()).toEqual(['chunked at the limit', 'declared at the limit'])
  })

  test('without a credential, the caller is told that first, and the body is not read', async () => {
    const { port } = serving()
    const r = await rawRequest(port, postNotes(null, `Content-Length: ${100 * MiB}\r\n`), { total: 100 * MiB, chunked: false })
    expect(r.status).toBe(401)
    expect(r.sentBeforeAnswer).toBeLessThan(16 * MiB)
  })

  test('a note of 2,000,000 characters is kept whole; one more character is refused naming content', async () => {
    const { t, port } = serving()
    const key = await t.key()
    const base = `http://127.0.0.1:${port}`
    const post = (content: string) => fetch(`${base}/v1/notes`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'long', content }) })
    const longest = 'word '.repeat(400_000)
    expect(longest.length).toBe(2_000_000)
    const ok = await post(longest)
    expect(ok.status).toBe(201)
    const id = ((await ok.json()) as { id: string }).id
    const read = await (await fetch(`${base}/v1/notes/${id}/transcript`, { headers: { authorization: `Bearer ${key}` } })).json() as { transcript: string }
    expect(read.transcript.length).toBe(2_000_000)
    const over = await post(longest + 'x')
    expect(over.status).toBe(400)
    const body = await over.json() as { error: { code: string; details: { field: string }[] } }
    expect(body.error.code).toBe('invalid_request')
    expect(body.error.details.map(d => d.field)).toEqual(['content'])
    // a summary of the same length through updateNote, likewise
    const patch = (summary: string) => fetch(`${base}/v1/notes/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ summary }) })
    expect((await patch(longest)).status).toBe(200)
    expect((await patch(longest + 'x')).status).toBe(400)
  })
})

describe('other routes', () => {
  test('MCP takes up to 40 MiB (a 25 MB recording in base64); more is refused with 413', async () => {
    const { t, port } = serving()
    const key = await t.key()
    const r = await rawRequest(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${41 * MiB}\r\n\r\n`, { total: 41 * MiB, chunked: false })
    expect(r.status).toBe(413)
    expect(r.json.error.message).toContain('40 MB')
    expect(r.sentBeforeAnswer).toBeLessThan(16 * MiB)
  })

  test('the pages’ forms take 1 MiB', async () => {
    const { port } = serving()
    const r = await rawRequest(port, `POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${2 * MiB}\r\n\r\n`, { total: 2 * MiB, chunked: false })
    expect(r.status).toBe(413)
  })
})
