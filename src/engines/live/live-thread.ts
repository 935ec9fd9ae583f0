/**
 * A live stream's thread (index.ts): one LiveSession, its decoder loaded on the `open` message (about
 * 1.3 s with the language model; audio sent meanwhile waits in the message queue), then audio,
 * commits and the close, in order. Every event goes back as a message; a failure becomes an `error`
 * event and the thread stops decoding. A `sync` is answered `synced` once what came before it is
 * decoded (failed or not): the stream's slot (slot-feed.ts) is given back then.
 */
import { LiveSession, type SessionSettings } from './session'
import type { LiveEvent } from './events'
import type { FeedMessage } from './slot-feed'

declare const self: Worker

type Message = { type: 'open'; settings: SessionSettings } | FeedMessage | { type: 'sync' }

let session: LiveSession | null = null
let failed = false
const emit = (e: LiveEvent) => self.postMessage(e)

self.onmessage = (e: MessageEvent<Message>) => {
  const m = e.data
  if (m.type === 'sync') return self.postMessage({ type: 'synced' })
  if (failed && m.type !== 'close') return
  try {
    if (m.type === 'open') {
      session = new LiveSession(m.settings, emit)
      emit({ type: 'ready' })
    }
    else if (m.type === 'audio') session?.push(m.pcm)
    else if (m.type === 'commit') session?.commit()
    else {
      session?.close()
      session = null
      self.postMessage({ type: 'closed' })
    }
  } catch (err) {
    failed = true
    emit({ type: 'error', message: err instanceof Error ? err.message : String(err) })
    if (m.type === 'close') self.postMessage({ type: 'closed' })
  }
}
