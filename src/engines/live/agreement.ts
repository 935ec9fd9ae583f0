/**
 * The LocalAgreement-2 policy of whisper_streaming (Macháček et al., 2023, `HypothesisBuffer` in
 * whisper_online.py), for an engine that can only decode a window of audio again and again: a word is
 * committed once two consecutive decodes agree on it (the longest common prefix of the two hypotheses
 * after what is already committed); what one decode says and the next has not confirmed is the
 * provisional tail. Pure code: the windowed recognizer (windowed.ts) feeds it each decode's words.
 *
 * Word times: whisper.cpp's binding gives segment times only, so a segment's words get its time span
 * in proportion to their length in characters. They serve only to drop, from a new hypothesis, the
 * words that lie before the last committed one (the window overlaps what is committed), as
 * whisper_streaming does with its word times; the words' own times are never shown.
 */

/** A word of a hypothesis, its times in seconds from the turn's start. */
export interface HeardWord {
  text: string
  start: number
  end: number
}

/** A decoded segment, its times in seconds from the start of the audio decoded. */
export interface TimedText {
  text: string
  start: number
  end: number
}

/** Words of the segments, with times spread over each segment by length, shifted by `offset` seconds. */
export function wordsOf(segments: readonly TimedText[], offset: number): HeardWord[] {
  const words: HeardWord[] = []
  for (const s of segments) {
    const parts = s.text.split(/\s+/).filter(Boolean)
    const chars = parts.reduce((n, w) => n + w.length, 0)
    let at = s.start
    for (const w of parts) {
      const span = chars > 0 ? ((s.end - s.start) * w.length) / chars : 0
      words.push({ text: w, start: offset + at, end: offset + at + span })
      at += span
    }
  }
  return words
}

/** Two words are the same word when they differ only in case and punctuation ("Hello," = "hello"). */
function sameWord(a: string, b: string): boolean {
  const key = (w: string) => w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '')
  return key(a) === key(b) && (key(a) !== '' || a === b)
}

/** A new hypothesis's words may start this much before the last committed word's end and still be new. */
const OVERLAP_SLACK = 0.1
/** The n-gram check runs when the new words start within this of the last committed word's end. */
const OVERLAP_NEAR = 1
/** The longest run of committed words looked for again at the start of a new hypothesis. */
const MAX_NGRAM = 5

export class LocalAgreement {
  /** every word committed so far in this turn, in order */
  readonly committed: HeardWord[] = []
  /** the previous hypothesis's words not committed yet */
  #tail: HeardWord[] = []

  /** the end of the last committed word (turn seconds); 0 before any */
  get committedUntil(): number {
    return this.committed.at(-1)?.end ?? 0
  }

  /** the provisional words: heard once, not yet confirmed */
  get tail(): readonly HeardWord[] {
    return this.#tail
  }

  /**
   * One decode's hypothesis (words with turn times): the words both it and the previous one say after
   * what is committed are committed (returned); the rest becomes the tail.
   */
  insert(hypothesis: readonly HeardWord[]): HeardWord[] {
    const fresh = this.#afterCommitted(hypothesis)
    const agreed: HeardWord[] = []
    while (agreed.length < fresh.length && agreed.length < this.#tail.length && sameWord(fresh[agreed.length]!.text, this.#tail[agreed.length]!.text)) {
      agreed.push(fresh[agreed.length]!)
    }
    this.committed.push(...agreed)
    this.#tail = fresh.slice(agreed.length)
    return agreed
  }

  /** The words of a hypothesis that come after the committed ones (by time, then by repeated words). */
  #afterCommitted(hypothesis: readonly HeardWord[]): HeardWord[] {
    const until = this.committedUntil
    const fresh = hypothesis.filter(w => w.start > until - OVERLAP_SLACK)
    if (!fresh.length || !this.committed.length || Math.abs(fresh[0]!.start - until) >= OVERLAP_NEAR) return fresh
    // the window overlaps the committed words: drop their repetition at the hypothesis's start
    for (let n = Math.min(MAX_NGRAM, this.committed.length, fresh.length); n >= 1; n--) {
      const last = this.committed.slice(-n)
      if (last.every((w, i) => sameWord(w.text, fresh[i]!.text))) return fresh.slice(n)
    }
    return fresh
  }

  /** What to show: the committed words, then the provisional tail. */
  text(): string {
    return [...this.committed, ...this.#tail].map(w => w.text).join(' ')
  }
}
