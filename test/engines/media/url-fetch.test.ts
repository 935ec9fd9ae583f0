/**
 * The audioUrl guard. Every connection these tests make goes to loopback: the servers listen on
 * 127.0.0.1 and 127.0.0.2, names are resolved by an injected lookup, and `fetch` itself is wrapped for
 * the whole file so that a request to any other address fails the test instead of leaving the machine,
 * even if the guard were broken.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { downloadUrl, UrlTimeoutError, UrlTooLargeError, type DownloadUrlOptions } from '../../../src/engines/media/url-fetch'
import { vetUrl, UrlFetchFailedError, UrlRefusedError, type ResolvedAddress } from '../../../src/net/outbound'
import { classifyAddress } from '../../../src/net/address-policy'
import { makeWav } from '../../fixtures/wav'
import { freePort, tempDir } from '../../helpers/process'

// A self-signed certificate for public.test and *.public.test (valid 2000–2100), made for these tests
// only with `openssl ca -selfsign`; the key protects nothing.
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBhjCCASygAwIBAgIBATAKBggqhkjOPQQDAjAWMRQwEgYDVQQDDAtwdWJsaWMu
dGVzdDAgFw0wMDAxMDEwMDAwMDBaGA8yMTAwMDEwMTAwMDAwMFowFjEUMBIGA1UE
AwwLcHVibGljLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATXsN2T4fLm
QXiRAd72C4Z/y/W7s1akmdnEvseUivysxfiiobMio7piEhI4QvkysiT/ot2exkku
MblXWD7BCerNo2kwZzAlBgNVHREEHjAcggtwdWJsaWMudGVzdIINKi5wdWJsaWMu
dGVzdDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIChDAdBgNVHQ4EFgQU
NfuBDSraPqcoPalrl4OGiJwNTjIwCgYIKoZIzj0EAwIDSAAwRQIhAO0gPqqk23VD
C19bLxMJs38zBBkKxDfCA/bhk9Z+9mY6AiBxf0itW73jCTEf9VrVzt1tXhV5fn+R
KvVvqOangetU9Q==
-----END CERTIFICATE-----
`
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgz8CMnqJXkvQZl1n0
/4FuaETvaEbSMvsXi3p0fw0ZiBahRANCAATXsN2T4fLmQXiRAd72C4Z/y/W7s1ak
mdnEvseUivysxfiiobMio7piEhI4QvkysiT/ot2exkkuMblXWD7BCerN
-----END PRIVATE KEY-----
`

const WAV = new Uint8Array(makeWav({ seconds: 1, sampleRate: 8000 }))
const MB = 1024 * 1024

// ---------------------------------------------------------------------------------------------
// The network fence: fetch may reach loopback only.

const realFetch = globalThis.fetch
const offLoopback: string[] = []
const fetched: string[] = []

function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '')
  return /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1'
}

beforeAll(() => {
  const fenced = (input: string | URL | Request, init?: BunFetchRequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input)
    fetched.push(url.href)
    if (!isLoopbackHost(url.hostname)) {
      offLoopback.push(url.href)
      return Promise.reject(new Error(`test fence: refused to connect to ${url.hostname}`))
    }
    return realFetch(input, init)
  }
  globalThis.fetch = Object.assign(fenced, { preconnect: realFetch.preconnect }) as typeof fetch
})

afterAll(() => {
  globalThis.fetch = realFetch
})

afterEach(() => {
  expect(offLoopback).toEqual([])
})

// ---------------------------------------------------------------------------------------------
// Servers that count what they see

interface Seen { path: string; host: string | null; server: string }
const seen: Seen[] = []
const hits = (server?: string) => seen.filter(s => !server || s.server === server).length

function routes(name: string, port: () => number) {
  return async (req: Request) => {
    const url = new URL(req.url)
    seen.push({ path: url.pathname, host: req.headers.get('host'), server: name })
    const p = url.pathname
    if (p === '/audio.wav') return new Response(WAV, { headers: { 'content-type': 'audio/wav' } })
    const hop = /^\/r\/(\d+)$/.exec(p)
    if (hop) {
      const n = Number(hop[1])
      // alternate relative and absolute Locations
      const next = n === 0 ? '/audio.wav' : n % 2 ? `/r/${n - 1}` : `${url.protocol}//${req.headers.get('host')}/r/${n - 1}`
      return new Response(null, { status: n % 2 ? 302 : 301, headers: { location: next } })
    }
    if (p === '/see-other') return new Response(null, { status: 303, headers: { location: 'audio.wav' } })
    if (p === '/no-location') return new Response(null, { status: 302 })
    if (p === '/missing') return new Response('no such file', { status: 404 })
    if (p === '/broken') return new Response('oops', { status: 500 })
    if (p === '/chunked') {
      // 2 MB in 64 KB chunks, no Content-Length
      let sent = 0
      return new Response(new ReadableStream({
        pull(c) {
          if (sent >= 2 * MB) return c.close()
          c.enqueue(new Uint8Array(64 * 1024).fill(7))
          sent += 64 * 1024
        },
      }), { headers: { 'content-type': 'audio/mpeg' } })
    }
    if (p === '/to-private') return Response.redirect(`https://internal.public.test:${privateServer.port}/secret`, 302)
    if (p === '/to-metadata') return Response.redirect('https://169.254.169.254/latest/meta-data/', 302)
    if (p === '/to-metadata-name') return Response.redirect('https://metadata.google.internal/computeMetadata/v1/', 302)
    if (p === '/to-http') return Response.redirect(`http://public.test:${plainServer.port}/audio.wav`, 302)
    if (p === '/to-localhost') return Response.redirect(`https://localhost:${port()}/audio.wav`, 307)
    if (p === '/to-public-chain') return Response.redirect(`https://cdn.public.test:${port()}/r/2`, 302)
    return new Response('not found', { status: 404 })
  }
}

let plainServer: ReturnType<typeof Bun.serve>
let secureServer: ReturnType<typeof Bun.serve>
let privateServer: ReturnType<typeof Bun.serve>
let rawServer: Bun.TCPSocketListener<undefined>
let closedPort: number
let work: ReturnType<typeof tempDir>
let n = 0
const dest = () => join(work.path, `media-${++n}`)
const leftovers = () => readdirSync(work.path).filter(f => f.includes('.part'))

beforeAll(async () => {
  work = tempDir('notesvc-urlfetch-')
  plainServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: routes('plain', () => plainServer.port!) })
  secureServer = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: routes('secure', () => secureServer.port!) })
  // the "internal" service a redirect must never reach
  privateServer = Bun.serve({ hostname: '127.0.0.2', port: 0, tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: routes('private', () => privateServer.port!) })
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
  secureServer.stop(true)
  privateServer.stop(true)
  rawServer.stop(true)
  work.remove()
})

// ---------------------------------------------------------------------------------------------
// Helpers

function fakeDns(table: Record<string, string | string[]>) {
  const asked: string[] = []
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname)
    const found = table[hostname]
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return (Array.isArray(found) ? found : [found]).map(address => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { lookup, asked }
}

/** For the https tests: 127.0.0.1 stands in for a public address; every other rule stays. */
const loopbackIsPublic: DownloadUrlOptions['isAllowedAddress'] = address => (address === '127.0.0.1' ? true : undefined)

