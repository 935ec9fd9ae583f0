/**
 * Find and replace across a note's transcript (issue 31): a preview (nothing written) and the
 * replacement itself, one edit (one revision, one audit record, one `note.updated` event) however many
 * segments it changes. Each changed segment's words are timed again as a corrected segment's are
 * (segment-timing.ts: aligned to its audio, the recording decoded once for all of them), before the
 * transaction; the write then checks the replacement still changes the same segments the same way. A
 * note created from text has no segments: its paragraphs are replaced, numbered as verbose_json numbers them.
 */
import { ApiError } from '../../http/errors'
import { editSegmentText } from '../../transcript/edits'
import { paragraphReplacements, segmentReplacements, type ReplaceOptions, type SegmentReplacement } from '../../transcript/replace'
import { paragraphs, transcriptText } from '../../transcript/transcript'
import type { Library } from '../library'
import { MAX_NOTE_TEXT_CHARS } from './model'
import type { NotesService } from './service'
import { noSegment } from './segment-edits'
import type { TimeWords } from './segment-timing'
import type { NoteTranscript } from './stored-transcript'
import { checkIfMatch, type EditBy } from './transcript-edits'

export type ReplacementsService = ReturnType<typeof createReplacementsService>

/** What a request sends: the text to find, what to put instead, and the options (absent: any case, whole words). */
export interface ReplaceBody {
  find: string
  replace: string
  matchCase?: boolean
  wholeWord?: boolean
  /** only these segments (indices as verbose_json numbers them); absent: every one that matches */
  segments?: number[]
}

/** What a replacement changes in a transcript: each segment (or paragraph) and the transcript's text after. */
interface Planned {
  changes: SegmentReplacement[]
  text: string
}

function options(body: ReplaceBody): ReplaceOptions {
  for (const field of ['find', 'replace'] as const) {
    if (body[field].includes('\0')) throw new ApiError('invalid_request', `${field} contains a NUL character (U+0000); remove it and send the replacement again.`, { details: [{ field, issue: 'contains U+0000' }] })
  }
  if (body.find.trim() === '') throw new ApiError('invalid_request', 'find is blank; send the words to find.', { details: [{ field: 'find', issue: 'blank' }] })
  return { find: body.find, replace: body.replace, matchCase: body.matchCase ?? false, wholeWord: body.wholeWord ?? true }
}

/** What replacing in `t` changes; 404 for a segment asked for that does not exist, 400 for one without a match or left without words. */
function plan(id: string, t: NoteTranscript, o: ReplaceOptions, only?: readonly number[]): Planned {
  const count = t.segments ? t.segments.length : paragraphs(t.text).length
  const missing = only?.find(i => i >= count)
  if (missing !== undefined) throw noSegment(id, missing, count)
  const chosen = only && new Set(only)
  let planned: Planned
  if (t.segments) {
    const changes = segmentReplacements(t.segments.map(s => s.text), o, chosen)
    const after = new Map(changes.map(c => [c.segment, c.after]))
    planned = { changes, text: transcriptText(t.segments.map((s, i) => ({ text: after.get(i) ?? s.text }))) }
  } else {
    planned = paragraphReplacements(t.text, o, chosen)
  }
  const matched = new Set(planned.changes.map(c => c.segment))
  const unmatched = only?.filter(i => !matched.has(i)) ?? []
  if (unmatched.length) {
    throw new ApiError('invalid_request', `Segment${unmatched.length === 1 ? '' : 's'} ${unmatched.join(', ')} of note ${id} hold${unmatched.length === 1 ? 's' : ''} no match of find; send only segments the preview lists (POST /v1/notes/${id}/replacements/preview), or leave segments out to replace every match.`, { details: [{ field: 'segments', issue: 'no match in segment' }] })
  }
  const emptied = planned.changes.find(c => c.after === '')
  if (emptied) throw new ApiError('invalid_request', `The replacement would leave segment ${emptied.segment} of note ${id} with no words; replace with other words, or leave that segment out (segments).`, { details: [{ field: 'replace', issue: 'a segment left empty' }] })
  if (planned.text.length > MAX_NOTE_TEXT_CHARS) {
    throw new ApiError('invalid_request', `With this replacement the note's transcript would hold ${planned.text.length} characters, over the ${MAX_NOTE_TEXT_CHARS} a note may hold; send a shorter replacement.`, { details: [{ field: 'replace', issue: 'note over its limit' }] })
  }
  return planned
}

const total = (changes: readonly SegmentReplacement[]) => changes.reduce((n, c) => n + c.count, 0)

export function createReplacementsService(deps: {
  notes: Pick<NotesService, 'readableTranscript' | 'transcriptOf' | 'editTranscript'>
  timeWords: TimeWords
}) {
  const read = async (lib: Library, id: string) => {
    const row = await deps.notes.readableTranscript(lib, id)
    return { row, t: await deps.notes.transcriptOf(row) }
  }

  return {
    /** What the replacement would change: how many matches, and each segment's text before and after. Nothing is written. */
    async preview(lib: Library, id: string, body: ReplaceBody) {
      const o = options(body)
      const { t } = await read(lib, id)
      const { changes } = plan(id, t, o, body.segments)
      return { count: total(changes), matches: changes.map(c => ({ segment: c.segment, before: c.before, after: c.after })) }
    },

    /**
     * Every match (or those in `segments`) replaced in one edit; the changed segments' words timed
     * again, the summary marked stale. With no match, nothing is written and the current version is
     * answered.
     */
    async apply(lib: Library, id: string, who: EditBy, body: ReplaceBody): Promise<{ count: number; segments: number[]; version: number }> {
      const o = options(body)
      const { row, t: before } = await read(lib, id)
      const { changes } = plan(id, before, o, body.segments)
      if (!changes.length) {
        const current = row.transcript_version ?? 0
        checkIfMatch(id, who.ifMatch, current)
        return { count: 0, segments: [], version: current }
      }
      const timings = before.segments ? await deps.timeWords(id, changes.map(c => ({ seg: before.segments![c.segment]!, text: c.after }))) : []
      const saved = await deps.notes.editTranscript(lib, id, who, now => {
        const again = plan(id, now, o, body.segments)
        if (JSON.stringify(again.changes) !== JSON.stringify(changes) || changes.some(c => now.segments?.[c.segment]?.start !== before.segments?.[c.segment]?.start || now.segments?.[c.segment]?.end !== before.segments?.[c.segment]?.end)) {
          throw new ApiError('conflict', `The transcript of note ${id} changed while the replaced words were being aligned; preview the replacement again and send it again.`)
        }
        let next: NoteTranscript = now.segments ? now : { ...now, text: again.text }
        changes.forEach((c, i) => {
          if (now.segments) next = editSegmentText(next, c.segment, c.after, timings[i]!.words, timings[i]!.timing)
        })
        return { transcript: next, fields: { summary_stale: 1 }, change: 'replace', segments: changes.map(c => c.segment) }
      })
      return { count: total(changes), segments: changes.map(c => c.segment), version: saved.version }
    },
  }
}
