/**
 * The outbound-URL policy: what a user-supplied URL may reach (a media `audioUrl`, a webhook
 * endpoint) without letting the user reach what only the server can reach (SSRF), and the one way to
 * make a request to such a URL. Used by media downloads (`engines/media/url-fetch.ts`) and webhook
 * deliveries (`modules/webhooks`).
 *
 * The guard, at the first request and again at every redirect:
 * - scheme: `https:` only; `http:` too when private targets are allowed (local development, tests);
 * - no credentials in the URL (`https://user:pass@host/`);
 * - port: any, except the ports the Fetch standard blocks for every client (SMTP, IRC, SIP, …), so a
 *   URL cannot be used to talk to mail or chat servers on a public host;
 * - host: the names `localhost`, `*.localhost` and the cloud metadata names are refused by name; every
 *   other name is resolved here, and the request is refused when ANY address it resolves to is
 *   loopback, private, link-local, unique-local, CGNAT, cloud metadata, an IPv4-mapped / NAT64 / 6to4
 *   form of one of those, or not a unicast address at all (unspecified, multicast, broadcast,
 *   documentation and other reserved ranges).
 * The port, name and address rules are the address policy of `address-policy.ts`; this file adds the
 * URL rules (scheme, credentials), the messages, and the pinned request.
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
import { isIP } from './ip-literal'
import {
  isBlockedPort, isPrivateClass, refusedAddress, refusedHostName, resolveHost,
  type AddressPolicy, type LookupFn, type ResolvedAddress,
} from './address-policy'

export type { LookupFn, ResolvedAddress }

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

const USER_AGENT = 'notesvc (+self-hosted; media fetch)'

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
export function shown(url: string | URL): string {
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
        checkServerIdentity: (_host, cert) => (require('node:tls') as typeof import('node:tls')).checkServerIdentity(expected, cert),
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
