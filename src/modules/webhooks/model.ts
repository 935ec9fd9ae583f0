import { t, type Static } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'

/**
 * The events an endpoint may ask for: the interface's two (DECISIONS.md "Beyond the interface") and
 * `note.updated`, a transcript edited (docs/decisions.md "Segments: split, merge, reassign, replace").
 */
const WEBHOOK_EVENTS = ['note.completed', 'note.failed', 'note.updated'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

const EventName = t.Union(WEBHOOK_EVENTS.map(e => t.Literal(e)), { error: `must be one of ${WEBHOOK_EVENTS.join(', ')}` })

export const CreateWebhookRequest = t.Object(
  {
    url: t.String({ minLength: 1, maxLength: 2048, error: 'must be an absolute https URL of at most 2048 characters', description: 'where events are POSTed; a public https URL (private, loopback and link-local addresses are refused)' }),
    events: t.Array(EventName, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true, error: `must list one or more of ${WEBHOOK_EVENTS.join(', ')}, each once`, description: 'the events to send' }),
    description: t.Optional(t.String({ maxLength: 500, error: 'must be a string of at most 500 characters' })),
  },
  { additionalProperties: false, title: 'CreateWebhookRequest' },
)
export type CreateWebhookRequest = Static<typeof CreateWebhookRequest>

const webhookFields = {
  id: t.String({ examples: ['whk_01jd6x3m2k8v4n7p9q2r5s8t0w'] }),
  url: t.String(),
  events: t.Array(t.String()),
  description: Nullable(t.String()),
  sandbox: t.Boolean({ description: 'a sandbox endpoint (created with a svc_test_ key) receives events of sandbox notes only; a live one, of live notes only' }),
  disabled: t.Boolean({ description: 'true once the endpoint answered 410 Gone: nothing more is sent to it' }),
  disabledAt: Nullable(DateTime),
  disabledReason: Nullable(t.String()),
  createdAt: DateTime,
}

export const Webhook = t.Object(webhookFields, { title: 'Webhook', description: 'An endpoint that receives signed events (Standard Webhooks). The secret is shown only when it is created.' })
export type Webhook = Static<typeof Webhook>

export const CreatedWebhook = t.Object(
  { ...webhookFields, secret: t.String({ description: 'the signing secret (`whsec_` + base64), shown this once: verify deliveries with it', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }) },
  { title: 'CreatedWebhook', description: 'A new endpoint, with its signing secret (shown this once).' },
)
export type CreatedWebhook = Static<typeof CreatedWebhook>

export const WebhookList = t.Object({ data: t.Array(Webhook) }, { title: 'WebhookList', description: 'The endpoints of this library, newest first.' })

export const WebhookDelivery = t.Object(
  {
    id: t.String(),
    messageId: t.String({ description: 'the `webhook-id` header: the same on every attempt of one event' }),
    event: t.String(),
    attempt: Integer({ minimum: 1 }),
    attemptedAt: DateTime,
    status: t.String({ description: '`delivered` (2xx), `failed` (another answer, an error or a timeout: tried again later), `disabled` (410: the endpoint is disabled), `refused` (the URL now resolves to an address that is refused)' }),
    responseCode: Nullable(Integer()),
    error: Nullable(t.String()),
    durationMs: Nullable(Integer()),
  },
  { title: 'WebhookDelivery', description: 'One attempt to deliver an event.' },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const WebhookDeliveryList = t.Object({ data: t.Array(WebhookDelivery) }, { title: 'WebhookDeliveryList', description: 'The most recent attempts (at most 100, the last 30 days), newest first.' })

/** A speaker as note.completed lists them: label, name shown, and a remembered voice offered (not applied) for them. */
export interface WebhookSpeaker {
  id: string
  name: string
  suggestion: { profileId: string; name: string; similarity: number } | null
}

/** A tag as events carry it, as the note shows it (Note.tags); `tags` is on an event of a note carrying any. */
export interface WebhookTag {
  id: string
  name: string
  color: string
}

/** The body of every delivery (Standard Webhooks: type, timestamp, data). */
export type WebhookPayload = {
  type: 'note.completed' | 'note.failed'
  timestamp: string
  /** `speakers`: on note.completed of a diarized recording, who speaks in it (label, name shown, voice suggested) */
  data: { noteId: string; status: 'Done' | 'Error'; errorCode: string | null; speakers?: WebhookSpeaker[]; tags?: WebhookTag[] }
} | {
  type: 'note.updated'
  timestamp: string
  /** `id` (and `noteId`, as the other events name it): the note; `segments`: indices in the new transcript */
  data: { id: string; noteId: string; version: number; change: string; segments: number[]; tags?: WebhookTag[] }
}
