/**
 * Outbound requests under test, on loopback only, for the tests of the SSRF guard
 * (test/net/outbound.test.ts) and of downloads (test/engines/media/url-fetch.test.ts): every
 * connection they make goes to loopback. Their servers listen on 127.0.0.1 and 127.0.0.2, names are
 * resolved by an injected lookup (`fakeDns`), and `fetch` itself is wrapped for the whole file
 * (`fenceFetchToLoopback`) so that a request to any other address fails the test instead of leaving
 * the machine, even if the guard were broken.
 *
 * Each function keeps its state per call and registers its hooks in the file that calls it.
 */
import { afterAll, afterEach, beforeAll, expect } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ResolvedAddress } from '../../src/net/outbound'
import { makeWav } from '../fixtures/wav'
import { tempDir } from './process'

export const WAV = new Uint8Array(makeWav({ seconds: 1, sampleRate: 8000 }))
export const MB = 1024 * 1024

function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '')
  return /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1'
}

/**
 * The network fence: for the tests of the calling file, fetch may reach loopback only, and every URL
 * fetched is listed in `fetched`; after each test, nothing was asked of any other address.
 */
export function fenceFetchToLoopback(): { fetched: string[] } {
  const realFetch = globalThis.fetch
  const offLoopback: string[] = []
  const fetched: string[] = []

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

  return { fetched }
}

interface Seen { path: string; host: string | null; server: string }

/**
 * Servers that count what they see: `routes(name)` is the fetch handler of one, serving a WAV, chains
 * of redirects (`/r/N`, alternately relative and absolute), a 303, error statuses and a 2 MB chunked
 * body; `more` answers the paths of the calling file's own before the 404.
 */
export function countingHosts() {
  const seen: Seen[] = []
  const hits = (server?: string) => seen.filter(s => !server || s.server === server).length

  function routes(name: string, more: (path: string) => Response | undefined = () => undefined) {
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
      return more(p) ?? new Response('not found', { status: 404 })
    }
  }

  return { seen, hits, routes }
}

/** A lookup that answers from `table` (a name's address or addresses) and lists the names asked. */
export function fakeDns(table: Record<string, string | string[]>) {
  const asked: string[] = []
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname)
    const found = table[hostname]
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return (Array.isArray(found) ? found : [found]).map(address => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { lookup, asked }
}

/**
 * A folder for the calling file's downloads, removed after its tests: `dest()` names a new file in
 * it, `leftovers()` lists the partial files left anywhere in it, `lastFiles()` every file of the last
 * `dest()` (the file and its partial file).
 */
export function downloadFolder() {
  let work: ReturnType<typeof tempDir>
  let n = 0
  beforeAll(() => {
    work = tempDir('notesvc-urlfetch-')
  })
  afterAll(() => {
    work.remove()
  })
  return {
    dest: () => join(work.path, `media-${++n}`),
    leftovers: () => readdirSync(work.path).filter(f => f.includes('.part')),
    lastFiles: () => readdirSync(work.path).filter(f => f.startsWith(`media-${n}`)),
  }
}