const base = { maxBytes: 10 * MB, timeoutMs: 5000 }

async function refused(url: string, opts: Partial<DownloadUrlOptions> = {}): Promise<UrlRefusedError> {
  const before = seen.length
  const fetchesBefore = fetched.length
  const err = await downloadUrl(url, { ...base, dest: dest(), allowPrivate: false, ...opts }).catch(e => e)
  expect(err).toBeInstanceOf(UrlRefusedError)
  expect(seen.length).toBe(before) // no server saw anything
  expect(fetched.length).toBe(fetchesBefore) // not even a connection was attempted
  expect(leftovers()).toEqual([])
  return err as UrlRefusedError
}

// ---------------------------------------------------------------------------------------------

describe('address classification', () => {
  test.each([
    ['10.0.0.5', 'private'], ['172.16.3.4', 'private'], ['192.168.1.1', 'private'], ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'], ['169.254.1.1', 'link-local'], ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'shared (CGNAT)'], ['100.100.100.200', 'shared (CGNAT)'], ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'], ['224.0.0.251', 'multicast'], ['240.0.0.1', 'reserved'], ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'], ['::', 'unspecified'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['fd00::1', 'unique-local'],
    ['fc12:3456::1', 'unique-local'], ['fd00:ec2::254', 'cloud metadata'], ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.0.0.5', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'], ['::127.0.0.1', 'loopback'], ['64:ff9b::a00:5', 'private'],
    ['2002:a9fe:a9fe::1', 'cloud metadata'], ['2001:db8::1', 'reserved'], ['2001::1', 'reserved'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls as ReturnType<typeof classifyAddress>)
  })

  test.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::6810:85e5', '::ffff:8.8.8.8', '64:ff9b::808:808'])('%s is public', address => {
    expect(classifyAddress(address)).toBeNull()
  })
})

