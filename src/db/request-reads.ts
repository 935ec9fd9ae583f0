import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * Values one statement of a request read on the way, for a later step of the same request to use
 * instead of asking the database again. On PostgreSQL a cached `GET /v1/notes` otherwise makes two
 * round trips (the shared rate-limit window, then the notes' revision counter that says whether a kept
 * page is still current), each about 150 µs of the node's CPU through Bun.SQL: the rate-limit statement
 * reads the counter too, and the list takes it from here (bench/README.md "list-postgres.ts").
 *
 * A value is taken at most once and only by a step that knows nothing of this request was written in
 * between (the `GET /v1/notes` route; not MCP, whose one request may create a note and then list).
 * Serving the library as of the admission's read is serving it as of a moment within the request.
 */
const scope = new AsyncLocalStorage<Map<string, string>>()

/** Starts the request's scope (the app's `onRequest`). */
export function enterRequestReads(): void {
  scope.enterWith(new Map())
}

/** Keeps a value read on the way; outside a request (jobs, the CLI) nothing is kept. */
export function rememberRead(key: string, value: string): void {
  scope.getStore()?.set(key, value)
}

/** The value kept under `key` in this request, once; undefined when none was read. */
export function takeRead(key: string): string | undefined {
  const reads = scope.getStore()
  const value = reads?.get(key)
  reads?.delete(key)
  return value
}

/** The key under which the rate-limit statement keeps the notes' revision counter. */
export const NOTES_STAMP = 'notes-stamp'
