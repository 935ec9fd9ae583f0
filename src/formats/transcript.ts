/**
 * A transcript written in the formats other tools read: plain text, SubRip (SRT), WebVTT and JSON.
 * Used by `notesvc transcribe` and meant for the API's transcript export as well, so nothing here
 * knows about the CLI, notes or HTTP: timed segments (seconds from the start of the recording) in,
 * text out.
 *
 * SRT and VTT are written here rather than by an npm library. The ones that write them (`subtitle`,
 * `subsrt-ts`) number cues and format timestamps, the easy part, but get the rest wrong for a
 * transcript: `subtitle` formats times through a local-time `Date`, so a cue past 24 hours comes out
 * as `01:00:01,86400234`; `subsrt-ts` floors float milliseconds (2.345 s is written 2,344); neither
 * escapes text (`&` and `<` must be escaped in VTT, `-->` may not appear in a cue) nor keeps a blank
 * line in the text from ending the cue, nor wraps long lines. Tests check the output with real parsers
 * from npm (`subtitle`'s parser, `node-webvtt`).
 *
 * Cues are cut from the segments by cues.ts, for every caller (API, CLI, browser export, OpenAI
 * route): at most 2 lines of at most `maxLineChars` characters (42) and at most 7 s, at word times when
 * the engine gives them; a segment's first cue starts at its start and its last ends at its end.
 * A single word longer than a line stays whole. A cue under 1 s is merged into a neighbour that can
 * absorb it, across segments and speakers (a two-speaker dialogue cue), as cues.ts says.
 */

import { cutTranscriptCues, DIALOGUE_DASH, MAX_LINE_CHARS, type CueTurn, type CueWord } from './cues'

export const TRANSCRIPT_FORMATS = ['txt', 'srt', 'vtt', 'json'] as const
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number]

/** The media type each format is served as. */
export const TRANSCRIPT_CONTENT_TYPES: Record<TranscriptFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  json: 'application/json',
}

export interface TimedSegment {
  /** seconds from the start of the recording */
  start: number
  end: number
  text: string
  /** the segment's words with their times, when the engine gives them: cues are cut at them */
  words?: readonly CueWord[]
  /** who said it (a name to show), when the recording was diarized */
  speaker?: string
}

export interface CueOptions {
  /** longest line of a cue, in characters (default 42) */
  maxLineChars?: number
}

/**
 * A subtitle cue: times in whole milliseconds, text already wrapped into lines (not yet escaped): one
 * speaker's lines, or two speakers' one line each (a dialogue cue, cues.ts).
 */
export interface Cue {
  startMs: number
  endMs: number
  turns: CueTurn[]
}

/**
 * The cues of a transcript, cut and merged by cues.ts (`cutTranscriptCues`), in order. Times are
 * rounded to the millisecond, never negative, a cue never starts before the previous one ends unless
 * their segments overlap, and a cue ends at least 1 ms after it starts (both formats need end > start;
 * an engine may give a one-word segment no length).
 */
export function transcriptCues(segments: readonly TimedSegment[], opts: CueOptions & { namePrefix?: boolean } = {}): Cue[] {
  const cues: Cue[] = []
  let prev: { end: number; endMs: number } | null = null
  for (const c of cutTranscriptCues(segments, { maxLineChars: opts.maxLineChars ?? MAX_LINE_CHARS, namesInText: opts.namePrefix === true })) {
    const rounded = Math.max(0, Math.round(c.start * 1000))
    const startMs = prev && prev.end <= c.start ? Math.max(rounded, prev.endMs) : rounded
    const endMs = Math.max(startMs + 1, Math.round(c.end * 1000))
    cues.push({ startMs, endMs, turns: c.turns })
    prev = { end: c.end, endMs }
  }
  return cues
}

/** `hh:mm:ss<sep>mmm`; hours grow past two digits rather than wrapping. */
function timestamp(ms: number, separator: ',' | '.'): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  const hours = Math.floor(ms / 3_600_000)
  const minutes = Math.floor(ms / 60_000) % 60
  const seconds = Math.floor(ms / 1000) % 60
  return `${pad(hours)}:${pad(minutes)}:${pad(seconds)}${separator}${pad(ms % 1000, 3)}`
}

/** SRT has no escapes; the one sequence that can break a parser inside text is the timing arrow. */
const srtText = (line: string) => line.replaceAll('-->', '->')

/** WebVTT cue text: `&`, `<` and `>` as character references (which also keeps `-->` out). */
const vttText = (line: string) => line.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')

/**
 * A cue's lines with the speaker's name before the first ("Maria: …"), as SubRip and plain text show
 * speakers; a dialogue cue's lines each open with the hyphen and the name ("-Maria: …").
 */
function named(c: Cue): string[] {
  if (c.turns.length > 1) return c.turns.map(t => `${DIALOGUE_DASH}${t.speaker ? `${t.speaker}: ` : ''}${t.lines.join(' ')}`)
  const [{ speaker, lines }] = c.turns as [CueTurn]
  return speaker ? [`${speaker}: ${lines[0] ?? ''}`, ...lines.slice(1)] : lines
}

