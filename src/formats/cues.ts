/**
 * Subtitle cues a screen can show, cut from a transcript's timed segments. A speech engine's segment
 * can be 30 s and 10 lines long; a subtitle cue may not. The bounds are those of the two usual style
 * guides:
 *
 * - Netflix, "English (USA) Timed Text Style Guide"
 *   (https://partnerhelp.netflixstudios.com/hc/en-us/articles/217350977): at most 42 characters a
 *   line, at most 2 lines, at most 7 seconds a cue, at least 5/6 s; break lines after punctuation.
 * - BBC, "Subtitle Guidelines" (https://www.bbc.co.uk/accessibility/forproducts/guides/subtitles/):
 *   at most two lines (37 characters in the old Teletext grid, about 68% of the screen's width
 *   otherwise), a new sentence starts a new subtitle where it can, subtitles break at natural pauses,
 *   and two lines are of similar length rather than one long and one short.
 *
 * So: cues of at most 2 lines of at most 42 characters and at most 7 s; a piece cut shorter than
 * 1 s is joined to its neighbour when the two still fit. A segment that does not fit is cut, first at
 * a sentence end (a word ending in `.`, `!` or `?`), then at a pause between words (a gap of at least
 * 0.5 s between one word's end and the next one's start, the PocketSphinx `<sil>` between phrases),
 * then after a comma, semicolon or colon, then between any two words; among the places of the best
 * kind, the one nearest the middle (in characters), so the two sides come out alike. A cue's two lines
 * are balanced the same way.
 *
 * With word times (PocketSphinx) each cue runs from its first word's start to its last word's end.
 * Without them (whisper.cpp gives segment times only) each word gets a share of the segment's time in
 * proportion to its characters, so a piece's time is proportional to its characters and the pieces
 * cover the segment exactly. Either way the first cue of a segment starts at the segment's start and
 * the last ends at its end; cues never overlap; every word of the segment's text is kept, in order.
 *
 * Across segments (`cutTranscriptCues`, for the whole transcript): a cue still under 1 s that cannot
 * stay up a second before the next cue starts (a one-word segment, a turn cut short by a speaker
 * change) is merged into a neighbour that can absorb it, the nearer in time first. The same speaker's
 * words join theirs within 2 lines; across a speaker change the two make a dialogue cue, one line per
 * speaker opening with a hyphen (Netflix's English guide: "a hyphen without a space", at most one
 * speaker per line; "-Are you coming?" / "-In a minute."), so never more than two speakers and never
 * a speaker's words split over the two lines.
 *
 * Written here rather than taken from npm: the subtitle libraries (`subtitle`, `subsrt-ts`,
 * `node-webvtt`) parse and write cues they are given and at most resync them; none cuts a long
 * timed segment into readable cues from word times, which is all this file does (the file syntax
 * stays in transcript.ts).
 */

export const MAX_LINE_CHARS = 42
const MAX_LINES = 2
const MAX_CUE_SECONDS = 7
const MIN_CUE_SECONDS = 1
/** a silence at least this long between two words is a pause to cut at */
const PAUSE_SECONDS = 0.5

export interface CueWord {
  word: string
  /** seconds from the start of the recording */
  start: number
  end: number
}

export interface CueSource {
  start: number
  end: number
  text: string
  /** the segment's words with their times, when the engine gives them */
  words?: readonly CueWord[]
}

export interface CueBounds {
  maxLineChars?: number
  maxCueSeconds?: number
  minCueSeconds?: number
  pauseSeconds?: number
}

/** A cue in seconds, its text in lines (at most two, unless one word is longer than a line). */
export interface TimedCue {
  start: number
  end: number
  lines: string[]
}

interface Token { text: string; start: number; end: number }

/**
 * The words of the segment's text with times: the engine's word times when there is one per word
 * of the text, otherwise shares of the segment in proportion to characters (a word and its space).
 * Times are kept inside the segment and in order.
 */
function tokens(seg: CueSource): Token[] {
  const texts = seg.text.split(/\s+/).filter(Boolean)
  if (texts.length === 0) return []
  const span = Math.max(0, seg.end - seg.start)
  let out: Token[]
  if (seg.words && seg.words.length === texts.length) {
    out = texts.map((text, i) => ({ text, start: seg.words![i]!.start, end: seg.words![i]!.end }))
  } else {
    const total = texts.reduce((n, t) => n + t.length + 1, 0)
    let chars = 0
    out = texts.map(text => {
      const start = seg.start + (span * chars) / total
      chars += text.length + 1
      return { text, start, end: seg.start + (span * chars) / total }
    })
  }
  let prev = seg.start
  for (const t of out) {
    t.start = Math.min(seg.end, Math.max(prev, t.start))
    t.end = Math.min(seg.end, Math.max(t.start, t.end))
    prev = t.end
  }
  out[0]!.start = seg.start
  out.at(-1)!.end = Math.max(seg.end, out.at(-1)!.start)
  return out
}

