/**
 * Fetching a user-supplied media URL (`createTranscription`'s `audioUrl`) without letting the user
 * reach what only the server can reach (SSRF).
 *
 * The guard, at the first request and again at every redirect:
 * - scheme: `https:` only; `http:` too when private targets are allowed (local development, tests);
 * - no credentials in the URL (`https://user:pass@host/`);
 * - port: any, except the ports the Fetch standard blocks for every client (SMTP, IRC, SIP, …), so a
 *   media URL cannot be used to talk to mail or chat servers on a public host;
 * - host: the names `localhost`, `*.localhost` and the cloud metadata names are refused by name; every
 *   other name is resolved here, and the request is refused when ANY address it resolves to is
 *   loopback, private, link-local, unique-local, CGNAT, cloud metadata, an IPv4-mapped / NAT64 / 6to4
 *   form of one of those, or not a unicast address at all (unspecified, multicast, broadcast,
 *   documentation and other reserved ranges).
 *
 * DNS pinning: the connection goes to the address that was vetted, never to a second resolution of
 * the name (which a hostile DNS server could answer differently: DNS rebinding). The request is made to
 * the IP literal with the original `Host` header; for https, Bun's fetch takes `tls.serverName` (the SNI
 * and the name the certificate is verified against) and `tls.checkServerIdentity`, so the server's
 * certificate is still checked against the original host name. A request with its own
 * `checkServerIdentity` gets a connection of its own (no pooled connection is reused across names).
 * Requests go direct (`proxy: false`): a proxy would resolve and connect on its own, out of the guard's
 * sight.
 *
 * Residual risks: a public host may still answer with content the caller did not expect (size and time
 * limits apply); a server that holds a valid certificate for the name is trusted as usual.
 */
import { randomUUID } from 'node:crypto'
import { lookup as dnsLookup } from 'node:dns/promises'
import { open, rename, unlink } from 'node:fs/promises'
import { isIP } from 'node:net'
import { checkServerIdentity } from 'node:tls'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>

export interface DownloadUrlOptions {
  /** where the body is written; it appears only when the whole body arrived within the limits */
  dest: string
  /** refuse bodies larger than this many bytes */
  maxBytes: number
  /** the whole download (every hop, DNS included) must finish within this many milliseconds */
  timeoutMs: number
  /** allow http and loopback/private/link-local targets (NOTESVC_ALLOW_PRIVATE_URLS) */
  allowPrivate: boolean
  /** DNS resolution; default: the system resolver (`dns.lookup`, all addresses) */
  lookup?: LookupFn
  signal?: AbortSignal
  /** redirects followed at most (default 5) */
  maxRedirects?: number
  /** extra CA certificates (PEM) to trust for https, e.g. an organisation's private CA */
  ca?: string | string[]
  /**
   * Overrides the address policy for single addresses: `true` allows, `false` refuses, `undefined`
   * keeps the built-in rule. Meant for tests, which must treat a loopback address as "public" to
   * exercise the guarded path without sending traffic off the machine. Never set it in the service.
   */
  isAllowedAddress?: (address: string, family: 4 | 6) => boolean | undefined
}

export interface DownloadResult {
  bytes: number
  contentType: string | null
  /** the URL the body came from, after redirects (with its host name, not the pinned address) */
  finalUrl: string
}

/** Base of the errors below; `url` is the URL being fetched when it failed. */
export class UrlError extends Error {
  constructor(message: string, readonly url: string) {
    super(message)
    this.name = new.target.name
  }
}

export type RefusalReason = 'scheme' | 'credentials' | 'port' | 'host' | 'address' | 'invalid'

/** The guard refused the URL (before any connection to it): a 400 for the caller. */
export class UrlRefusedError extends UrlError {
  constructor(message: string, url: string, readonly reason: RefusalReason) {
    super(message, url)
  }
}

/** The body is, or says it is, larger than `maxBytes`. */
export class UrlTooLargeError extends UrlError {
  constructor(message: string, url: string, readonly limit: number, readonly declared: number | null) {
    super(message, url)
  }
}