/** SubRip: numbered cues from 1, `hh:mm:ss,mmm --> hh:mm:ss,mmm`, a blank line after each; each cue of a named speaker starts with the name. */
export function toSrt(segments: readonly TimedSegment[], opts: CueOptions = {}): string {
  return transcriptCues(segments, { ...opts, namePrefix: true })
    .map((c, i) => `${i + 1}\n${timestamp(c.startMs, ',')} --> ${timestamp(c.endMs, ',')}\n${named(c).map(srtText).join('\n')}\n`)
    .join('\n')
}

/** A WebVTT voice span's annotation: no `>` or line break, `&` escaped. */
const voice = (name: string) => name.replace(/[\r\n]+/g, ' ').replaceAll('&', '&amp;').replaceAll('>', '&gt;').replaceAll('<', '&lt;')

/**
 * WebVTT: the `WEBVTT` header, then numbered cues, `hh:mm:ss.mmm --> hh:mm:ss.mmm`; a cue of a named
 * speaker in a voice span (`<v Maria>…</v>`), which players show or style as the speaker; a dialogue
 * cue has one line and one voice span per speaker, each line opening with the hyphen.
 */
export function toVtt(segments: readonly TimedSegment[], opts: CueOptions = {}): string {
  const cues = transcriptCues(segments, opts).map((c, i) => {
    const dash = c.turns.length > 1 ? DIALOGUE_DASH : ''
    const text = c.turns.map(t => {
      const lines = (dash ? [t.lines.join(' ')] : t.lines).map(l => `${dash}${vttText(l)}`).join('\n')
      return t.speaker ? `<v ${voice(t.speaker)}>${lines}</v>` : lines
    }).join('\n')
    return `${i + 1}\n${timestamp(c.startMs, '.')} --> ${timestamp(c.endMs, '.')}\n${text}\n`
  })
  return ['WEBVTT\n', ...cues].join('\n')
}

/** Plain text of a diarized transcript: one line per turn, "Maria: …", in order. */
export function toSpeakerTxt(segments: readonly TimedSegment[]): string {
  const lines: string[] = []
  let current: string | undefined
  for (const s of segments) {
    const text = s.text.trim()
    if (!text) continue
    if (s.speaker !== current || !lines.length) {
      lines.push(s.speaker ? `${s.speaker}: ${text}` : text)
      current = s.speaker
    } else lines[lines.length - 1] += ` ${text}`
  }
  return lines.length ? `${lines.join('\n')}\n` : ''
}

/** Plain text: the transcript as it is, ending in a newline. */
export function toTxt(transcript: string): string {
  return transcript.endsWith('\n') || transcript === '' ? transcript : `${transcript}\n`
}

export interface TranscriptDocument {
  /** the language heard or given (ISO 639-1), null when unknown */
  language: string | null
  /** the recording's length in seconds, when known */
  duration: number | null
  transcript: string
  segments: readonly TimedSegment[]
  /** present when a summary was asked for */
  summary?: { styleId: string; title: string; summary: string; structuredContent: Record<string, unknown> | null }
}

/** JSON: the segments with their times (seconds, to the millisecond), the transcript, the language and the summary when there is one. */
export function toJson(doc: TranscriptDocument): string {
  const round = (x: number) => Math.round(x * 1000) / 1000
  const body = {
    language: doc.language,
    duration: doc.duration === null ? null : round(doc.duration),
    transcript: doc.transcript,
    segments: doc.segments.map(s => ({ start: round(s.start), end: round(s.end), text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) })),
    ...(doc.summary ? { summary: doc.summary } : {}),
  }
  return `${JSON.stringify(body, null, 2)}\n`
}

/**
 * OpenAI's `diarized_json` (its `response_format` of the same name): each segment with the speaker who
 * said it, as `type`/`id` OpenAI gives them, and `usage` by duration. Written for the OpenAI route and
 * a note's transcript alike, from segments whose `speaker` is already the name to show.
 */
export function toDiarizedJson(text: string, duration: number, segments: readonly (TimedSegment & { speaker: string })[]) {
  const round = (x: number) => Math.round(x * 1000) / 1000
  return {
    task: 'transcribe' as const,
    duration: round(duration),
    text,
    segments: segments.map((s, i) => ({ type: 'transcript.text.segment' as const, id: `seg_${i}`, start: round(s.start), end: round(s.end), text: s.text, speaker: s.speaker })),
    usage: { type: 'duration' as const, seconds: round(duration) },
  }
}

/** One writer per format, for callers that take the format as a value. */
export function formatTranscript(format: TranscriptFormat, doc: TranscriptDocument, opts: CueOptions = {}): string {
  switch (format) {
    case 'txt': return doc.segments.some(s => s.speaker) ? toSpeakerTxt(doc.segments) : toTxt(doc.transcript)
    case 'srt': return toSrt(doc.segments, opts)
    case 'vtt': return toVtt(doc.segments, opts)
    case 'json': return toJson(doc)
  }
}
