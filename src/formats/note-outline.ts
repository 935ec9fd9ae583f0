/**
 * What a note's export shows, in order, before it is written as Markdown (note-markdown.ts) or DOCX
 * (note-docx.ts): both writers render the same outline, so the two files say the same thing.
 *
 * The title, then the date, the recording's file name and the speakers; then the summary as its style
 * structures it (the four styles of the interface: `note` — its summary and sections of points;
 * `bulletpoints` — the bullets; `meeting-notes` — the summary, attendees, decisions and a table of
 * action items with owners and dues; `transcript` — none, the transcript is the summary); then the
 * transcript, a paragraph per speaker's turn with its start time and the speaker's name. A note
 * created from text keeps its text (Markdown as it was written, when it was given as Markdown).
 *
 * `structuredContent` is free-form: anything of another shape than its style's is left out rather
 * than guessed at, and the note's `summary` is shown instead. Control characters (NUL, and every one
 * XML 1.0 forbids, which would make Word refuse the file) are taken out of every text here, once.
 */

import { displayName } from '../transcript/transcript'

/** The media type of a .docx file (note-docx.ts). */
export const NOTE_DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
/** The media type of the Markdown export (note-markdown.ts). */
export const NOTE_MARKDOWN_CONTENT_TYPE = 'text/markdown; charset=utf-8'

/** A note as the export reads it: the note's fields, its speakers' names and its timed segments. */
export interface ExportableNote {
  title: string
  /** the name of the recording the note was made from, when there was one */
  fileName?: string | null
  /** when the note was made, ISO 8601 (the note's `dateCreated`) */
  dateCreated: string
  styleId: string
  summary: string
  /** the transcript changed after the summary was made (the note's `summaryStale`) */
  summaryStale?: boolean
  structuredContent: Record<string, unknown> | null
  /** the note's speakers: each label of the segments and the name shown for it */
  speakers?: readonly { id: string; name: string }[]
  /** the transcript's segments with times (seconds) and speaker labels; null when it has no times (created from text) */
  segments: readonly { start: number; end: number; text: string; speaker?: string }[] | null
  /** the transcript's text, shown when there are no segments */
  transcript: string
  /** the names of the note's tags */
  tags?: readonly string[]
}

export type OutlineBlock =
  | { kind: 'title'; text: string }
  | { kind: 'facts'; facts: { label: string; value: string }[] }
  | { kind: 'heading'; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'table'; header: string[]; rows: string[][] }
  /** a turn of the transcript: its start as `hh:mm:ss`, who spoke (null when not diarized), what was said */
  | { kind: 'turn'; time: string; speaker: string | null; text: string }
  /** the Markdown a note was written in, shown as it is in Markdown and as text in DOCX */
  | { kind: 'markdown'; text: string }

/** What an export says before a summary made from an earlier transcript. */
const STALE_SUMMARY = 'The transcript changed after this summary was made; summarize the note again to bring it up to date.'

/** A transcript paragraph is cut when the speaker changes or after this long, so its time stays useful. */
const TURN_SECONDS = 60

/** Characters no export may carry: C0 controls but tab and line breaks, lone surrogates, U+FFFE/U+FFFF (XML 1.0 `Char`). */
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Text safe for every export: the forbidden characters taken out, line breaks as `\n`. */
const cleanText = (text: string) => text.replace(NOT_XML_CHAR, '').replace(/\r\n?/g, '\n')

/** Text on one line (a heading, a list item, a table cell): every run of white space one space. */
const oneLine = (text: string) => cleanText(text).replace(/\s+/g, ' ').trim()

const str = (v: unknown): string | null => (typeof v === 'string' && oneLine(v) ? oneLine(v) : null)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(str).filter((s): s is string => s !== null) : [])
const record = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null)

/** The lines of a text, each a paragraph of its own, trimmed, the blank ones left out. */
const paragraphs = (text: string) => cleanText(text).split('\n').map(oneLine).filter(Boolean)

