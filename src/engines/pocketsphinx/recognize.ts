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
const MAX_UTTERANCE_SAMPLES = 60 * 16_000
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

interface HeardUtterance {
  text: string
  words: HeardWord[]
}

export interface PocketsphinxRecognizer {
  /** `samples`: 16 kHz mono, 16-bit; utterances in order, fillers left out. */
  recognize(samples: Int16Array): HeardUtterance[]
  close(): void
}

/** A recognizer with its own decoder (the language model loaded: about 1.3 s, once). */
export function createPocketsphinxRecognizer(opts: DecoderOptions = {}): PocketsphinxRecognizer {
  let decoder: PocketsphinxDecoder | null = null
  const open = () => PocketsphinxDecoder.open({ ...opts, lm: opts.lm ?? POCKETSPHINX_MODEL.lm, vad: true })
  return {
    recognize(samples) {
      decoder ??= open()
      // each recording heard afresh, as the program hears each file; a library whose normalization
      // cannot be reset gets a new decoder instead
      if (!decoder.startStream()) {
        decoder.free()
        decoder = open()
        decoder.startStream()
      }
      return utterances(decoder, samples)
    },
    close() {
      decoder?.free()
      decoder = null
    },
  }
}

/**
 * The program's loop (`recognize_from_file`): an utterance ends when the detector stops hearing
 * speech, or, unlike the program, after a minute of it (a long stretch of noise would otherwise be
 * one search over all of it).
 */
function utterances(d: PocketsphinxDecoder, samples: Int16Array): HeardUtterance[] {
  const out: HeardUtterance[] = []
  const collect = () => {
    const words = d.segments()
      .filter(w => !FILLER.test(w.word))
      .map(w => ({ word: w.word.replace(/\(\d+\)$/, ''), start: w.start, end: w.end, confidence: w.posterior }))
    if (words.length > 0) out.push({ text: words.map(w => w.word).join(' '), words })
  }
  d.start()
  let speechFrom: number | null = null
  for (let at = 0; at < samples.length; at += BLOCK) {
    d.process(samples.subarray(at, Math.min(samples.length, at + BLOCK)))
    const speech = d.inSpeech()
    if (speech && speechFrom === null) speechFrom = at
    if (speechFrom !== null && (!speech || at - speechFrom > MAX_UTTERANCE_SAMPLES)) {
      d.end()
      collect()
      d.start()
      speechFrom = null
    }
  }
  d.end()
  if (speechFrom !== null) collect()
  return out
}
