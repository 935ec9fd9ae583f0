import { BodyTooLargeError, declaredLength, readTextLimited } from './body-limit'
import { formShapeIssue, multipartShapeIssue, shapeMessage } from './body-shape'
import { ApiError, type ErrorDetail } from './errors'
import { formTextDetails } from './text-check'

/**
 * A form (`application/x-www-form-urlencoded`, or `multipart/form-data` when `multipart` is allowed)
 * read no further than `limit` bytes, its fields counted before it is parsed (http/body-shape.ts) and
 * its text checked after (http/text-check.ts: U+0000 and lone surrogates, which PostgreSQL cannot
 * hold). Throws BodyTooLargeError past the limit, and a 400 `invalid_request` ApiError naming the
 * limit or the fields at fault; a route answering in another format (OAuth) turns that into its own.
 * Used by the pages' forms (modules/web) and OAuth's endpoints (modules/oauth).
 */
export async function readForm(request: Request, o: { limit: number; multipart?: boolean }): Promise<URLSearchParams> {
  const type = request.headers.get('content-type') ?? ''
  const form = o.multipart && type.toLowerCase().startsWith('multipart/form-data') ? await readMultipart(request, type, o.limit) : await readUrlEncoded(request, o.limit)
  const details = formTextDetails(form)
  if (details.length) throw new ApiError('invalid_request', formTextMessage(details), { details })
  return form
}

async function readUrlEncoded(request: Request, limit: number): Promise<URLSearchParams> {
  const text = await readTextLimited(request, limit)
  const shape = formShapeIssue(text)
  if (shape) throw new ApiError('invalid_request', shapeMessage(shape))
  return new URLSearchParams(text)
}

/** A multipart form's text fields; its length must be declared (a browser always does). */
async function readMultipart(request: Request, type: string, limit: number): Promise<URLSearchParams> {
  const declared = declaredLength(request)
  if (declared === null || declared > limit) throw new BodyTooLargeError(limit)
  const bytes = new Uint8Array(await request.arrayBuffer())
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type)
  if (boundary) {
    const shape = multipartShapeIssue(bytes, boundary[1] ?? boundary[2]!)
    if (shape) throw new ApiError('invalid_request', shapeMessage(shape))
  }
  let fields: FormData
  try {
    fields = await new Response(bytes, { headers: { 'content-type': type } }).formData()
  } catch {
    throw new ApiError('invalid_request', 'The form could not be read as multipart/form-data; send it from the page, or as application/x-www-form-urlencoded.')
  }
  const params = new URLSearchParams()
  for (const [k, v] of fields) if (typeof v === 'string') params.append(k, v)
  return params
}

function formTextMessage(details: ErrorDetail[]): string {
  return `The form failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}. Type the text again without control characters.`
}
