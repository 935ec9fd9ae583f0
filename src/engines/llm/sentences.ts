/**
 * Sentence units for transcripts without punctuation. PocketSphinx (and any engine like it) gives
 * words with times but no punctuation, so a text splitter finds one "sentence" in a whole meeting.
 * Here the words are cut into sentences where the speaker paused, or where the speaker changes when
 * segments carry speakers; each sentence gets a capital first letter and a final period. Text that
 * already has sentence punctuation (whisper.cpp, typed text) is left as it is: `timedSentences`
 * answers null for it.
 *
 * The rules (docs/decisions.md, "Sentence units and answers"):
 * - a pause of at least PAUSE_SECONDS (0.6 s) between two words ends a sentence: pauses inside a
 *   spoken sentence are mostly under half a second, pauses between sentences longer (measured on
 *   PocketSphinx's transcript of a 57-s spoken meeting, test/fixtures/spoken-meeting.ts: gaps inside
 *   sentences 0.2-0.5 s, at the script's sentence ends 0.58-0.8 s);
 * - a sentence still longer than LONG_SENTENCE_WORDS (25) words is cut at its largest pause (each
 *   side keeping at least MIN_SENTENCE_WORDS words), again until every part is short enough: written
 *   English averages 15–20 words a sentence, and a summary line or a "decision" of 150 words is the
 *   whole transcript again;
 * - a change of speaker always ends a sentence.
 *
 * Such engines write every word in lower case, so the cues of meeting notes that need a capital
 * ("Tom will…", "thanks, Maria") would find no one: common given names, weekdays and months get their
 * capital (names that are also ordinary words, such as "will", "mark" or "may", are left alone).
 */
import type { TimedWord, TranscriptSegment } from '../asr/engine'

const PAUSE_SECONDS = 0.6
export const LONG_SENTENCE_WORDS = 25
const MIN_SENTENCE_WORDS = 4

/** A sentence of a transcript and when it was said (seconds from the start of the recording). */
export interface TimedSentence {
  text: string
  start: number
  end: number
  /** who said it, when the segments carry speakers */
  speaker?: string
}

/** A segment as the pipeline stores it; `speaker` when the engine tells speakers apart. */
type SpokenSegment = TranscriptSegment & { speaker?: string | null }

