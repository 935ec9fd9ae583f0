import { decodeMedia } from '../media/decode'
import { MediaUnreadableError } from '../media/errors'
import type { MediaTools } from '../media/ffmpeg'
import { SAMPLE_RATE, type AsrEngine, type TranscriptSegment } from './engine'

/** Seconds of audio handed to the engine at once: memory stays at one chunk (5 min ≈ 19 MB). */
export const CHUNK_SECONDS = 300

/** Groups a stream of sample blocks into chunks of exactly `size` samples (the last one shorter). */
export async function* chunked(blocks: AsyncIterable<Float32Array>, size: number): AsyncGenerator<{ samples: Float32Array; offsetSamples: number }> {
  let buffer = new Float32Array(size)
  let filled = 0
  let offset = 0
  for await (const block of blocks) {
    let from = 0
    while (from < block.length) {
      const take = Math.min(size - filled, block.length - from)
      buffer.set(block.subarray(from, from + take), filled)
      filled += take
      from += take
      if (filled === size) {
        yield { samples: buffer, offsetSamples: offset }
        offset += size
        buffer = new Float32Array(size)
        filled = 0
      }
    }
  }
  if (filled > 0) yield { samples: buffer.subarray(0, filled), offsetSamples: offset }
}

export interface Transcription {
  segments: TranscriptSegment[]
  transcript: string
  language: string | null
}

/**
 * Decodes a media file to 16 kHz mono (streamed) and transcribes it chunk by chunk; segment times are
 * offset to the whole recording. Used by the upload pipeline and the synchronous routes alike.
 */
export async function transcribeMedia(
  path: string,
  deps: { asr: AsrEngine; tools: MediaTools; chunkSeconds?: number },
  opts: { language: string | null; signal?: AbortSignal; onFirstChunk?: () => void | Promise<void> },
): Promise<Transcription> {
  const chunkSamples = (deps.chunkSeconds ?? CHUNK_SECONDS) * SAMPLE_RATE
  const segments: TranscriptSegment[] = []
  let language = opts.language
  let started = false
  for await (const chunk of chunked(decodeMedia(path, SAMPLE_RATE, deps.tools, opts.signal), chunkSamples)) {
    if (!started) {
      await opts.onFirstChunk?.()
      started = true
    }
    opts.signal?.throwIfAborted()
    const offset = chunk.offsetSamples / SAMPLE_RATE
    const r = await deps.asr.transcribeChunk(chunk.samples, { language: opts.language, signal: opts.signal })
    for (const s of r.segments) segments.push({ start: s.start + offset, end: s.end + offset, text: s.text.trim() })
    language ??= r.language
  }
  if (!started) throw new MediaUnreadableError('the file holds no audio')
  return { segments, transcript: segments.map(s => s.text).filter(Boolean).join(' '), language }
}
