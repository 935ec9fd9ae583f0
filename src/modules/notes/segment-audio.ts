/**
 * A stretch of a note's recording as 16 kHz mono samples, for aligning a corrected segment's words:
 * the upload's file from storage, decoded by the media code (the WAV reader, else ffmpeg), only the
 * samples of each [start, end] asked for kept; decoding stops at the last one's end.
 */
import { decodeMedia } from '../../engines/media/decode'
import type { MediaTools } from '../../engines/media/ffmpeg'
import type { MediaStorage } from '../../storage/storage'
import type { NoteRecording } from '../uploads/note-media'

const RATE = 16_000

/** The samples of each span asked for, in order, or why there are none (the note has no recording, or retention removed it). */
export type SegmentAudio = { samples: Float32Array[] } | { missing: string }

/** A stretch of the recording, in seconds. */
export interface Span {
  start: number
  end: number
}

/**
 * The samples of `spans` of a note's recording, decoded once (from the start up to the last span's
 * end) however many spans are asked for: a replacement across a long recording aligns many segments.
 */
export function createSegmentAudio(deps: { recording: (noteId: string) => Promise<NoteRecording | null>; storage: MediaStorage; tools: MediaTools }) {
  return async (noteId: string, spans: readonly Span[]): Promise<SegmentAudio> => {
    const rec = await deps.recording(noteId)
    if (!rec) return { missing: 'the note has no recording' }
    if (!(await deps.storage.stat(rec.storageKey))) return { missing: 'the recording is no longer stored (retention removed it)' }
    const copy = await deps.storage.localCopy(rec.storageKey)
    try {
      const ranges = spans.map(s => {
        const from = Math.max(0, Math.floor(s.start * RATE))
        return { from, to: Math.max(from, Math.ceil(s.end * RATE)) }
      })
      const outs = ranges.map(r => new Float32Array(r.to - r.from))
      const last = Math.max(0, ...ranges.map(r => r.to))
      let at = 0
      for await (const chunk of decodeMedia(copy.path, RATE, deps.tools)) {
        ranges.forEach(({ from, to }, i) => {
          const lo = Math.max(from, at)
          const hi = Math.min(to, at + chunk.length)
          if (hi > lo) outs[i]!.set(chunk.subarray(lo - at, hi - at), lo - from)
        })
        at += chunk.length
        if (at >= last) break
      }
      return { samples: outs.map((out, i) => out.subarray(0, Math.max(0, Math.min(ranges[i]!.to, at) - ranges[i]!.from))) }
    } finally {
      await copy.release()
    }
  }
}
