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
 * The port, name and address rules are the address policy of `net/address-policy.ts`; this file adds
 * the URL rules (scheme, credentials), the messages, and the download itself.
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
import { open, rename, unlink } from 'node:fs/promises'
import { isIP } from 'node:net'
import { checkServerIdentity } from 'node:tls'
import {
  isBlockedPort, isPrivateClass, refusedAddress, refusedHostName, resolveHost,
  type AddressPolicy, type LookupFn, type ResolvedAddress,
} from '../../net/address-policy'

export type { LookupFn, ResolvedAddress }

export interface DownloadUrlOptions extends AddressPolicy {
  /** where the body is written; it appears only when the whole body arrived within the limits */
  dest: string
  /** refuse bodies larger than this many bytes */
  maxBytes: number
  /** the whole download (every hop, DNS included) must finish within this many milliseconds */
  timeoutMs: number
  /** DNS resolution; default: the system resolver (`dns.lookup`, all addresses) */
  lookup?: LookupFn
  signal?: AbortSignal
  /** redirects followed at most (default 5) */
  maxRedirects?: number
  /** extra CA certificates (PEM) to trust for https, e.g. an organisation's private CA */
  ca?: string | string[]
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

// ---------------------------------------------------------------------------------------------
// The guard

export interface VetOptions extends AddressPolicy {
  lookup?: LookupFn
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
  if (url.port && isBlockedPort(Number(url.port))) {
    throw new UrlRefusedError(`${where}: port ${url.port} is refused (it belongs to a protocol other than HTTP)`, where, 'port')
  }
  const hostname = hostOf(url)
  if (!hostname) throw new UrlRefusedError(`${where}: the URL has no host`, where, 'invalid')

  const literal = isIP(hostname) !== 0
  let addresses: ResolvedAddress[]
  if (literal) {
    addresses = [{ address: hostname, family: isIP(hostname) === 6 ? 6 : 4 }]
  } else {
    const named = o.allowPrivate ? null : refusedHostName(hostname)
    if (named) {
      const what = named === 'loopback' ? 'the local machine' : 'a cloud metadata service'
      throw new UrlRefusedError(`${where}: ${hostname} is ${what}; ${PRIVATE_MESSAGE}`, where, 'host')
    }
    try {
      addresses = await resolveHost(hostname, o)
    } catch (err) {
      if (o.signal?.aborted) throw err
      const code = (err as { code?: string }).code
      throw new UrlFetchFailedError(`${where}: the host ${hostname} could not be resolved${code ? ` (${code})` : ''}`, where, null)
    }
    if (!addresses.length) throw new UrlFetchFailedError(`${where}: the host ${hostname} has no addresses`, where, null)
  }

  const refused = refusedAddress(addresses, o)
  if (refused) {
    const { address, cls } = refused
    if (cls === null) throw new UrlRefusedError(`${where}: ${hostname} resolved to ${address}, which is not an IP address`, where, 'address')
    const article = /^([aeio]|unsp)/.test(cls) ? 'an' : 'a'
    const subject = literal ? `${address} is` : `${hostname} resolves to`
    const what = literal ? `${article} ${cls} address` : `${article} ${cls} address ${address}`
    throw new UrlRefusedError(`${where}: ${subject} ${what}; ${isPrivateClass(cls) ? PRIVATE_MESSAGE : 'only public unicast addresses are fetched'}`, where, 'address')
  }
  return { url, hostname, literal, addresses }
}

// ---------------------------------------------------------------------------------------------
// The download

/**
 * One request to a vetted URL, connecting to its vetted addresses in turn (a GET unless `o.method`
 * says otherwise; `o.headers` add to or replace the defaults). Redirects are returned, never followed.
 */
export async function requestPinned(v: VettedUrl, o: { signal: AbortSignal; ca?: string | string[]; method?: string; headers?: Record<string, string>; body?: string }): Promise<Response> {
  let lastError: unknown
  for (const a of v.addresses) {
    const target = new URL(v.url)
    target.hostname = a.family === 6 ? `[${a.address}]` : a.address
    const init: BunFetchRequestInit = {
      method: o.method ?? 'GET',
      redirect: 'manual',
      proxy: false,
      signal: o.signal,
      headers: { host: v.url.host, 'user-agent': USER_AGENT, accept: '*/*', 'accept-encoding': 'identity', ...o.headers },
      ...(o.body !== undefined ? { body: o.body } : {}),
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
