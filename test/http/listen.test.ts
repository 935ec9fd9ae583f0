/**
 * The server of `serve` (src/http/listen.ts) on a real loopback port: a JSON response that is ready
 * only after the request's turn of the event loop (as every response on PostgreSQL is) reaches the
 * client with the same status, headers and bytes, a large one sent as one chunk; everything else is
 * sent exactly as the application made it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import type { Server } from 'bun'
import { listen, type Fetching } from '../../src/http/listen'

const page = JSON.stringify({ data: Array.from({ length: 50 }, (_, i) => ({ id: `note_${i}`, summary: 'Budget review, «Überblick» 🎙️ '.repeat(20) })) })
const big = JSON.stringify({ data: Array.from({ length: 20_000 }, (_, i) => ({ id: `note_${i}`, title: `Meeting ${i} — «Überblick» 🎙️` })) })
const json = (body: string, status = 200, extra: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req_1', 'x-ratelimit-remaining': '119', ...extra } })
const later = () => new Promise(resolve => setTimeout(resolve, 5))

const app: Fetching = {
  server: null,
  fetch(request) {
    const path = new URL(request.url).pathname
    switch (path) {
      case '/sync': return json(page)
      case '/microtask': return Promise.resolve().then(() => json(page))
      case '/late': return later().then(() => json('{"created":true}', 201, { location: '/v1/notes/note_1' }))
      case '/late-page': return later().then(() => json(page, 201, { location: '/v1/notes/note_1' }))
      case '/late-big': return later().then(() => json(big))
      case '/late-error': return later().then(() => json('{"error":{"code":"validation_error","message":"limit: at most 100"}}', 400))
      case '/late-204': return later().then(() => new Response(null, { status: 204, headers: { 'x-request-id': 'req_2' } }))
      case '/late-audio': return later().then(() => new Response(new Uint8Array(65_536).fill(7), { headers: { 'content-type': 'audio/mpeg' } }))
      case '/late-peer': return later().then(() => json(JSON.stringify({ address: app.server?.requestIP(request)?.address ?? null })))
      default: return json('{"error":"not found"}', 404)
    }
  },
}

let server: Server<unknown>
let base: string
beforeAll(() => {
  server = listen(app, { port: 0, hostname: '127.0.0.1' })
  base = `http://127.0.0.1:${server.port}`
})
afterAll(() => server.stop(true))

/** The raw bytes of one HTTP/1.1 exchange, read until the server closes (Connection: close). */
function raw(path: string, method = 'GET'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port!, '127.0.0.1', () => socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`))
    const chunks: Buffer[] = []
    socket.on('data', c => chunks.push(c))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    socket.on('error', reject)
  })
}

describe('a JSON response ready after the request’s turn', () => {
  test('a page of 39 KB keeps its status, headers and body, and is sent as one chunk instead of with Content-Length', async () => {
    expect(Buffer.byteLength(page)).toBeGreaterThan(30_000)
    const res = await fetch(`${base}/late-page`)
    expect(res.status).toBe(201)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-request-id')).toBe('req_1')
    expect(res.headers.get('x-ratelimit-remaining')).toBe('119')
    expect(res.headers.get('location')).toBe('/v1/notes/note_1')
    expect(res.headers.get('transfer-encoding')).toBe('chunked')
    expect(res.headers.get('content-length')).toBeNull()
    expect(await res.text()).toBe(page)
  })

  test('on the wire: the headers, then the whole body as a single chunk and the last chunk', async () => {
    const text = await raw('/late-page')
    const head = text.slice(0, text.indexOf('\r\n\r\n'))
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 201 Created')
    expect(text.slice(head.length + 4)).toBe(`${Buffer.byteLength(page).toString(16)}\r\n${page}\r\n0\r\n\r\n`)
  })

  test('a small one (8 KB or less, which Bun sends whole anyway) keeps its status, headers and Content-Length', async () => {
    const res = await fetch(`${base}/late`)
    expect(res.status).toBe(201)
    expect(res.headers.get('x-request-id')).toBe('req_1')
    expect(res.headers.get('location')).toBe('/v1/notes/note_1')
    expect(res.headers.get('content-length')).toBe('16')
    expect(await res.text()).toBe('{"created":true}')
  })

  test('a 1.2 MB body with multi-byte characters arrives byte for byte', async () => {
    const res = await fetch(`${base}/late-big`)
    expect(Buffer.byteLength(big)).toBeGreaterThan(1_000_000)
    expect(await res.text()).toBe(big)
  })

  test('an error envelope keeps its status and body', async () => {
    const res = await fetch(`${base}/late-error`)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: { code: 'validation_error', message: 'limit: at most 100' } })
  })

  test('HEAD gets the headers and no body', async () => {
    const text = await raw('/late-page', 'HEAD')
    expect(text.startsWith('HTTP/1.1 201 Created\r\n')).toBe(true)
    expect(text.endsWith('\r\n\r\n')).toBe(true)
    expect(text).not.toContain('note_0')
  })
})

describe('left exactly as the application made it', () => {
  test('a JSON response ready in the same turn keeps its Content-Length', async () => {
    for (const path of ['/sync', '/microtask']) {
      const res = await fetch(`${base}${path}`)
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(page)))
      expect(res.headers.get('transfer-encoding')).toBeNull()
      expect(await res.text()).toBe(page)
    }
  })

  test('a late media response keeps its length', async () => {
    const res = await fetch(`${base}/late-audio`)
    expect(res.headers.get('content-length')).toBe('65536')
    expect((await res.arrayBuffer()).byteLength).toBe(65_536)
  })

  test('a late 204 has no body and no chunk', async () => {
    const text = await raw('/late-204')
    expect(text.startsWith('HTTP/1.1 204 No Content\r\n')).toBe(true)
    expect(text.toLowerCase()).not.toContain('transfer-encoding')
    expect(text.endsWith('\r\n\r\n')).toBe(true)
  })
})

test('the application is handed the server, so it can read the peer’s address', async () => {
  expect(await (await fetch(`${base}/late-peer`)).json()).toEqual({ address: '127.0.0.1' })
})

test('a port already in use is refused with what to do, not shared with the server on it', () => {
  const second: Fetching = { server: null, fetch: () => new Response('second') }
  expect(() => listen(second, { port: server.port!, hostname: '127.0.0.1' })).toThrow(`cannot listen on 127.0.0.1:${server.port}`)
  expect(() => listen(second, { port: server.port!, hostname: '127.0.0.1' })).toThrow('set PORT (and HOST) to a free one')
  expect(second.server).toBeNull()
})

