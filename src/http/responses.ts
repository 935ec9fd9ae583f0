declare const jsonOf: unique symbol

/** JSON text known to encode a `T`: what a service returns when it serialises a body itself. */
export type JsonText<T> = string & { readonly [jsonOf]: T }

/**
 * Answers with a body that is already JSON (text or UTF-8 bytes). Elysia builds one Response from the string and the
 * request's headers (request id, rate limits); returning a ready Response would make it build a second.
 */
export function jsonText<T extends string | Uint8Array>(set: { headers: Record<string, unknown> }, json: T): T {
  set.headers['content-type'] = 'application/json; charset=utf-8'
  return json
}