describe('refused before any connection (NOTESVC_ALLOW_PRIVATE_URLS off)', () => {
  test('http is refused: only https is fetched', async () => {
    const err = await refused(`http://127.0.0.1:${plainServer.port}/audio.wav`)
    expect(err.reason).toBe('scheme')
    expect(err.message).toContain('only https URLs are fetched')
  })

  test.each([
    ['an IPv4 loopback literal', (p: number) => `https://127.0.0.1:${p}/audio.wav`, 'loopback'],
    ['an IPv6 loopback literal', (p: number) => `https://[::1]:${p}/audio.wav`, 'loopback'],
    ['a decimal IPv4 literal', (p: number) => `https://2130706433:${p}/audio.wav`, 'loopback'],
    ['a hex IPv4 literal', (p: number) => `https://0x7f.1:${p}/audio.wav`, 'loopback'],
    ['an IPv4-mapped IPv6 literal', (p: number) => `https://[::ffff:7f00:1]:${p}/audio.wav`, 'loopback'],
    ['a metadata literal', () => 'https://169.254.169.254/latest/meta-data/', 'cloud metadata'],
  ])('%s', async (_what, url, cls) => {
    const err = await refused(url(secureServer.port!))
    expect(err.reason).toBe('address')
    expect(err.message).toContain(cls)
  })

  test('localhost is refused by name, without a lookup', async () => {
    const dns = fakeDns({ localhost: '127.0.0.1' })
    const err = await refused(`https://localhost:${secureServer.port}/audio.wav`, { lookup: dns.lookup })
    expect(err.message).toContain('localhost is the local machine')
    expect(dns.asked).toEqual([])
    await refused(`https://media.localhost:${secureServer.port}/audio.wav`, { lookup: dns.lookup })
  })

  test('metadata.google.internal is refused by name, without a lookup', async () => {
    const dns = fakeDns({ 'metadata.google.internal': '127.0.0.1' })
    const err = await refused('https://metadata.google.internal/computeMetadata/v1/', { lookup: dns.lookup })
    expect(err.message).toContain('cloud metadata')
    expect(dns.asked).toEqual([])
    await refused('https://METADATA.google.internal./computeMetadata/v1/', { lookup: dns.lookup })
  })

  test.each([
    ['10.0.0.5', 'resolves to a private address 10.0.0.5; private, loopback, link-local and cloud metadata addresses are refused'],
    ['169.254.169.254', 'resolves to a cloud metadata address 169.254.169.254'],
    ['::1', 'resolves to a loopback address ::1'],
    ['fd00::1', 'resolves to a unique-local address fd00::1'],
    ['::ffff:127.0.0.1', 'resolves to a loopback address ::ffff:127.0.0.1'],
    ['fe80::1', 'resolves to a link-local address fe80::1'],
    ['100.64.0.1', 'resolves to a shared (CGNAT) address 100.64.0.1'],
    ['127.0.0.2', 'resolves to a loopback address 127.0.0.2'],
    ['0.0.0.0', 'resolves to an unspecified address 0.0.0.0'],
  ])('a name that resolves to %s', async (address, message) => {
    const dns = fakeDns({ 'media.public.test': address })
    const err = await refused(`https://media.public.test:${secureServer.port}/audio.wav`, { lookup: dns.lookup, isAllowedAddress: loopbackIsPublic, ca: TEST_CERT })
    expect(err.reason).toBe('address')
    expect(err.message).toContain(`media.public.test ${message}`)
    expect(dns.asked).toEqual(['media.public.test'])
  })

  test('a name is refused when ANY of its addresses is private, even if the first is fine', async () => {
    const dns = fakeDns({ 'media.public.test': ['127.0.0.1', '10.0.0.5'] })
    const err = await refused(`https://media.public.test:${secureServer.port}/audio.wav`, { lookup: dns.lookup, isAllowedAddress: loopbackIsPublic, ca: TEST_CERT })
    expect(err.message).toContain('10.0.0.5')
  })

  test('credentials in the URL, other schemes and non-HTTP ports are refused', async () => {
    const dns = fakeDns({ 'public.test': '127.0.0.1' })
    const o = { lookup: dns.lookup, isAllowedAddress: loopbackIsPublic, ca: TEST_CERT }
    expect((await refused(`https://user:secret@public.test:${secureServer.port}/audio.wav`, o)).reason).toBe('credentials')
    expect((await refused('ftp://public.test/audio.wav', o)).reason).toBe('scheme')
    expect((await refused('file:///etc/passwd', o)).reason).toBe('scheme')
    expect((await refused('data:audio/wav;base64,UklGRg==', o)).reason).toBe('scheme')
    expect((await refused('https://public.test:25/audio.wav', o)).reason).toBe('port')
    expect((await refused('not a url', o)).reason).toBe('invalid')
    expect(dns.asked).toEqual([])
  })

  test('the message does not repeat the query string (signed URLs carry secrets there)', async () => {
    const err = await refused('http://127.0.0.1/audio.wav?X-Amz-Signature=topsecret')
    expect(err.message).not.toContain('topsecret')
  })

  test('vetUrl checks without connecting, for validation before charging', async () => {
    const dns = fakeDns({ 'media.public.test': '10.0.0.5', 'ok.public.test': '127.0.0.1' })
    await expect(vetUrl('https://media.public.test/a.mp3', { allowPrivate: false, lookup: dns.lookup })).rejects.toBeInstanceOf(UrlRefusedError)
    const ok = await vetUrl('https://ok.public.test/a.mp3', { allowPrivate: false, lookup: dns.lookup, isAllowedAddress: loopbackIsPublic })
    expect(ok.addresses).toEqual([{ address: '127.0.0.1', family: 4 }])
    expect(fetched.length).toBe(0)
  })
})

