/**
 * Downloading a user-supplied media URL (`createTranscription`'s `audioUrl`) behind the outbound-URL
 * policy of `net/outbound.ts` (the SSRF guard, checked at the first request and at every redirect,
 * and DNS pinning), within a size and a time limit.
 */
import { open, rename, unlink } from 'node:fs/promises'
import type { AddressPolicy, LookupFn } from '../../net/address-policy'
import { requestPinned, shown, UrlError, UrlFetchFailedError, UrlTimeoutError, UrlTooLargeError, vetUrl } from '../../net/outbound'

export { UrlFetchFailedError, UrlRefusedError, UrlTimeoutError, UrlTooLargeError } from '../../net/outbound'

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

const DEFAULT_MAX_REDIRECTS = 5
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

/**
 * Downloads `url` to `opts.dest` behind the outbound-URL policy (net/outbound.ts), following
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
  const tmp = `${dest}.${crypto.randomUUID().slice(0, 8)}.part`
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
