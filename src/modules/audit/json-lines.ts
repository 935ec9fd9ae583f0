import type { AuditEvent } from './model'

/**
 * Events as a streamed JSON lines download (`application/x-ndjson`): one event per line, read from the
 * generator as the client takes them, so an export of any size is never held whole.
 */
export function jsonLinesResponse(events: AsyncGenerator<AuditEvent>, fileName: string): Response {
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await events.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`))
    },
    async cancel() {
      await events.return(undefined)
    },
  })
  return new Response(body, {
    headers: {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="${fileName}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  })
}
