import { describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook, WebhookVerificationError } from '@notesvc/client'

/** verifyWebhook on deliveries signed here as the Standard Webhooks specification says, like the server signs them. */
const SECRET = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`
const EVENT = { type: 'note.completed', timestamp: '2026-11-29T10:00:00.000Z', data: { noteId: 'note_1', status: 'Done', errorCode: null } }

function delivery(o: { body?: string; secret?: string; at?: Date } = {}) {
  const body = o.body ?? JSON.stringify(EVENT)
  const at = o.at ?? new Date()
  const id = 'msg_2f9Qe1'
  const signature = new Webhook(o.secret ?? SECRET).sign(id, at, body)
  return { body, headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature } }
}

describe('verifyWebhook', () => {
  test('a correctly signed delivery gives its event, from a plain object of headers or a Headers', () => {
    const { body, headers } = delivery()
    expect(verifyWebhook(SECRET, body, headers)).toEqual(EVENT as never)
    expect(verifyWebhook(SECRET, body, new Headers(headers))).toEqual(EVENT as never)
  })

  test('a tampered body is refused', () => {
    const { body, headers } = delivery()
    const tampered = body.replace('note_1', 'note_2')
    expect(() => verifyWebhook(SECRET, tampered, headers)).toThrow(WebhookVerificationError)
  })

  test('another endpoint\'s secret is refused', () => {
    const other = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`
    const { body, headers } = delivery({ secret: other })
    expect(() => verifyWebhook(SECRET, body, headers)).toThrow(WebhookVerificationError)
  })

  test('a delivery signed ten minutes ago is refused (replay)', () => {
    const { body, headers } = delivery({ at: new Date(Date.now() - 10 * 60_000) })
    expect(() => verifyWebhook(SECRET, body, headers)).toThrow(/does not verify/)
  })

  test('a missing signature header is refused, naming it', () => {
    const { body, headers } = delivery()
    const rest: Record<string, string> = { ...headers }
    delete rest['webhook-signature']
    expect(() => verifyWebhook(SECRET, body, rest)).toThrow('no webhook-signature header')
  })
})
