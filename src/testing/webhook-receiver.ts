import { Webhook } from 'standardwebhooks'
import type { KitWebhooks, ReceivedWebhook } from './types'

/** The receiver's paths: one endpoint per key, so a delivery says which key's it is. */
const ENDPOINT_PATHS = { live: '/live', sandbox: '/sandbox' } as const
export type EndpointKind = keyof typeof ENDPOINT_PATHS

const DEFAULT_TIMEOUT_MS = 10_000

interface Waiter { type: string; resolve(d: ReceivedWebhook): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }

export interface WebhookReceiver extends KitWebhooks {
  /** the URL to register for a key's endpoint */
  endpointUrl(kind: EndpointKind): string
  /** the signing secret the server gave that endpoint: its deliveries are verified with it */
  trust(kind: EndpointKind, secret: string): void
  stop(): Promise<void>
}

/**
 * A webhook receiver on loopback for the test kit: verifies each delivery's Standard Webhooks
 * signature with its endpoint's secret (401 and not kept when it does not verify), keeps it, and
 * hands it to `next`. `failNext` makes it answer an error, so the server's retry can be seen.
 */
export function startWebhookReceiver(): WebhookReceiver {
  const verifiers = new Map<string, { kind: EndpointKind; webhook: Webhook }>()
  const received: ReceivedWebhook[] = []
  const taken = new Set<ReceivedWebhook>()
  const waiters: Waiter[] = []
  const failures: number[] = []

  const deliver = (delivery: ReceivedWebhook) => {
    received.push(delivery)
    const i = waiters.findIndex(w => w.type === delivery.type)
    if (i < 0) return
    const [waiter] = waiters.splice(i, 1)
    clearTimeout(waiter!.timer)
    taken.add(delivery)
    waiter!.resolve(delivery)
  }

  async function receive(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname
    const verifier = verifiers.get(path)
    if (request.method !== 'POST' || !verifier) return new Response('not a registered endpoint of this kit\n', { status: 404 })
    const rawBody = await request.text()
    let event: { type: string; timestamp: string; data: ReceivedWebhook['data'] }
    try {
      event = verifier.webhook.verify(rawBody, Object.fromEntries(request.headers)) as typeof event
    } catch (err) {
      return new Response(`signature not verified: ${(err as Error).message}\n`, { status: 401 })
    }
    const answeredStatus = failures.length > 0 ? failures.shift()! : 200
    deliver({ id: request.headers.get('webhook-id')!, type: event.type, timestamp: event.timestamp, data: event.data, sandbox: verifier.kind === 'sandbox', answeredStatus, rawBody })
    return new Response(null, { status: answeredStatus === 200 ? 204 : answeredStatus })
  }

  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, development: false, fetch: receive })
  const url = `http://127.0.0.1:${server.port}`

  return {
    url,
    endpointUrl: kind => `${url}${ENDPOINT_PATHS[kind]}`,
    trust(kind, secret) {
      verifiers.set(ENDPOINT_PATHS[kind], { kind, webhook: new Webhook(secret) })
    },
    next(type, options = {}) {
      const ready = received.find(d => d.type === type && !taken.has(d))
      if (ready) {
        taken.add(ready)
        return Promise.resolve(ready)
      }
      const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
      return new Promise<ReceivedWebhook>((resolve, reject) => {
        const waiter: Waiter = {
          type, resolve, reject,
          timer: setTimeout(() => {
            waiters.splice(waiters.indexOf(waiter), 1)
            const seen = received.map(d => `${d.type} ${d.id} (answered ${d.answeredStatus})`).join(', ') || 'none'
            reject(new Error(`no ${type} webhook within ${timeoutMs} ms (received so far: ${seen}); check that the note reached the state that sends it, or pass a longer timeoutMs`))
          }, timeoutMs),
        }
        waiters.push(waiter)
      })
    },
    all: () => [...received],
    failNext(count, status = 500) {
      if (!Number.isInteger(count) || count < 0) throw new RangeError(`failNext(count): count must be a whole number of deliveries, not ${count}`)
      if (!Number.isInteger(status) || status < 300 || status > 599) throw new RangeError(`failNext(count, status): status must be a failing HTTP status (300 to 599), not ${status}`)
      for (let i = 0; i < count; i++) failures.push(status)
    },
    async stop() {
      for (const waiter of waiters.splice(0)) {
        clearTimeout(waiter.timer)
        waiter.reject(new Error(`the kit stopped before a ${waiter.type} webhook came`))
      }
      await server.stop(true)
    },
  }
}