/** `hh:mm:ss` from seconds; hours grow past two digits rather than wrapping. */
function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`
}

/** `2026-11-22 10:00 UTC`, or the value as given when it is not a date. */
function dateShown(iso: string): string {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? oneLine(iso) : `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`
}

/** The outline of a note's export. */
export function noteOutline(note: ExportableNote): OutlineBlock[] {
  const names = new Map((note.speakers ?? []).map(s => [s.id, oneLine(s.name)]))
  const speakerName = (label: string | undefined) => (label === undefined ? null : names.get(label) || displayName(oneLine(label), null))
  const fileName = note.fileName ? oneLine(note.fileName) : ''
  const title = oneLine(note.title) || fileName.replace(/\.[^.]*$/, '') || 'Untitled note'

  const facts: { label: string; value: string }[] = []
  if (dateShown(note.dateCreated)) facts.push({ label: 'Date', value: dateShown(note.dateCreated) })
  if (fileName) facts.push({ label: 'File', value: fileName })
  const spoke = [...new Set((note.segments ?? []).map(s => speakerName(s.speaker)).filter((n): n is string => n !== null))]
  if (spoke.length) facts.push({ label: 'Speakers', value: spoke.join(', ') })
  const tags = (note.tags ?? []).map(oneLine).filter(Boolean)
  if (tags.length) facts.push({ label: 'Tags', value: tags.join(', ') })

  const stale: OutlineBlock[] = note.summaryStale ? [{ kind: 'paragraph', text: STALE_SUMMARY }] : []
  const blocks: OutlineBlock[] = [{ kind: 'title', text: title }, ...(facts.length ? [{ kind: 'facts' as const, facts }] : []), ...stale, ...summaryBlocks(note)]
  const turns = transcriptTurns(note, speakerName)
  if (turns.length) blocks.push({ kind: 'heading', text: 'Transcript' }, ...turns)
  return blocks
}

/** The summary as the note's style structures it. */
function summaryBlocks(note: ExportableNote): OutlineBlock[] {
  const content = record(note.structuredContent?.[note.styleId])
  const summary = (text: unknown): OutlineBlock[] => {
    const shown = paragraphs(typeof text === 'string' && text.trim() ? text : note.summary)
    return shown.length ? [{ kind: 'heading', text: 'Summary' }, ...shown.map(text => ({ kind: 'paragraph' as const, text }))] : []
  }
  const listOrNone = (heading: string, items: string[]): OutlineBlock[] =>
    [{ kind: 'heading', text: heading }, items.length ? { kind: 'list', items } : { kind: 'paragraph', text: 'None.' }]

  switch (content ? note.styleId : null) {
    case 'note': {
      const sections = (Array.isArray(content!.sections) ? content!.sections : []).map(record).filter(s => s !== null)
      return [...summary(content!.summary), ...sections.flatMap((s): OutlineBlock[] => {
        const heading = str(s.heading)
        const points = strings(s.points)
        return heading || points.length ? [{ kind: 'heading', text: heading ?? 'Notes' }, ...(points.length ? [{ kind: 'list' as const, items: points }] : [])] : []
      })]
    }
    case 'bulletpoints': {
      const bullets = strings(content!.bullets)
      return bullets.length ? [{ kind: 'heading', text: 'Summary' }, { kind: 'list', items: bullets }] : summary(null)
    }
    case 'meeting-notes': {
      const items = (Array.isArray(content!.actionItems) ? content!.actionItems : []).map(record).filter(a => a !== null && str(a.task) !== null)
      return [
        ...summary(content!.summary),
        ...listOrNone('Attendees', strings(content!.attendees)),
        ...listOrNone('Decisions', strings(content!.decisions)),
        { kind: 'heading', text: 'Action items' },
        items.length
          ? { kind: 'table', header: ['Task', 'Owner', 'Due'], rows: items.map(a => [str(a!.task)!, str(a!.owner) ?? '—', str(a!.due) ?? '—']) }
          : { kind: 'paragraph', text: 'None.' },
      ]
    }
    case 'transcript':
      return []
  }
  // a note created from text: its content under the format it was given in (DECISIONS.md, "Notes created from text")
  const markdown = note.structuredContent?.markdown
  if (typeof markdown === 'string' && cleanText(markdown).trim()) return [{ kind: 'markdown', text: cleanText(markdown).trim() }]
  return summary(null)
}

/**
 * The transcript's paragraphs: consecutive segments of one speaker (or of none) joined, a new one when
 * the speaker changes or the paragraph has run TURN_SECONDS. Without segments, the transcript's own
 * paragraphs without times; nothing when that text is the summary already shown (a note created from text).
 */
function transcriptTurns(note: ExportableNote, speakerName: (label: string | undefined) => string | null): OutlineBlock[] {
  if (!note.segments) {
    if (cleanText(note.transcript).trim() === cleanText(note.summary).trim()) return []
    return paragraphs(note.transcript).map(text => ({ kind: 'paragraph', text }))
  }
  const turns: { start: number; speaker: string | null; texts: string[] }[] = []
  for (const s of note.segments) {
    const text = oneLine(s.text)
    if (!text) continue
    const speaker = speakerName(s.speaker)
    const last = turns.at(-1)
    if (last && last.speaker === speaker && s.start - last.start < TURN_SECONDS) last.texts.push(text)
    else turns.push({ start: s.start, speaker, texts: [text] })
  }
  return turns.map(t => ({ kind: 'turn', time: clock(t.start), speaker: t.speaker, text: t.texts.join(' ') }))
}