const SENTENCE_END_RE = /[.!?…。！？](?=["')\]]*(\s|$))/g
const WORD_COUNT_RE = /\S+/g

/** Whether the text carries its own sentence punctuation: at least one sentence end per 80 words. */
export function hasSentencePunctuation(text: string): boolean {
  const ends = text.match(SENTENCE_END_RE)?.length ?? 0
  const words = text.match(WORD_COUNT_RE)?.length ?? 0
  return ends > 0 && ends >= Math.floor(words / 80)
}

const GIVEN_NAMES = new Set(
  ('adam alan alex alice amanda amy andrew angela anna anne anthony ben benjamin brian carlos carol charles chris christopher claire ' +
    'daniel david deborah diana donald dorothy ed edward elena elizabeth emily emma eric frank gary george hannah harry helen henry ' +
    'ian jack jacob james jane janet jason jeff jennifer jessica jim joe john jonathan joseph julia karen kate kevin laura lars ' +
    'linda lisa lucy maria mary matthew michael michelle mike nancy nick nicole olivia oliver paul peter rachel richard robert ' +
    'ryan sam samuel sandra sarah scott sophie steve steven susan thomas tim tom tony victoria william')
    .split(' '),
)
const CALENDAR = new Set('monday tuesday wednesday thursday friday saturday sunday january february april june july september october november december'.split(' '))

/** A lower-case word as it is written: "I", given names, weekdays and months with a capital. */
function written(word: string): string {
  if (word === 'i' || word.startsWith("i'")) return `I${word.slice(1)}`
  const bare = word.replace(/'s$/, '')
  if (GIVEN_NAMES.has(bare) || CALENDAR.has(bare)) return `${word.charAt(0).toUpperCase()}${word.slice(1)}`
  return word
}

interface SpokenWord extends TimedWord {
  speaker: string | null
}

/** Cut a run of words at its largest pause until no part is longer than LONG_SENTENCE_WORDS. */
function cutLong(run: SpokenWord[]): SpokenWord[][] {
  if (run.length <= LONG_SENTENCE_WORDS) return [run]
  let at = -1
  let widest = -Infinity
  for (let i = MIN_SENTENCE_WORDS; i <= run.length - MIN_SENTENCE_WORDS; i++) {
    const gap = run[i]!.start - run[i - 1]!.end
    if (gap > widest) {
      widest = gap
      at = i
    }
  }
  if (at < 0) return [run]
  return [...cutLong(run.slice(0, at)), ...cutLong(run.slice(at))]
}

function sentenceOf(run: SpokenWord[]): TimedSentence {
  const text = run.map(w => written(w.word)).join(' ')
  const speaker = run[0]!.speaker
  return { text: `${text.charAt(0).toUpperCase()}${text.slice(1)}.`, start: run[0]!.start, end: run.at(-1)!.end, ...(speaker ? { speaker } : {}) }
}

/**
 * A diarized transcript as text with a label at each change of speaker ("Maria: … \nTom: …"), the
 * form the summarizers read speakers from (attendees, who owns "I will …"): from the sentences when
 * they were cut from word times, else from the segments' own text. Null when no segment has a speaker.
 */
export function speakerLabelledText(segments: readonly SpokenSegment[] | null | undefined, sentences: readonly TimedSentence[] | null): string | null {
  if (!segments?.some(s => s.speaker)) return null
  const parts: { speaker: string | null; text: string }[] = sentences
    ? sentences.map(s => ({ speaker: s.speaker ?? null, text: s.text }))
    : segments.map(s => ({ speaker: s.speaker ?? null, text: s.text.trim() }))
  const lines: string[] = []
  let current: string | null | undefined
  for (const p of parts) {
    if (!p.text) continue
    if (p.speaker !== current || !lines.length) {
      lines.push(p.speaker ? `${p.speaker}: ${p.text}` : p.text)
      current = p.speaker
    } else lines[lines.length - 1] += ` ${p.text}`
  }
  return lines.join('\n')
}

/** The words of timed segments cut into sentences (pauses, speaker changes, long runs). */
export function sentencesFromWords(segments: readonly SpokenSegment[]): TimedSentence[] {
  const words: SpokenWord[] = []
  for (const s of segments) {
    for (const w of s.words ?? []) if (w.word.trim()) words.push({ word: w.word.trim(), start: w.start, end: w.end, speaker: s.speaker ?? null })
  }
  const runs: SpokenWord[][] = []
  let run: SpokenWord[] = []
  for (const w of words) {
    const prev = run.at(-1)
    if (prev && (w.start - prev.end >= PAUSE_SECONDS || w.speaker !== prev.speaker)) {
      runs.push(run)
      run = []
    }
    run.push(w)
  }
  if (run.length) runs.push(run)
  return runs.flatMap(cutLong).map(sentenceOf)
}

/**
 * The transcript's sentences with their times when it has no punctuation of its own and the engine
 * gave word times; null otherwise (the text is used as it is).
 */
export function timedSentences(text: string, segments: readonly SpokenSegment[] | null | undefined): TimedSentence[] | null {
  if (!segments?.some(s => s.words?.length) || hasSentencePunctuation(text)) return null
  const sentences = sentencesFromWords(segments)
  return sentences.length ? sentences : null
}

/** The sentences as one text, a space between them. */
export function sentencesText(sentences: readonly TimedSentence[]): string {
  return sentences.map(s => s.text).join(' ')
}

/** A time as m:ss (h:mm:ss past an hour), for answers that quote the transcript. */
export function clockTime(seconds: number): string {
  const t = Math.max(0, Math.floor(seconds))
  const h = Math.floor(t / 3600)
  const m = Math.floor((t % 3600) / 60)
  const s = String(t % 60).padStart(2, '0')
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`
}
