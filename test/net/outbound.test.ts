/**
 * The SSRF guard of outbound requests (src/net/outbound.ts): what `vetUrl` refuses before any
 * connection, and how `requestPinned` connects to the vetted address only (the name in Host and SNI,
 * the certificate checked against it), at the first request and at every redirect. Driven through
 * downloadUrl, its user for `audioUrl`, so that "nothing was connected to" is seen by the servers; on
 * loopback only (test/helpers/loopback-hosts.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { downloadUrl, type DownloadUrlOptions } from '../../src/engines/media/url-fetch'
import { vetUrl, UrlFetchFailedError, UrlRefusedError } from '../../src/net/outbound'
import { countingHosts, downloadFolder, fakeDns, fenceFetchToLoopback, MB, WAV } from '../helpers/loopback-hosts'

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

const { fetched } = fenceFetchToLoopback()
const { seen, hits, routes } = countingHosts()
const { dest, leftovers } = downloadFolder()

/** The redirects that lead where the guard must stop them (`port`: the port of the server redirecting). */
const guardedRedirects = (port: () => number) => (p: string) => {
  if (p === '/to-private') return Response.redirect(`https://internal.public.test:${privateServer.port}/secret`, 302)
  if (p === '/to-metadata') return Response.redirect('https://169.254.169.254/latest/meta-data/', 302)
  if (p === '/to-metadata-name') return Response.redirect('https://metadata.google.internal/computeMetadata/v1/', 302)
  if (p === '/to-http') return Response.redirect(`http://public.test:${plainServer.port}/audio.wav`, 302)
  if (p === '/to-localhost') return Response.redirect(`https://localhost:${port()}/audio.wav`, 307)
  if (p === '/to-public-chain') return Response.redirect(`https://cdn.public.test:${port()}/r/2`, 302)
  return undefined
}

let plainServer: ReturnType<typeof Bun.serve>
let secureServer: ReturnType<typeof Bun.serve>
let privateServer: ReturnType<typeof Bun.serve>

beforeAll(() => {
  plainServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: routes('plain', guardedRedirects(() => plainServer.port!)) })
  secureServer = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: routes('secure', guardedRedirects(() => secureServer.port!)) })
  // the "internal" service a redirect must never reach
  privateServer = Bun.serve({ hostname: '127.0.0.2', port: 0, tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: routes('private', guardedRedirects(() => privateServer.port!)) })
})

afterAll(() => {
  plainServer.stop(true)
  secureServer.stop(true)
  privateServer.stop(true)
})

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

  test('addresses that are never destinations stay refused', async () => {
    for (const url of [`http://0.0.0.0:${plainServer.port}/audio.wav`, 'http://224.0.0.1/audio.wav', 'http://255.255.255.255/audio.wav']) {
      const before = fetched.length
      const err = await downloadUrl(url, { ...opts, dest: dest() }).catch(e => e)
      expect(err).toBeInstanceOf(UrlRefusedError)
      expect(fetched.length).toBe(before)
    }
  })
})
