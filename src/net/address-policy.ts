/**
 * Which network addresses a URL supplied by a user may reach (the SSRF address policy), whatever the
 * protocol on top: the classification of IP addresses (loopback, private, link-local, unique-local,
 * CGNAT, cloud metadata, the IPv4-mapped / NAT64 / 6to4 forms of those, and everything that is not
 * public unicast), the host names refused before any lookup, the ports no client talks to, and the
 * check of every address a name resolves to. Anything that connects to a user-supplied address uses
 * this module, so the rule lives once.
 */
import { isIP } from './ip-literal'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>

/** The Fetch standard's "bad ports": no browser connects to these, nor do we. */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
])

/** True for a port that belongs to a protocol other than HTTP (mail, chat, SIP, …). */
export function isBlockedPort(port: number): boolean {
  return BAD_PORTS.has(port)
}

/** Names of cloud metadata services, refused before any lookup. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal'])

/**
 * Host names refused by name before any lookup: `localhost` and `*.localhost` (the local machine) and
 * the cloud metadata services; null for any other name. `hostname`: lower case, no trailing dot.
 */
export function refusedHostName(hostname: string): 'loopback' | 'cloud metadata' | null {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return 'loopback'
  if (METADATA_NAMES.has(hostname)) return 'cloud metadata'
  return null
}

// ---------------------------------------------------------------------------------------------
// Address classification

/** Why an address is not a public unicast one. */
export type AddressClass =
  | 'loopback' | 'private' | 'link-local' | 'unique-local' | 'shared (CGNAT)' | 'cloud metadata'
  | 'unspecified' | 'multicast' | 'broadcast' | 'reserved'

/** Classes that `allowPrivate` permits; the others are never a valid destination. */
const PRIVATE_CLASSES = new Set<AddressClass>(['loopback', 'private', 'link-local', 'unique-local', 'shared (CGNAT)', 'cloud metadata', 'reserved'])

/** True for the classes a private network has (the ones `allowPrivate` permits). */
export function isPrivateClass(cls: AddressClass): boolean {
  return PRIVATE_CLASSES.has(cls)
}

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
// Resolution and the check of every address

export interface AddressPolicy {
  /** allow http and loopback/private/link-local targets (NOTESVC_ALLOW_PRIVATE_URLS) */
  allowPrivate: boolean
  /**
   * Overrides the address policy for single addresses: `true` allows, `false` refuses, `undefined`
   * keeps the built-in rule. Meant for tests, which must treat a loopback address as "public" to
   * exercise the guarded path without sending traffic off the machine. Never set it in the service.
   */
  isAllowedAddress?: (address: string, family: 4 | 6) => boolean | undefined
}

/** The address refused and why; `cls` null when the resolver answered something that is not an IP. */
export interface AddressRefusal {
  address: string
  cls: AddressClass | null
}

/**
 * The first of `addresses` the policy refuses, or null when every one may be reached. A name is
 * reachable only when ALL its addresses are: a connection may go to any of them.
 */
export function refusedAddress(addresses: ResolvedAddress[], policy: AddressPolicy): AddressRefusal | null {
  for (const a of addresses) {
    const override = policy.isAllowedAddress?.(a.address, a.family)
    if (override === true) continue
    let cls: AddressClass | null
    try {
      cls = classifyAddress(a.address)
    } catch {
      return { address: a.address, cls: null }
    }
    if (override === false) cls ??= 'reserved'
    else if (cls === null || (policy.allowPrivate && PRIVATE_CLASSES.has(cls))) continue
    return { address: a.address, cls }
  }
  return null
}

/** The system resolver (`dns.lookup`), every address in the order it gives them. */
const systemLookup: LookupFn = async hostname => {
  const { lookup } = await import('node:dns/promises')
  const found = await lookup(hostname, { all: true, verbatim: true })
  return found.map(a => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
}

/** Resolves `hostname` with `lookup` (default: the system resolver); an abort of `signal` rejects at once. */
export function resolveHost(hostname: string, o: { lookup?: LookupFn; signal?: AbortSignal }): Promise<ResolvedAddress[]> {
  const found = (o.lookup ?? systemLookup)(hostname)
  const signal = o.signal
  if (!signal) return found
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<ResolvedAddress[]>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    found.then(
      v => { signal.removeEventListener('abort', onAbort); resolve(v) },
      e => { signal.removeEventListener('abort', onAbort); reject(e) },
    )
  })
}
