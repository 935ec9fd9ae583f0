/** How request bodies are read: JSON whatever Content-Type says, or not at all. */
import { BodyTooLargeError, MAX_JSON_BODY_BYTES, readTextLimited } from './body-limit'
import { jsonShapeIssue, type ShapeIssue } from './body-shape'

/** What an unparseable body becomes, so the guard can refuse it after checking the credential. */
export const UNPARSEABLE_BODY: unique symbol = Symbol('unparseable body')

/** Why a body was not parsed: too large, empty, not JSON, or a shape past the limits (http/body-shape.ts). */
export type Unparseable = 'too_large' | 'empty' | 'invalid' | ShapeIssue

/**
 * Route options for a JSON body: parsed as JSON whatever Content-Type says, so `curl -d '{…}'` works,
 * once its shape is known to be within the limits (http/body-shape.ts). A body that is not JSON, or
 * too deep, is not an error yet: a caller without a credential is told that first.
 */
export const jsonBody = {
  parse: async ({ request }: { request: Request }) => {
    let text: string
    try {
      // no further than the JSON routes' limit (http/body-limit.ts)
      text = await readTextLimited(request, MAX_JSON_BODY_BYTES)
    } catch (err) {
      if (err instanceof BodyTooLargeError) return unparseable('too_large')
      throw err
    }
    const shape = jsonShapeIssue(text)
    if (shape) return unparseable(shape)
    try {
      return JSON.parse(text) as unknown
    } catch {
      return unparseable(text.length === 0 ? 'empty' : 'invalid')
    }
  },
}

const unparseable = (why: Unparseable) => ({ [UNPARSEABLE_BODY]: why })

/** Route options for an operation that takes no body: whatever is sent is not read. */
export const noBody = { parse: 'none' as const }
