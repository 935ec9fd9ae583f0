import { Webhook } from 'standardwebhooks'
import { WebhookVerificationError } from './errors.js'

interface WebhookTag {
  id: string
  name: string
  color: string
}

/** A speaker as note.completed lists them: label, name shown, and a remembered voice offered for them. */
interface WebhookSpeaker {
  id: string
  name: string
  suggestion: { profileId: string; name: string; similarity: number } | null
}

/** The body of a delivery (Standard Webhooks: type, timestamp, data), as the server sends it. */
export type WebhookEvent = {
  type: 'note.completed' | 'note.failed'
  timestamp: string
  data: { noteId: string; status: 'Done' | 'Error'; errorCode: string | null; speakers?: WebhookSpeaker[]; tags?: WebhookTag[] }
} | {
  type: 'note.updated'
  timestamp: string
  data: { id: string; noteId: string; version: number; change: string; segments: number[]; tags?: WebhookTag[] }
}

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const

/**
 * A delivery checked against the endpoint's secret (`whsec_…`, shown when it was created): its
 * signature over the raw body as received (not re-serialized JSON), and a timestamp within five
 * minutes. Throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(secret: string, rawBody: string, headers: Headers | Record<string, string | undefined>): WebhookEvent {
  const read = (name: string) => headers instanceof Headers ? headers.get(name) : headers[name] ?? headers[name.toLowerCase()] ?? null
  const wanted: Record<string, string> = {}
  for (const name of HEADERS) {
    const value = read(name)
    if (!value) throw new WebhookVerificationError(`The delivery has no ${name} header: pass the request's headers as received.`)
    wanted[name] = value
  }
  try {
    return new Webhook(secret).verify(rawBody, wanted) as WebhookEvent
  } catch (e) {
    throw new WebhookVerificationError(`The delivery does not verify (${(e as Error).message}): check the endpoint's secret, and pass the body exactly as received.`)
  }
}