/** The download did not finish within `timeoutMs`. */
export class UrlTimeoutError extends UrlError {
  constructor(message: string, url: string, readonly timeoutMs: number) {
    super(message, url)
  }
}

/** The remote side failed: DNS, connection, TLS, an error status (`status`), too many redirects. */
export class UrlFetchFailedError extends UrlError {
  constructor(message: string, url: string, readonly status: number | null) {
    super(message, url)
  }
}

const DEFAULT_MAX_REDIRECTS = 5
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
const USER_AGENT = 'notesvc (+self-hosted; media fetch)'

/** The Fetch standard's "bad ports": no browser connects to these, nor do we. */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
])

/** Names of cloud metadata services, refused before any lookup. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal'])

// ---------------------------------------------------------------------------------------------
// Address classification

/** Why an address is not a public unicast one. */
export type AddressClass =
  | 'loopback' | 'private' | 'link-local' | 'unique-local' | 'shared (CGNAT)' | 'cloud metadata'
  | 'unspecified' | 'multicast' | 'broadcast' | 'reserved'

/** Classes that `allowPrivate` permits; the others are never a valid destination. */
const PRIVATE_CLASSES = new Set<AddressClass>(['loopback', 'private', 'link-local', 'unique-local', 'shared (CGNAT)', 'cloud metadata', 'reserved'])

function parseIPv4(s: string): number[] | null {
  const parts = s.split('.')
  if (parts.length !== 4) return null
  const out: number[] = []
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null
    const n = Number(p)
    if (n > 255) return null
    out.push(n)
  }
  return out
}

/** Eight 16-bit groups, or null when `s` is not an IPv6 address. Zone ids (`%eth0`) are dropped. */
function parseIPv6(input: string): number[] | null {
  let s = input.replace(/^\[|\]$/g, '')
  const zone = s.indexOf('%')
  if (zone >= 0) s = s.slice(0, zone)
  if (isIP(s) !== 6) return null
  let tail: number[] = []
  const lastColon = s.lastIndexOf(':')
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1))
    if (!v4) return null
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!]
    s = s.slice(0, lastColon + 1) + '0:0'
  }
  const [head, rest] = s.includes('::') ? s.split('::') as [string, string] : [s, null]
  const toGroups = (x: string) => (x === '' ? [] : x.split(':').map(g => parseInt(g, 16)))
  let groups: number[]
  if (rest === null) {
    groups = toGroups(head)
  } else {
    const a = toGroups(head)
    const b = toGroups(rest)
    groups = [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b]
  }
  if (tail.length) groups.splice(6, 2, tail[0]!, tail[1]!)
  return groups.length === 8 && groups.every(g => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null
}

function classifyIPv4(b: number[]): AddressClass | null {
  const [a, c, d, e] = b as [number, number, number, number]
  if (a === 169 && c === 254 && d === 169 && e === 254) return 'cloud metadata'
  if (a === 0) return 'unspecified'
  if (a === 127) return 'loopback'
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168)) return 'private'
  if (a === 169 && c === 254) return 'link-local'
  if (a === 100 && c >= 64 && c <= 127) return 'shared (CGNAT)'
  if (a === 255 && c === 255 && d === 255 && e === 255) return 'broadcast'
  if (a >= 224 && a <= 239) return 'multicast'
  if (a >= 240) return 'reserved'
  if (a === 192 && c === 0 && d === 0) return 'reserved' // IETF protocol assignments
  if (a === 192 && c === 0 && d === 2) return 'reserved' // TEST-NET-1
  if (a === 198 && c === 51 && d === 100) return 'reserved' // TEST-NET-2
  if (a === 203 && c === 0 && d === 113) return 'reserved' // TEST-NET-3
  if (a === 198 && (c === 18 || c === 19)) return 'reserved' // benchmarking
  if (a === 192 && c === 88 && d === 99) return 'reserved' // 6to4 relay anycast (deprecated)
  return null
}

function v4FromGroups(hi: number, lo: number): number[] {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]
}

