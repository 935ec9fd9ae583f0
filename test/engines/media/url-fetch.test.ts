/**
 * Downloading an `audioUrl` (src/engines/media/url-fetch.ts) with private addresses allowed: the
 * bytes and the file in place, redirects, error statuses, the size and time limits, the caller's
 * signal, and nothing partial left behind. What the guard refuses is test/net/outbound.test.ts; on
 * loopback only (test/helpers/loopback-hosts.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { downloadUrl, UrlTimeoutError, UrlTooLargeError } from '../../../src/engines/media/url-fetch'
import { UrlFetchFailedError, type ResolvedAddress } from '../../../src/net/outbound'
import { countingHosts, downloadFolder, fakeDns, fenceFetchToLoopback, MB, WAV } from '../../helpers/loopback-hosts'
import { freePort } from '../../helpers/process'

fenceFetchToLoopback()
const { seen, hits, routes } = countingHosts()
const { dest, leftovers, lastFiles } = downloadFolder()

let plainServer: ReturnType<typeof Bun.serve>
let rawServer: Bun.TCPSocketListener<undefined>
let closedPort: number

beforeAll(async () => {
  plainServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: routes('plain') })
  // hand-written responses: a Content-Length with no body, headers that never come, a body that trickles
  const trickles = new Map<unknown, Timer>()
  rawServer = Bun.listen<undefined>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(sock, data) {
        const line = new TextDecoder().decode(data).split('\r\n')[0] ?? ''
        const path = line.split(' ')[1] ?? ''
        seen.push({ path, host: null, server: 'raw' })
        if (path === '/declared-huge') {
          sock.write(`HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\nContent-Length: ${6 * 1024 ** 3}\r\n\r\n`)
        } else if (path === '/slow-body') {
          sock.write('HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\nTransfer-Encoding: chunked\r\n\r\n')
          trickles.set(sock, setInterval(() => sock.write('1\r\nx\r\n'), 50))
        }
        // '/no-headers': say nothing
      },
      close(sock) {
        clearInterval(trickles.get(sock))
        trickles.delete(sock)
      },
      error() {},
    },
  })
  closedPort = await freePort()
})

afterAll(() => {
  plainServer.stop(true)
  rawServer.stop(true)
})

const base = { maxBytes: 10 * MB, timeoutMs: 5000 }

describe('with NOTESVC_ALLOW_PRIVATE_URLS on', () => {
  const opts = { ...base, allowPrivate: true }

  test('downloads over http from loopback: bytes, content type, the file in place', async () => {
    const to = dest()
    const res = await downloadUrl(`http://127.0.0.1:${plainServer.port}/audio.wav`, { ...opts, dest: to })
    expect(res).toEqual({ bytes: WAV.byteLength, contentType: 'audio/wav', finalUrl: `http://127.0.0.1:${plainServer.port}/audio.wav` })
    expect(readFileSync(to).equals(WAV)).toBe(true)
    expect(leftovers()).toEqual([])
  })

  test('a name is resolved by the lookup and sent as Host', async () => {
    const dns = fakeDns({ 'media.lan': '127.0.0.1' })
    const res = await downloadUrl(`http://media.lan:${plainServer.port}/audio.wav`, { ...opts, dest: dest(), lookup: dns.lookup })
    expect(res.bytes).toBe(WAV.byteLength)
    expect(seen.at(-1)!.host).toBe(`media.lan:${plainServer.port}`)
    expect(dns.asked).toEqual(['media.lan'])
  })

  test('a chain of five redirects (301, 302, 303; relative and absolute) is followed', async () => {
    const before = hits('plain')
    const res = await downloadUrl(`http://127.0.0.1:${plainServer.port}/r/4`, { ...opts, dest: dest() })
    expect(res.finalUrl).toBe(`http://127.0.0.1:${plainServer.port}/audio.wav`)
    expect(hits('plain')).toBe(before + 6)
    const other = await downloadUrl(`http://127.0.0.1:${plainServer.port}/see-other`, { ...opts, dest: dest() })
    expect(other.bytes).toBe(WAV.byteLength)
  })

  test('a sixth redirect is one too many', async () => {
    const err = await downloadUrl(`http://127.0.0.1:${plainServer.port}/r/5`, { ...opts, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlFetchFailedError)
    expect(err.message).toContain('more than 5 redirects')
  })

  test('error statuses are UrlFetchFailedError with the status', async () => {
    for (const [path, status] of [['/missing', 404], ['/broken', 500], ['/no-location', 302]] as const) {
      const err = await downloadUrl(`http://127.0.0.1:${plainServer.port}${path}`, { ...opts, dest: dest() }).catch(e => e)
      expect(err).toBeInstanceOf(UrlFetchFailedError)
      expect(err.status).toBe(status)
      expect(err.message).toContain(String(status))
    }
    expect(leftovers()).toEqual([])
  })

  test('a closed port and an unknown name are UrlFetchFailedError without a status', async () => {
    const closed = await downloadUrl(`http://127.0.0.1:${closedPort}/audio.wav`, { ...opts, dest: dest() }).catch(e => e)
    expect(closed).toBeInstanceOf(UrlFetchFailedError)
    expect(closed.status).toBeNull()
    const unknown = await downloadUrl('http://nowhere.invalid/audio.wav', { ...opts, dest: dest(), lookup: fakeDns({}).lookup }).catch(e => e)
    expect(unknown).toBeInstanceOf(UrlFetchFailedError)
    expect(unknown.message).toContain('could not be resolved (ENOTFOUND)')
  })

  test('a Content-Length over the limit is refused before the body is read', async () => {
    const err = await downloadUrl(`http://127.0.0.1:${rawServer.port}/declared-huge`, { ...opts, maxBytes: 5 * 1024 ** 3, dest: dest() }).catch(e => e)
    // The server never sends a body byte: a download that waited for one would end in UrlTimeoutError.
    expect(err).toBeInstanceOf(UrlTooLargeError)
    expect(err.declared).toBe(6 * 1024 ** 3)
    expect(err.limit).toBe(5 * 1024 ** 3)
    expect(lastFiles()).toEqual([])
  })

  test('a chunked body that grows past the limit is cut off and nothing is left', async () => {
    const to = dest()
    const err = await downloadUrl(`http://127.0.0.1:${plainServer.port}/chunked`, { ...opts, maxBytes: MB, dest: to }).catch(e => e)
    expect(err).toBeInstanceOf(UrlTooLargeError)
    expect(err.declared).toBeNull()
    expect(lastFiles()).toEqual([])
  })

  test('a body of exactly the limit is accepted', async () => {
    const res = await downloadUrl(`http://127.0.0.1:${plainServer.port}/chunked`, { ...opts, maxBytes: 2 * MB, dest: dest() })
    expect(res.bytes).toBe(2 * MB)
  })

  test('a body that trickles past the time limit: UrlTimeoutError, nothing left', async () => {
    // The body never ends (a byte every 50 ms): only the time limit can stop the download.
    const err = await downloadUrl(`http://127.0.0.1:${rawServer.port}/slow-body`, { ...opts, timeoutMs: 400, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlTimeoutError)
    expect(err.timeoutMs).toBe(400)
    expect(leftovers()).toEqual([])
  })

  test('headers that never come: UrlTimeoutError', async () => {
    const err = await downloadUrl(`http://127.0.0.1:${rawServer.port}/no-headers`, { ...opts, timeoutMs: 300, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlTimeoutError)
  })

  test('a slow lookup counts against the time limit', async () => {
    const lookup = () => new Promise<ResolvedAddress[]>(() => {})
    const err = await downloadUrl('http://stuck.lan/audio.wav', { ...opts, timeoutMs: 200, dest: dest(), lookup }).catch(e => e)
    expect(err).toBeInstanceOf(UrlTimeoutError)
  })

  test('the caller\'s signal aborts with its reason', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('client went away')), 150)
    const err = await downloadUrl(`http://127.0.0.1:${rawServer.port}/slow-body`, { ...opts, dest: dest(), signal: controller.signal }).catch(e => e)
    expect(err).not.toBeInstanceOf(UrlTimeoutError)
    expect(err.message).toBe('client went away')
    expect(leftovers()).toEqual([])
  })
})
