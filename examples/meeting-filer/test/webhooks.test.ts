/**
 * The app's webhook receiver against real deliveries: registered with notesvc like any endpoint,
 * served on loopback (the kit lets notesvc deliver to private addresses).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNotesvc, type Kit } from '@notesvc/client/testing'
import { createWebhookReceiver, fileOnCompletion, type WebhookReceiver } from '../src/webhooks'
import { writeRecording } from './recording'

let kit: Kit
let work: string
const servers: { stop(closeActiveConnections?: boolean): unknown }[] = []
const track = <S extends (typeof servers)[number]>(server: S) => (servers.push(server), server)

beforeAll(async () => {
  kit = await startNotesvc()
  work = mkdtempSync(join(tmpdir(), 'meeting-filer-'))
})

afterAll(async () => {
  for (const server of servers) server.stop(true)
  await kit?.stop()
  rmSync(work, { recursive: true, force: true })
})

test('webhook_retry: the same webhook-id arrives twice, the meeting is filed once', async () => {
  const outDir = join(work, 'retry')
  const client = kit.sandboxClient
  const deliveryIds: string[] = []
  const { promise: twoDeliveries, resolve } = Promise.withResolvers<void>()
  let receiver: WebhookReceiver | undefined
  const server = track(Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      if (!receiver) return new Response(null, { status: 503 })
      deliveryIds.push(request.headers.get('webhook-id') ?? '')
      const response = await receiver.fetch(request)
      if (deliveryIds.length === 2) resolve()
      return response
    },
  }))
  const endpoint = await client.createWebhook({ url: `http://127.0.0.1:${server.port}/notesvc`, events: ['note.completed', 'note.failed'] })
  receiver = createWebhookReceiver(endpoint.secret, fileOnCompletion(client, outDir, () => {}))

  const note = await client.uploadRecording({ file: writeRecording(work, 'webhook_retry.wav'), fileName: 'webhook_retry.wav' })
  await twoDeliveries

  expect(deliveryIds[1]).toBe(deliveryIds[0]!)
  expect(receiver.counts).toEqual({ received: 2, handled: 1 })
  expect(readdirSync(outDir)).toHaveLength(1)
  const meetings = (await client.listFolders()).data.find(f => f.name === 'Meetings')
  expect((await client.getNote({ id: note.id })).folderId).toBe(meetings!.id)
}, 20_000) // the retry comes 1 s after the first attempt; bun test's default of 5 s is close on a busy machine

test('a delivery whose signature does not check out is refused with 400 and not handled', async () => {
  const handled: unknown[] = []
  const receiver = createWebhookReceiver('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', async event => void handled.push(event))
  const body = JSON.stringify({ type: 'note.completed', timestamp: new Date().toISOString(), data: { noteId: 'note_1', status: 'Done', errorCode: null } })

  const response = await receiver.fetch(new Request('http://127.0.0.1/notesvc', {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,bm90IHRoZSByaWdodCBzaWduYXR1cmU=',
    },
  }))

  expect(response.status).toBe(400)
  expect(handled).toEqual([])
  expect(receiver.counts).toEqual({ received: 0, handled: 0 })
})