function classifyIPv6(g: number[]): AddressClass | null {
  const zeroTo = (n: number) => g.slice(0, n).every(x => x === 0)
  if (zeroTo(8)) return 'unspecified'
  if (zeroTo(7) && g[7] === 1) return 'loopback'
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d: judge the IPv4 address
  if (zeroTo(5) && g[5] === 0xffff) return classifyIPv4(v4FromGroups(g[6]!, g[7]!))
  if (zeroTo(4) && g[4] === 0xffff && g[5] === 0) return classifyIPv4(v4FromGroups(g[6]!, g[7]!))
  // IPv4-compatible ::a.b.c.d (deprecated) and the rest of ::/96
  if (zeroTo(6)) return classifyIPv4(v4FromGroups(g[6]!, g[7]!)) ?? 'reserved'
  // NAT64 64:ff9b::/96 reaches the embedded IPv4 address; 64:ff9b:1::/48 is for local use
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every(x => x === 0)) return classifyIPv4(v4FromGroups(g[6]!, g[7]!))
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'private'
  // 6to4 2002:V4HI:V4LO::/48
  if (g[0] === 0x2002) return classifyIPv4(v4FromGroups(g[1]!, g[2]!))
  // Teredo 2001:0::/32: the client address is obscured, so no judgement is possible
  if (g[0] === 0x2001 && g[1] === 0) return 'reserved'
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'reserved' // documentation
  if (g[0] === 0x100 && g.slice(1, 4).every(x => x === 0)) return 'reserved' // discard-only 100::/64
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every(x => x === 0) && g[7] === 0x254) return 'cloud metadata' // AWS fd00:ec2::254
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique-local'
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local'
  if ((g[0]! & 0xffc0) === 0xfec0) return 'private' // site-local (deprecated)
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast'
  if ((g[0]! & 0xe000) !== 0x2000) return 'reserved' // outside global unicast 2000::/3
  return null
}

/**
 * Why `address` is not a public unicast address, or null when it is one. Throws for a string that is
 * not an IP address.
 */
export function classifyAddress(address: string): AddressClass | null {
  const v4 = isIP(address) === 4 ? parseIPv4(address) : null
  if (v4) return classifyIPv4(v4)
  const v6 = parseIPv6(address)
  if (v6) return classifyIPv6(v6)
  throw new TypeError(`${address} is not an IP address`)
}

// ---------------------------------------------------------------------------------------------
// The guard

export interface VetOptions {
  allowPrivate: boolean
  lookup?: LookupFn
  isAllowedAddress?: DownloadUrlOptions['isAllowedAddress']
  signal?: AbortSignal
}

/** A URL that passed the guard, with the addresses it may be fetched from. */
export interface VettedUrl {
  url: URL
  /** the host name without brackets or a trailing dot */
  hostname: string
  /** true when the URL names an IP address rather than a host name */
  literal: boolean
  addresses: ResolvedAddress[]
}

const defaultLookup: LookupFn = async hostname => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true })
  return found.map(a => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase()
}

/** `url` without query and fragment, for messages: signed URLs carry secrets in the query. */
function shown(url: string | URL): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return String(url).slice(0, 200)
  }
}

const PRIVATE_MESSAGE = 'private, loopback, link-local and cloud metadata addresses are refused'

/**
 * Checks a URL against the guard and resolves its host. Throws UrlRefusedError for a URL the guard
 * refuses, UrlFetchFailedError when the name does not resolve. Makes no connection.
 */
