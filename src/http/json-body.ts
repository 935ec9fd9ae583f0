/** How request bodies are read: JSON whatever Content-Type says, or not at all. */
import { BodyTooLargeError, MAX_JSON_BODY_BYTES, readTextLimited } from './body-limit'

/** What an unparseable body becomes, so the guard can refuse it after checking the credential. */
export const UNPARSEABLE_BODY: unique symbol = Symbol('unparseable body')

/**
 * Route options for a JSON body: parsed as JSON whatever Content-Type says, so `curl -d '{…}'` works.
 * A body that is not JSON is not an error yet: a caller without a credential is told that first.
 */
export const jsonBody = {
  parse: async ({ request }: { request: Request }) => {
    let text: string
    try {
      // no further than the JSON routes' limit (http/body-limit.ts)
      text = await readTextLimited(request, MAX_JSON_BODY_BYTES)
    } catch (err) {
      if (err instanceof BodyTooLargeError) return { [UNPARSEABLE_BODY]: 'too_large' }
      throw err
    }
    try {
      return JSON.parse(text) as unknown
    } catch {
      return { [UNPARSEABLE_BODY]: text.length === 0 ? 'empty' : 'invalid' }
    }
  },
}

/** Route options for an operation that takes no body: whatever is sent is not read. */
export const noBody = { parse: 'none' as const }
