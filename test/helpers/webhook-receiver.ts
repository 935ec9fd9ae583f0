import { afterEach } from 'bun:test'

/** A request a receiver got: its headers and body as sent. */
interface Received {
  headers: Record<string, string>
  body: string
}

const receivers: { stop(): void }[] = []
afterEach(() => {
  for (const r of receivers.splice(0)) r.stop()
})

/** Another loopback server of the test, stopped after it as the receivers are. */
export function stopAfterTest(server: { stop(closeActiveConnections?: boolean): unknown }): void {
  receivers.push({ stop: () => server.stop(true) })
}

/**
 * A webhook receiver on loopback, stopped after each test: answers each request with the next status
 * of `answers` (then 200), and keeps what it got.
 */
export function webhookReceiver(answers: number[] = []) {
  const got: Received[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      got.push({ headers: Object.fromEntries(req.headers), body: await req.text() })
      const status = answers[got.length - 1] ?? 200
      return new Response(status === 204 ? null : 'ok', { status })
    },
  })
  const r = { url: `http://127.0.0.1:${server.port}/hooks/notesvc`, got, stop: () => server.stop(true) }
  receivers.push(r)
  return r
}