export async function vetUrl(raw: string | URL, o: VetOptions): Promise<VettedUrl> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UrlRefusedError('the URL is not valid; send an absolute https URL', String(raw).slice(0, 200), 'invalid')
  }
  const where = shown(url)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && o.allowPrivate)) {
    const allowed = o.allowPrivate ? 'http and https URLs are' : 'only https URLs are'
    throw new UrlRefusedError(`${where}: the ${url.protocol.replace(/:$/, '')} scheme is refused; ${allowed} fetched`, where, 'scheme')
  }
  if (url.username || url.password) {
    throw new UrlRefusedError(`${where}: URLs with credentials (user:password@) are refused`, where, 'credentials')
  }
  if (url.port && BAD_PORTS.has(Number(url.port))) {
    throw new UrlRefusedError(`${where}: port ${url.port} is refused (it belongs to a protocol other than HTTP)`, where, 'port')
  }
  const hostname = hostOf(url)
  if (!hostname) throw new UrlRefusedError(`${where}: the URL has no host`, where, 'invalid')

  const literal = isIP(hostname) !== 0
  let addresses: ResolvedAddress[]
  if (literal) {
    addresses = [{ address: hostname, family: isIP(hostname) === 6 ? 6 : 4 }]
  } else {
    if (!o.allowPrivate) {
      if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
        throw new UrlRefusedError(`${where}: ${hostname} is the local machine; ${PRIVATE_MESSAGE}`, where, 'host')
      }
      if (METADATA_NAMES.has(hostname)) {
        throw new UrlRefusedError(`${where}: ${hostname} is a cloud metadata service; ${PRIVATE_MESSAGE}`, where, 'host')
      }
    }
    const lookup = o.lookup ?? defaultLookup
    try {
      addresses = await abortable(lookup(hostname), o.signal)
    } catch (err) {
      if (o.signal?.aborted) throw err
      const code = (err as { code?: string }).code
      throw new UrlFetchFailedError(`${where}: the host ${hostname} could not be resolved${code ? ` (${code})` : ''}`, where, null)
    }
    if (!addresses.length) throw new UrlFetchFailedError(`${where}: the host ${hostname} has no addresses`, where, null)
  }

  for (const a of addresses) {
    const override = o.isAllowedAddress?.(a.address, a.family)
    if (override === true) continue
    let cls: AddressClass | null
    try {
      cls = classifyAddress(a.address)
    } catch {
      throw new UrlRefusedError(`${where}: ${hostname} resolved to ${a.address}, which is not an IP address`, where, 'address')
    }
    if (override === false) cls ??= 'reserved'
    else if (cls === null || (o.allowPrivate && PRIVATE_CLASSES.has(cls))) continue
    const article = /^([aeio]|unsp)/.test(cls) ? 'an' : 'a'
    const subject = literal ? `${a.address} is` : `${hostname} resolves to`
    const what = literal ? `${article} ${cls} address` : `${article} ${cls} address ${a.address}`
    throw new UrlRefusedError(`${where}: ${subject} ${what}; ${PRIVATE_CLASSES.has(cls) ? PRIVATE_MESSAGE : 'only public unicast addresses are fetched'}`, where, 'address')
  }
  return { url, hostname, literal, addresses }
}

// ---------------------------------------------------------------------------------------------
// The download

function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(
      v => { signal.removeEventListener('abort', onAbort); resolve(v) },
      e => { signal.removeEventListener('abort', onAbort); reject(e) },
    )
  })
}

/** One request to a vetted URL, connecting to its vetted addresses in turn. */
async function requestPinned(v: VettedUrl, o: { signal: AbortSignal; ca?: string | string[] }): Promise<Response> {
  let lastError: unknown
  for (const a of v.addresses) {
    const target = new URL(v.url)
    target.hostname = a.family === 6 ? `[${a.address}]` : a.address
    const init: BunFetchRequestInit = {
      method: 'GET',
      redirect: 'manual',
      proxy: false,
      signal: o.signal,
      headers: { host: v.url.host, 'user-agent': USER_AGENT, accept: '*/*', 'accept-encoding': 'identity' },
    }
    if (v.url.protocol === 'https:') {
      const expected = v.hostname
      init.tls = {
        ...(v.literal ? {} : { serverName: expected }),
        ...(o.ca ? { ca: o.ca } : {}),
        // verify against the name in the URL, whatever address we connected to
        checkServerIdentity: (_host, cert) => checkServerIdentity(expected, cert),
      }
    }
    try {
      return await fetch(target, init)
    } catch (err) {
      if (o.signal.aborted) throw err
      lastError = err
    }
  }
  const e = lastError as { code?: string; message?: string } | undefined
  const why = e?.code ?? e?.message ?? 'connection failed'
  throw new UrlFetchFailedError(`${shown(v.url)}: could not connect to ${v.hostname} (${why})`, shown(v.url), null)
}

