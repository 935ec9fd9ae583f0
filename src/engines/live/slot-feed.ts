/**
 * A live stream's audio handed to its thread a slot at a time (the process's ASR slots, shared with the
 * batch jobs: engines/asr/scheduler.ts). Audio, commits and the close wait here in order; for each
 * grant the thread is sent what is waiting, up to GRANT_SAMPLES of audio (a commit or the close ends
 * the grant), then a `sync`, and the slot is given back when the thread answers it (or closes, or
 * dies). A stream that waited catches up a grant at a time, so no grant covers a whole utterance.
 * Nothing is sent before the thread's decoder is loaded (start()): the load (about 1.3 s, once per
 * stream) is not decoding and holds no slot.
 */
import type { AsrScheduler } from '../asr/scheduler'

/** What the stream's thread (live-thread.ts) is sent after its `open`. */
export type FeedMessage = { type: 'audio'; pcm: Int16Array } | { type: 'commit' } | { type: 'close' }

/** At most this much audio is decoded under one grant: 320 ms (about 50 ms of a core with the live settings). */
const GRANT_SAMPLES = 5_120

export class SlotFeed {
  #queue: FeedMessage[] = []
  #release: (() => void) | null = null
  #busy = false
  #started = false
  #stopped = false

  constructor(
    private readonly slots: Pick<AsrScheduler, 'acquireLive'>,
    private readonly post: (m: FeedMessage | { type: 'sync' }) => void,
  ) {}

  /** Queues a message; audio longer than a grant is split so each piece fits one. */
  send(m: FeedMessage): void {
    if (this.#stopped) return
    if (m.type === 'audio' && m.pcm.length > GRANT_SAMPLES) {
      for (let at = 0; at < m.pcm.length; at += GRANT_SAMPLES) this.#queue.push({ type: 'audio', pcm: m.pcm.slice(at, at + GRANT_SAMPLES) })
    } else this.#queue.push(m)
    void this.#pump()
  }

  /** The thread's decoder is loaded (or failed to load: the thread then answers syncs and nothing else). */
  start(): void {
    this.#started = true
    void this.#pump()
  }

  /** The thread answered the sync, or closed: what the grant covered is decoded. */
  decoded(): void {
    const release = this.#release
    this.#release = null
    release?.()
  }

  /** The thread is gone: nothing more is sent, and the slot held is given back. */
  stop(): void {
    this.#stopped = true
    this.#queue = []
    this.decoded()
  }

  async #pump(): Promise<void> {
    if (this.#busy || !this.#started) return
    this.#busy = true
    try {
      while (this.#queue.length && !this.#stopped) {
        const release = await this.slots.acquireLive()
        if (this.#stopped) return release()
        const done = new Promise<void>(resolve => {
          this.#release = () => {
            release()
            resolve()
          }
        })
        const last = this.#sendGrant()
        if (last !== 'close') this.post({ type: 'sync' })
        await done
      }
    } finally {
      this.#busy = false
    }
  }

  /** Posts what one grant covers; says what it ended with. */
  #sendGrant(): FeedMessage['type'] {
    let samples = 0
    for (;;) {
      const m = this.#queue[0]!
      if (m.type === 'audio' && samples > 0 && samples + m.pcm.length > GRANT_SAMPLES) return 'audio'
      this.#queue.shift()
      if (m.type === 'audio') {
        samples += m.pcm.length
        this.post(m)
      } else {
        this.post(m)
        return m.type
      }
      if (!this.#queue.length) return 'audio'
    }
  }
}
