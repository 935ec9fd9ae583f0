/**
 * A live stream's audio as it arrives: held in memory for about a second, then written to the media
 * storage as the next part (live/<stream>/<n>.pcm, raw pcm16 at the stream's rate) and recorded in the
 * stream's row. What the row says is kept is what a resume, a restart or another node starts from;
 * the client is told (notesvc.stream.kept) so it can send the rest again after a drop.
 */
import type { MediaStorage } from '../../storage/storage'

/** Audio held before it is written: about a second (more while a write is under way). */
const FLUSH_SECONDS = 1
/** Audio held while the storage does not keep up: past this the stream ends rather than grow without bound. */
const MAX_HELD_SECONDS = 30

/** a part's key: under the generation that wrote it, so a node that lost the stream never overwrites the new holder's */
export const partKey = (streamId: string, generation: number, part: number) => `live/${streamId}/${generation}/${String(part).padStart(6, '0')}.pcm`

class StorageBehindError extends Error {}

export interface AudioKeeperDeps {
  streamId: string
  generation: number
  sampleRate: number
  storage: MediaStorage
  /** what was kept before this keeper (a resume continues the parts) */
  keptBytes: number
  parts: number
  /** the row records the new part; false when this node no longer holds the stream */
  record(keptBytes: number, parts: number): Promise<boolean>
  onKept(keptBytes: number): void
  onLost(): void
  onFailed(err: unknown): void
}

export function createAudioKeeper(deps: AudioKeeperDeps) {
  const bytesPerSecond = deps.sampleRate * 2
  let held: Uint8Array[] = []
  let heldBytes = 0
  let kept = deps.keptBytes
  let parts = deps.parts
  let writing: Promise<void> = Promise.resolve()
  let stopped = false
  /** bytes taken from `held` whose write has not finished */
  let inFlight = 0

  async function write(chunk: Uint8Array): Promise<void> {
    try {
      if (stopped) return
      await deps.storage.put(partKey(deps.streamId, deps.generation, parts + 1), chunk)
      if (!(await deps.record(kept + chunk.length, parts + 1))) {
        stopped = true
        await deps.storage.delete(partKey(deps.streamId, deps.generation, parts + 1)).catch(() => {})
        return deps.onLost()
      }
      parts++
      kept += chunk.length
      deps.onKept(kept)
    } catch (err) {
      stopped = true
      deps.onFailed(err)
    } finally {
      inFlight -= chunk.length
    }
  }

  function flush(): Promise<void> {
    if (heldBytes === 0) return writing
    const chunk = new Uint8Array(heldBytes)
    let at = 0
    for (const h of held) {
      chunk.set(h, at)
      at += h.length
    }
    held = []
    heldBytes = 0
    inFlight += chunk.length
    writing = writing.then(() => write(chunk))
    return writing
  }

  return {
    /** bytes received (kept, being written and held): where the stream's audio is up to */
    received: () => kept + inFlight + heldBytes,
    kept: () => kept,
    parts: () => parts,
    append(pcm: Uint8Array): void {
      if (stopped) return
      if (heldBytes > MAX_HELD_SECONDS * bytesPerSecond) {
        stopped = true
        return deps.onFailed(new StorageBehindError(`the media storage has not kept up for ${MAX_HELD_SECONDS} seconds`))
      }
      held.push(pcm)
      heldBytes += pcm.length
      if (heldBytes >= FLUSH_SECONDS * bytesPerSecond) void flush()
    },
    /** writes what is held; resolves once everything appended so far is kept (or could not be) */
    flush,
    /** stops writing (the stream was lost or ends); what is held is dropped */
    stop(): void {
      stopped = true
      held = []
      heldBytes = 0
    },
  }
}

export type AudioKeeper = ReturnType<typeof createAudioKeeper>

/** A WAV header for `dataBytes` of pcm16 mono at `rate`. */
export function wavHeader(dataBytes: number, rate: number): Uint8Array {
  const h = new DataView(new ArrayBuffer(44))
  const text = (at: number, s: string) => [...s].forEach((c, i) => h.setUint8(at + i, c.charCodeAt(0)))
  text(0, 'RIFF')
  h.setUint32(4, 36 + dataBytes, true)
  text(8, 'WAVE')
  text(12, 'fmt ')
  h.setUint32(16, 16, true)
  h.setUint16(20, 1, true)
  h.setUint16(22, 1, true)
  h.setUint32(24, rate, true)
  h.setUint32(28, rate * 2, true)
  h.setUint16(32, 2, true)
  h.setUint16(34, 16, true)
  text(36, 'data')
  h.setUint32(40, dataBytes, true)
  return new Uint8Array(h.buffer)
}