describe('https to a pinned address (127.0.0.1 treated as public)', () => {
  const o = () => {
    const dns = fakeDns({ 'public.test': '127.0.0.1', 'cdn.public.test': '127.0.0.1', 'internal.public.test': '127.0.0.2', 'other.test': '127.0.0.1' })
    return { dns, opts: { ...base, allowPrivate: false, lookup: dns.lookup, isAllowedAddress: loopbackIsPublic, ca: TEST_CERT } }
  }

  test('downloads through the vetted address, with the name in Host and SNI and the certificate checked against it', async () => {
    // public.test exists in no DNS: success shows that the connection went to the address the guard vetted
    const { dns, opts } = o()
    const before = hits('secure')
    const to = dest()
    const res = await downloadUrl(`https://public.test:${secureServer.port}/audio.wav`, { ...opts, dest: to })
    expect(res).toEqual({ bytes: WAV.byteLength, contentType: 'audio/wav', finalUrl: `https://public.test:${secureServer.port}/audio.wav` })
    expect(readFileSync(to).equals(WAV)).toBe(true)
    expect(hits('secure')).toBe(before + 1)
    expect(seen.at(-1)!.host).toBe(`public.test:${secureServer.port}`)
    expect(dns.asked).toEqual(['public.test'])
    expect(fetched.at(-1)).toBe(`https://127.0.0.1:${secureServer.port}/audio.wav`)
  })

  test('a certificate for another name fails: pinning does not weaken TLS', async () => {
    const { opts } = o()
    const err = await downloadUrl(`https://other.test:${secureServer.port}/audio.wav`, { ...opts, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlFetchFailedError)
    expect(err.status).toBeNull()
    expect(leftovers()).toEqual([])
  })

  test('an untrusted certificate fails', async () => {
    const { opts } = o()
    const err = await downloadUrl(`https://public.test:${secureServer.port}/audio.wav`, { ...opts, ca: undefined, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlFetchFailedError)
  })

  test('a redirect chain across names is followed, each hop resolved and vetted', async () => {
    const { dns, opts } = o()
    const res = await downloadUrl(`https://public.test:${secureServer.port}/to-public-chain`, { ...opts, dest: dest() })
    expect(res.finalUrl).toBe(`https://cdn.public.test:${secureServer.port}/audio.wav`)
    expect(res.bytes).toBe(WAV.byteLength)
    expect(dns.asked).toEqual(['public.test', 'cdn.public.test', 'cdn.public.test', 'cdn.public.test', 'cdn.public.test'])
  })

  test('a redirect to a private host is refused at that hop; the private server sees nothing', async () => {
    const { dns, opts } = o()
    const before = hits('secure')
    const err = await downloadUrl(`https://public.test:${secureServer.port}/to-private`, { ...opts, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlRefusedError)
    expect(err.message).toContain('internal.public.test resolves to a loopback address 127.0.0.2')
    expect(hits('secure')).toBe(before + 1)
    expect(hits('private')).toBe(0)
    expect(dns.asked).toEqual(['public.test', 'internal.public.test'])
    expect(leftovers()).toEqual([])
  })

  test.each([
    ['/to-http', 'scheme'],
    ['/to-metadata', 'address'],
    ['/to-metadata-name', 'host'],
    ['/to-localhost', 'host'],
  ])('a redirect %s is refused (%s)', async (path, reason) => {
    const { opts } = o()
    const before = hits()
    const err = await downloadUrl(`https://public.test:${secureServer.port}${path}`, { ...opts, dest: dest() }).catch(e => e)
    expect(err).toBeInstanceOf(UrlRefusedError)
    expect(err.reason).toBe(reason)
    expect(hits()).toBe(before + 1) // the first hop only
  })
})

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
    expect(readdirSync(work.path).filter(f => f.startsWith(`media-${n}`))).toEqual([])
  })

  test('a chunked body that grows past the limit is cut off and nothing is left', async () => {
    const to = dest()
    const err = await downloadUrl(`http://127.0.0.1:${plainServer.port}/chunked`, { ...opts, maxBytes: MB, dest: to }).catch(e => e)
    expect(err).toBeInstanceOf(UrlTooLargeError)
    expect(err.declared).toBeNull()
    expect(readdirSync(work.path).filter(f => f.startsWith(`media-${n}`))).toEqual([])
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

  test('addresses that are never destinations stay refused', async () => {
    for (const url of [`http://0.0.0.0:${plainServer.port}/audio.wav`, 'http://224.0.0.1/audio.wav', 'http://255.255.255.255/audio.wav']) {
      const before = fetched.length
      const err = await downloadUrl(url, { ...opts, dest: dest() }).catch(e => e)
      expect(err).toBeInstanceOf(UrlRefusedError)
      expect(fetched.length).toBe(before)
    }
  })
})
