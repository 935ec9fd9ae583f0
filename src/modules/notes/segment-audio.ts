/**
 * A stretch of a note's recording as 16 kHz mono samples, for aligning a corrected segment's words:
 * the upload's file from storage, decoded by the media code (the WAV reader, else ffmpeg), only the
 * samples of [start, end] kept; decoding stops at `end`.
 */
import { decodeMedia } from '../../engines/media/decode'
import type { MediaTools } from '../../engines/media/ffmpeg'
import type { MediaStorage } from '../../storage/storage'
import type { NoteRecording } from '../uploads/note-media'

const RATE = 16_000

/** The samples, or why there are none (the note has no recording, or retention removed it). */
export type SegmentAudio = { samples: Float32Array } | { missing: string }

export function createSegmentAudio(deps: { recording: (noteId: string) => Promise<NoteRecording | null>; storage: MediaStorage; tools: MediaTools }) {
  return async (noteId: string, start: number, end: number): Promise<SegmentAudio> => {
    const rec = await deps.recording(noteId)
    if (!rec) return { missing: 'the note has no recording' }
    if (!(await deps.storage.stat(rec.storageKey))) return { missing: 'the recording is no longer stored (retention removed it)' }
    const copy = await deps.storage.localCopy(rec.storageKey)
    try {
      const from = Math.max(0, Math.floor(start * RATE))
      const to = Math.max(from, Math.ceil(end * RATE))
      const out = new Float32Array(to - from)
      let at = 0
      for await (const chunk of decodeMedia(copy.path, RATE, deps.tools)) {
        const lo = Math.max(from, at)
        const hi = Math.min(to, at + chunk.length)
        if (hi > lo) out.set(chunk.subarray(lo - at, hi - at), lo - from)
        at += chunk.length
        if (at >= to) break
      }
      return { samples: out.subarray(0, Math.max(0, Math.min(to, at) - from)) }
    } finally {
      await copy.release()
    }
  }
}
