/**
 * Ordinary recognition (the language model) through the library, each word with its posterior
 * probability: what `pocketsphinx_continuous -time yes` prints in its fourth column, computed the same
 * way (the lattice's best path, `ps_seg_prob`, `logmath_exp`) and cut into utterances the same way
 * (the voice-activity detector, 2,048 samples at a time). For the ASR adapter to use in place of the
 * program; it does not yet (bench/word-confidence.ts compares the two).
 */
import { POCKETSPHINX_MODEL, PocketsphinxDecoder, type DecoderOptions } from './decoder'

/** 16-bit samples handed to the library at a time, as the program reads them. */
const BLOCK = 2048
const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+|\(NULL\))$/

export interface HeardWord {
  /** the dictionary word, an alternative pronunciation's mark dropped (`the(2)` is `the`) */
  word: string
  /** seconds from the start of the samples */
  start: number
  end: number
  /** posterior probability, 0 to 1 */
  confidence: number
}

export interface HeardUtterance {
  text: string
  words: HeardWord[]
}

export interface PocketsphinxRecognizer {
  /** `samples`: 16 kHz mono, 16-bit; utterances in order, fillers left out. */
  recognize(samples: Int16Array): HeardUtterance[]
  close(): void
}

/** A recognizer with its own decoder (the language model loaded: about 1.4 s, once). */
export function createPocketsphinxRecognizer(opts: DecoderOptions = {}): PocketsphinxRecognizer {
  let decoder: PocketsphinxDecoder | null = null
  return {
    recognize(samples) {
      decoder ??= PocketsphinxDecoder.open({ ...opts, lm: opts.lm ?? POCKETSPHINX_MODEL.lm, vad: true })
      return utterances(decoder, samples)
    },
    close() {
      decoder?.free()
      decoder = null
    },
  }
}

/** The program's loop (`recognize_from_file`): an utterance ends when the detector stops hearing speech. */
function utterances(d: PocketsphinxDecoder, samples: Int16Array): HeardUtterance[] {
  const out: HeardUtterance[] = []
  const collect = () => {
    const words = d.segments()
      .filter(w => !FILLER.test(w.word))
      .map(w => ({ word: w.word.replace(/\(\d+\)$/, ''), start: w.start, end: w.end, confidence: w.posterior }))
    if (words.length > 0) out.push({ text: words.map(w => w.word).join(' '), words })
  }
  d.startStream()
  d.start()
  let inUtterance = false
  for (let at = 0; at < samples.length; at += BLOCK) {
    d.process(samples.subarray(at, Math.min(samples.length, at + BLOCK)))
    const speech = d.inSpeech()
    if (speech && !inUtterance) inUtterance = true
    if (!speech && inUtterance) {
      d.end()
      collect()
      d.start()
      inUtterance = false
    }
  }
  d.end()
  if (inUtterance) collect()
  return out
}