/**
 * The text in at most two lines of at most `max` characters, the break chosen so the longer line is
 * as short as it can be (balanced lines; on a tie the top line is the shorter). null when it does not
 * fit. One word longer than a line is a line of its own.
 */
export function twoLines(words: readonly string[], max: number): string[] | null {
  const text = words.join(' ')
  if (text.length <= max || words.length === 1) return [text]
  let best: string[] | null = null
  let bestLonger = Infinity
  for (let k = 1; k < words.length; k++) {
    const top = words.slice(0, k).join(' ')
    const bottom = words.slice(k).join(' ')
    if (top.length > max || bottom.length > max) continue
    const longer = Math.max(top.length, bottom.length)
    if (longer < bestLonger || (longer === bestLonger && top.length <= bottom.length)) {
      best = [top, bottom]
      bestLonger = longer
    }
  }
  return best
}

/** Cues of one segment within the bounds; a segment with no words gives none. */
export function segmentCues(seg: CueSource, bounds: CueBounds = {}): TimedCue[] {
  const maxChars = bounds.maxLineChars ?? MAX_LINE_CHARS
  const maxSec = bounds.maxCueSeconds ?? MAX_CUE_SECONDS
  const minSec = bounds.minCueSeconds ?? MIN_CUE_SECONDS
  const pause = bounds.pauseSeconds ?? PAUSE_SECONDS
  const toks = tokens(seg)
  if (toks.length === 0) return []

  // characters before word i, each word with the space after it: a range's text is O(1) to measure,
  // so a segment of thousands of words (a transcript without pauses) is cut in O(n log n) measures
  const before = [0]
  for (const t of toks) before.push(before.at(-1)! + t.text.length + 1)
  const words = (i: number, j: number) => toks.slice(i, j).map(t => t.text)
  const seconds = (i: number, j: number) => toks[j - 1]!.end - toks[i]!.start
  const chars = (i: number, j: number) => before[j]! - before[i]! - 1
  const fits = (i: number, j: number) => j - i === 1 ||
    (seconds(i, j) <= maxSec && chars(i, j) <= MAX_LINES * maxChars + 1 && twoLines(words(i, j), maxChars) !== null)

  /** How good a place to cut before word k is: 0 sentence end, 1 pause, 2 clause punctuation, 3 any. */
  const kind = (k: number) => {
    const last = toks[k - 1]!
    if (/[.!?]["'”’)\]]*$/.test(last.text)) return 0
    if (toks[k]!.start - last.end >= pause) return 1
    if (/[,;:]["'”’)\]]*$/.test(last.text)) return 2
    return 3
  }

  const ranges: Array<[number, number]> = []
  const cut = (i: number, j: number): void => {
    if (fits(i, j)) { ranges.push([i, j]); return }
    let best = -1
    let bestScore = [Infinity, Infinity, Infinity]
    for (let k = i + 1; k < j; k++) {
      // a side shorter than the minimum only when no cut avoids it
      const short = seconds(i, k) < minSec || seconds(k, j) < minSec ? 1 : 0
      const score = [short, kind(k), Math.abs(chars(i, k) - chars(k, j))]
      if (score[0]! < bestScore[0]! || (score[0] === bestScore[0] && (score[1]! < bestScore[1]! || (score[1] === bestScore[1] && score[2]! < bestScore[2]!)))) {
        best = k
        bestScore = score
      }
    }
    cut(i, best)
    cut(best, j)
  }
  cut(0, toks.length)

  // a piece shorter than the minimum is joined to a neighbour (the shorter one first) when the two fit
  for (let r = 0; r < ranges.length && ranges.length > 1;) {
    const [i, j] = ranges[r]!
    if (seconds(i, j) >= minSec) { r++; continue }
    const prev = r > 0 ? ranges[r - 1]! : null
    const next = r + 1 < ranges.length ? ranges[r + 1]! : null
    const options = [prev && fits(prev[0], j) ? 'prev' : null, next && fits(i, next[1]) ? 'next' : null].filter(Boolean)
    if (options.length === 0) { r++; continue }
    const usePrev = options.length === 2 ? seconds(prev![0], prev![1]) <= seconds(next![0], next![1]) : options[0] === 'prev'
    if (usePrev) ranges.splice(r - 1, 2, [prev![0], j])
    else ranges.splice(r, 2, [i, next![1]])
    r = Math.max(0, r - 1)
  }

  return ranges.map(([i, j]) => ({ start: toks[i]!.start, end: toks[j - 1]!.end, lines: twoLines(words(i, j), maxChars) ?? [words(i, j).join(' ')] }))
}

/** One speaker's lines in a cue. */
export interface CueTurn {
  /** the name shown, when the transcript was diarized */
  speaker?: string
  lines: string[]
}

/**
 * A cue of a whole transcript, in seconds: one speaker's lines (at most two), or a dialogue cue of two
 * speakers, one line each, which the formats open with a hyphen ("-Bob: the" / "-Ann: yes").
 */
export interface TranscriptCue {
  start: number
  end: number
  turns: CueTurn[]
}

export interface SpokenSegment extends CueSource {
  /** the name shown, when the transcript was diarized */
  speaker?: string
}

export interface TranscriptCueOptions extends CueBounds {
  /** the name is written in the text before the words ("Maria: …", as SubRip shows it): lines leave room for it */
  namesInText?: boolean
}

/** What opens each line of a two-speaker cue. */
export const DIALOGUE_DASH = '-'

interface Piece { start: number; end: number; turns: { speaker?: string; words: string[] }[] }

/**
 * The cues of a transcript: each segment cut by `segmentCues`, then every cue still shorter than
 * `minCueSeconds` that cannot stay on screen that long before the next cue starts is merged into a
 * neighbour that can absorb it: the nearer in time first (on a tie the same speaker's, then the one
 * before), else the other. A neighbour can absorb it when the result keeps the bounds: the same
 * speaker's words in at most 2 lines and `maxCueSeconds`; across a speaker change, a dialogue cue of
 * exactly two speakers with each one's words on one line, hyphen and name included. A cue no
 * neighbour can absorb stays up until a second has passed or the next cue starts, whichever is first.
 */
export function cutTranscriptCues(segments: readonly SpokenSegment[], opts: TranscriptCueOptions = {}): TranscriptCue[] {
  const maxChars = opts.maxLineChars ?? MAX_LINE_CHARS
  const maxSec = opts.maxCueSeconds ?? MAX_CUE_SECONDS
  const minSec = opts.minCueSeconds ?? MIN_CUE_SECONDS
  // SubRip shows the name before the first line: a speaker's lines are wrapped short enough to hold it
  const room = (speaker?: string) => (opts.namesInText && speaker ? Math.max(12, maxChars - speaker.length - 2) : maxChars)
  const dialogueLine = (speaker: string | undefined, words: readonly string[]) =>
    `${DIALOGUE_DASH}${opts.namesInText && speaker ? `${speaker}: ` : ''}${words.join(' ')}`
  const fits = (p: Piece) => p.end - p.start <= maxSec && (p.turns.length === 1
    ? p.turns[0]!.words.length === 1 || twoLines(p.turns[0]!.words, room(p.turns[0]!.speaker)) !== null
    : p.turns.length === 2 && p.turns.every(t => dialogueLine(t.speaker, t.words).length <= maxChars))

  const pieces: Piece[] = segments.flatMap(s => segmentCues(s, { ...opts, maxLineChars: room(s.speaker) }).map(c => ({
    start: c.start, end: c.end, turns: [{ ...(s.speaker === undefined ? {} : { speaker: s.speaker }), words: c.lines.join(' ').split(' ') }],
  })))

  for (let r = 0; r < pieces.length;) {
    const p = pieces[r]!
    const prev = pieces[r - 1]
    const next = pieces[r + 1]
    if (p.end - p.start >= minSec || (next ? next.start : Infinity) - p.start >= minSec) { r++; continue }
    const options = [
      ...(prev ? [{ at: r - 1, gap: p.start - prev.end, other: prev.turns.at(-1)!.speaker !== p.turns[0]!.speaker, merged: joined(prev, p) }] : []),
      ...(next ? [{ at: r, gap: next.start - p.end, other: next.turns[0]!.speaker !== p.turns.at(-1)!.speaker, merged: joined(p, next) }] : []),
    ].sort((a, b) => a.gap - b.gap || Number(a.other) - Number(b.other))
    const taken = options.find(o => fits(o.merged))
    if (!taken) { r++; continue }
    pieces.splice(taken.at, 2, taken.merged)
    r = Math.max(0, taken.at - 1)
  }

  return pieces.map((p, i) => {
    const next = pieces[i + 1]
    const end = p.end - p.start >= minSec ? p.end : Math.max(p.end, Math.min(p.start + minSec, next ? next.start : Infinity))
    const turns = p.turns.map(t => ({
      ...(t.speaker === undefined ? {} : { speaker: t.speaker }),
      lines: p.turns.length === 1 ? twoLines(t.words, room(t.speaker)) ?? [t.words.join(' ')] : [t.words.join(' ')],
    }))
    return { start: p.start, end, turns }
  })
}

/** Two neighbouring cues as one: their turns in order, a speaker's words joined when the two meet. */
function joined(a: Piece, b: Piece): Piece {
  const turns = a.turns.map(t => ({ ...t, words: [...t.words] }))
  for (const t of b.turns) {
    const last = turns.at(-1)!
    if (last.speaker === t.speaker) last.words.push(...t.words)
    else turns.push({ ...t, words: [...t.words] })
  }
  return { start: Math.min(a.start, b.start), end: Math.max(a.end, b.end), turns }
}
