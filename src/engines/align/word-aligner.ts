/**
 * What an alignment engine is: given a segment's audio and its (corrected) text, each of the text's
 * words with when it was said. PocketSphinx is one (pocketsphinx-aligner.ts); whisper.cpp's word
 * times, where its model is present, can be another behind the same interface.
 */

/** A word of the text (as written) and when it was said, in seconds. */
export interface AlignedWord {
  word: string
  start: number
  end: number
  /**
   * How sure the engine is of where the word is (0 to 1); null when it could not say (a word outside
   * its dictionary, a word nobody says, or times shared out in proportion)
   */
  confidence: number | null
}

/** An engine's answer: the words with times relative to the audio given, or why it could not align them. */
export type EngineAlignment = { words: AlignedWord[] } | { failed: string }

export interface WordAligner {
  readonly name: 'pocketsphinx' | (string & {})
  /** What keeps the engine from running here (library or model missing), or null when it can. */
  unavailable(): string | null
  /** `samples`: 16 kHz mono, 16-bit. Synchronous: it uses the CPU for a fraction of the audio's duration. */
  align(samples: Int16Array, text: string): EngineAlignment
  /** Frees what the engine holds (its decoder); it opens again on the next align. */
  close(): void
}
