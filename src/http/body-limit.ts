/**
 * How large a request body may be, by route, and reading one no larger.
 *
 * Bun.serve has one `maxRequestBodySize` for every route, and it must let a 5 GB recording through
 * the upload route; a JSON route read whatever was sent into memory (a 60 MB note took the server
 * from 129 MB to 675 MB). So each kind of route reads its body through readTextLimited with its limit:
 *
 * - JSON routes (http/json-body.ts): 16 MiB. The largest text a user sends is a note's `content` or
 *   `summary`, at most 2,000,000 characters (MAX_NOTE_TEXT_CHARS, modules/notes/model.ts): the
 *   transcript of about 37 hours of speech at 900 characters a minute, beyond any recording pasted. Written in JSON with every
 *   character escaped (`\uXXXX`, 6 bytes) that is 12 MB; 16 MiB leaves room for the other fields.
 * - MCP (`/mcp`, modules/mcp): 40 MiB, as its tools take a recording of up to 25 MB in base64 (34 MB).
 * - The pages' forms (modules/web): 1 MiB.
 * - The media routes keep theirs: the upload's PUT (5 GB, checked against the upload's declared size
 *   by the uploads module) and OpenAI's `/v1/audio/transcriptions` (multipart, whose parser stops at
 *   the file's 5 GB and each field's 16 KB).
 *
 * A body over its limit is refused with 413 `payload_too_large` in the envelope: at once when its
 * Content-Length says so (nothing read), or as soon as the bytes read pass the limit (a chunked body).
 */
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024
export const MAX_MCP_BODY_BYTES = 40 * 1024 * 1024

/** Thrown by readTextLimited when the body passes its limit. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The request body is larger than ${limit} bytes (${formatBytes(limit)}).`)
  }
}

export function formatBytes(n: number): string {
  return n >= 1024 ** 3 ? `${n / 1024 ** 3} GB` : n >= 1024 * 1024 ? `${n / (1024 * 1024)} MB` : `${n / 1024} KB`
}

/** The Content-Length a request declares, or null (chunked, or not a number). */
export function declaredLength(request: Request): number | null {
  const header = request.headers.get('content-length')
  if (header === null || !/^\d+$/.test(header.trim())) return null
  return Number(header)
}

/**
 * The body as text, read no further than `limit` bytes: a declared length over it is refused before
 * reading, a chunked body as soon as it passes it (the rest is not read).
 */
export async function readTextLimited(request: Request, limit: number): Promise<string> {
  const declared = declaredLength(request)
  if (declared !== null && declared > limit) throw new BodyTooLargeError(limit)
  if (request.body === null) return ''
  if (declared !== null) return request.text()
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new BodyTooLargeError(limit)
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}
