/**
 * Word times for a segment whose text a person corrected: the new words aligned to the segment's
 * audio by the first engine that can (PocketSphinx's forced alignment today), or, when none can
 * (no engine here, or the audio does not match the text), spread over the segment in proportion to
 * their letters, and the answer says which it is.
 */
import { createPocketsphinxAligner } from './pocketsphinx-aligner'
import { proportionalWords, round } from '../../transcript/proportional'
import type { AlignedWord, WordAligner } from './word-aligner'

export type { WordAligner } from './word-aligner'
export { createPocketsphinxAligner } from './pocketsphinx-aligner'
export { proportionalWords } from '../../transcript/proportional'

const SAMPLE_RATE = 16_000

export interface Alignment {
  /** one per whitespace-separated token of the text, as written, times in seconds */
  words: AlignedWord[]
  /** who placed the words: an engine that heard them, or proportional times */
  aligned: 'pocketsphinx' | 'proportional' | (string & {})
  /** why no engine aligned them (with `aligned: 'proportional'`) */
  reason?: string
}

interface AlignOptions {
  /** seconds added to every time: where the segment's audio starts in the recording */
  offset?: number
}

/** A text with a NUL character: refused, as the API refuses it. */
export class AlignmentInputError extends Error {}

export interface Aligner {
  align(samples: Float32Array | Int16Array, text: string, opts?: AlignOptions): Alignment
  /** Frees the engines' native memory. */
  close(): void
}

/** An aligner trying `engines` in order (by default PocketSphinx), then proportional times. */
export function createAligner(engines: WordAligner[] = [createPocketsphinxAligner()]): Aligner {
  return {
    align(samples, text, opts = {}) {
      if (text.includes('\0')) throw new AlignmentInputError('the text contains a NUL character; remove it and align again')
      const offset = opts.offset ?? 0
      const pcm = samples instanceof Int16Array ? samples : toPcm16(samples)
      const duration = pcm.length / SAMPLE_RATE
      const fallback = (reason: string): Alignment => ({
        words: proportionalWords(text, offset, offset + duration),
        aligned: 'proportional',
        reason,
      })
      if (text.trim() === '') return { words: [], aligned: 'proportional', reason: 'the text has no words' }
      if (pcm.length === 0) return fallback('the segment has no audio')
      const reasons: string[] = []
      for (const engine of engines) {
        const missing = engine.unavailable()
        if (missing) {
          reasons.push(`${engine.name}: ${missing}`)
          continue
        }
        let result: ReturnType<WordAligner['align']>
        try {
          result = engine.align(pcm, text)
        } catch (err) {
          // the engine could not run (its model would not load, the library refused a call): the next one, or proportional times
          result = { failed: (err as Error).message }
        }
        if ('failed' in result) {
          reasons.push(`${engine.name}: ${result.failed}`)
          continue
        }
        return { words: result.words.map(w => shifted(w, offset)), aligned: engine.name }
      }
      return fallback(reasons.join('; ') || 'no alignment engine is configured')
    },
    close() {
      for (const engine of engines) engine.close()
    },
  }
}

function shifted(w: AlignedWord, offset: number): AlignedWord {
  return {
    word: w.word,
    start: round(w.start + offset),
    end: round(w.end + offset),
    confidence: w.confidence === null ? null : Math.round(w.confidence * 1e4) / 1e4,
  }
}

/** Float samples in [-1, 1] as 16-bit PCM: clipped to the range, NaN as silence. */
function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length)
  for (let i = 0; i < samples.length; i++) {
    const v = Math.round(samples[i]! * 32768)
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v || 0
  }
  return out
}