/**
 * Downloads `url` to `opts.dest` behind the SSRF guard described at the top of this file, following
 * up to 5 redirects (each one vetted again), within `maxBytes` and `timeoutMs`. The body is written to
 * a temporary file beside `dest` and renamed when complete; nothing is left behind on failure.
 *
 * Errors: UrlRefusedError, UrlTooLargeError, UrlTimeoutError, UrlFetchFailedError; an abort of
 * `opts.signal` rejects with the signal's reason.
 */
export async function downloadUrl(url: string, opts: DownloadUrlOptions): Promise<DownloadResult> {
  const timer = AbortSignal.timeout(opts.timeoutMs)
  const signal = opts.signal ? AbortSignal.any([opts.signal, timer]) : timer
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS
  let current = url
  const onAbort = (err: unknown): never => {
    if (opts.signal?.aborted) throw opts.signal.reason
    if (timer.aborted) {
      throw new UrlTimeoutError(`${shown(current)}: the download did not finish within ${Math.round(opts.timeoutMs / 100) / 10} seconds`, shown(current), opts.timeoutMs)
    }
    throw err
  }

  try {
    for (let hop = 0; ; hop++) {
      const vetted = await vetUrl(current, { allowPrivate: opts.allowPrivate, lookup: opts.lookup, isAllowedAddress: opts.isAllowedAddress, signal })
      const res = await requestPinned(vetted, { signal, ca: opts.ca })
      const where = shown(vetted.url)

      if (REDIRECT_STATUSES.has(res.status)) {
        await res.body?.cancel().catch(() => {})
        const location = res.headers.get('location')
        if (!location) throw new UrlFetchFailedError(`${where}: the server answered ${res.status} without a Location`, where, res.status)
        if (hop >= maxRedirects) throw new UrlFetchFailedError(`${where}: more than ${maxRedirects} redirects`, where, res.status)
        try {
          current = new URL(location, vetted.url).href
        } catch {
          throw new UrlFetchFailedError(`${where}: the server redirected to an invalid URL`, where, res.status)
        }
        continue
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {})
        throw new UrlFetchFailedError(`${where}: the server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, where, res.status)
      }

      const declared = Number(res.headers.get('content-length') ?? NaN)
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        await res.body?.cancel().catch(() => {})
        throw new UrlTooLargeError(`${where}: the file is ${declared} bytes, over the limit of ${opts.maxBytes} bytes`, where, opts.maxBytes, declared)
      }
      const bytes = await writeBody(res, opts.dest, opts.maxBytes, where)
      return { bytes, contentType: res.headers.get('content-type'), finalUrl: vetted.url.href }
    }
  } catch (err) {
    if (err instanceof UrlError) throw err
    if (signal.aborted) onAbort(err)
    const e = err as { code?: string; message?: string }
    throw new UrlFetchFailedError(`${shown(current)}: the download failed (${e?.code ?? e?.message ?? String(err)})`, shown(current), null)
  }
}

/** Streams the body to a temporary file beside `dest`, then renames it; removes it on any failure. */
async function writeBody(res: Response, dest: string, maxBytes: number, where: string): Promise<number> {
  const tmp = `${dest}.${randomUUID().slice(0, 8)}.part`
  const file = await open(tmp, 'wx')
  let bytes = 0
  let ok = false
  const reader = res.body?.getReader()
  try {
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        bytes += value.byteLength
        if (bytes > maxBytes) {
          await reader.cancel().catch(() => {})
          throw new UrlTooLargeError(`${where}: the file is over the limit of ${maxBytes} bytes`, where, maxBytes, null)
        }
        let off = 0
        while (off < value.byteLength) off += (await file.write(value, off, value.byteLength - off)).bytesWritten
      }
    }
    await file.close()
    await rename(tmp, dest)
    ok = true
    return bytes
  } finally {
    if (!ok) {
      reader?.cancel().catch(() => {})
      await file.close().catch(() => {})
      await unlink(tmp).catch(() => {})
    }
  }
}
