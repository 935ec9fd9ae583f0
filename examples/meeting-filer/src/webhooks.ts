/**
 * The app's webhook receiver: verifies each delivery's signature, handles each event once (notesvc
 * retries a delivery that failed with the same `webhook-id`, so a receiver can see an event twice),
 * and files a note when its `note.completed` arrives.
 */
import { verifyWebhook, WebhookVerificationError, type NotesvcClient, type WebhookEvent } from '@notesvc/client'
import { fileNote } from './filer'

export interface WebhookReceiver {
  /** a fetch handler: `Bun.serve({ fetch: receiver.fetch })`, or mount it in your own server */
  fetch(request: Request): Promise<Response>
  /** deliveries received with a valid signature, and events handled (a repeated `webhook-id` is not) */
  readonly counts: { received: number; handled: number }
}

export function createWebhookReceiver(secret: string, handle: (event: WebhookEvent) => Promise<void>): WebhookReceiver {
  // in memory, so a restart forgets; fileNote's own check (a note already in the folder) covers that case
  const handledIds = new Set<string>()
  const counts = { received: 0, handled: 0 }
  return {
    counts,
    async fetch(request) {
      const body = await request.text()
      let event: WebhookEvent
      try {
        event = verifyWebhook(secret, body, request.headers)
      } catch (error) {
        if (error instanceof WebhookVerificationError) return new Response('invalid signature', { status: 400 })
        throw error
      }
      counts.received++
      const id = request.headers.get('webhook-id') ?? ''
      if (handledIds.has(id)) return new Response(null, { status: 204 })
      // an error here answers 500, and notesvc delivers the event again later
      await handle(event)
      handledIds.add(id)
      counts.handled++
      return new Response(null, { status: 204 })
    },
  }
}

/** What the app does with an event: files the note of `note.completed`, reports `note.failed`. */
export function fileOnCompletion(client: NotesvcClient, outDir: string, log: (line: string) => void = console.error) {
  return async (event: WebhookEvent): Promise<void> => {
    if (event.type === 'note.completed') {
      const note = await client.getNote({ id: event.data.noteId })
      const filed = await fileNote(client, note, outDir)
      log(filed.path ? `filed ${filed.path}` : `note ${filed.noteId} was already filed`)
    } else if (event.type === 'note.failed') {
      log(`note ${event.data.noteId} failed: ${event.data.errorCode}`)
    }
  }
}
