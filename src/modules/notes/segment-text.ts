/**
 * A segment's words corrected (PATCH /v1/notes/{id}/segments/{index} with `text`): the new words timed
 * by forced alignment to the segment's audio (engines/align), or in proportion to their letters when
 * no engine can align them, and the segment says which (`timing`). The words a person wrote get
 * confidence 1: the confidence says how sure we are the word is right, and a person said it is.
 * The alignment runs before the write's transaction, in the aligner's thread (engines/align/thread.ts;
 * no transaction is held open while audio is decoded and aligned); the write then checks the segment
 * is still the one aligned.
 */
import { ApiError } from '../../http/errors'
import { proportionalWords, type Alignment } from '../../engines/align'
import type { ThreadedAligner } from '../../engines/align/thread'
import { editSegmentText, reassignSegment } from '../../transcript/edits'
import type { TimedWord, TranscriptSegment } from '../../transcript/transcript'
import type { Library } from '../library'
import { MAX_NOTE_TEXT_CHARS } from './model'
import type { NotesService } from './service'
import type { EditBy } from './transcript-edits'
import type { SegmentAudio } from './segment-audio'


export type SegmentTiming = 'aligned' | 'proportional'
/** A word a person wrote: confidence 1. */
type ConfirmedWord = TimedWord & { confidence: number }

export interface EditedSegment {
  id: number
  start: number
  end: number
  text: string
  timing: SegmentTiming
  /** why the words are timed in proportion (no recording, no engine, audio that does not fit) */
  timingNote?: string
  words: ConfirmedWord[]
}

export type SegmentTextService = ReturnType<typeof createSegmentTextService>

export function createSegmentTextService(deps: {
  notes: Pick<NotesService, 'readableTranscript' | 'transcriptOf' | 'editTranscript'>
  segmentAudio: (noteId: string, start: number, end: number) => Promise<SegmentAudio>
  aligner: () => ThreadedAligner
}) {
  const noSegment = (id: string, index: number, count: number) =>
    new ApiError('not_found', `Note ${id} has no segment ${index}; it has ${count} (GET /v1/notes/${id}/transcript?format=verbose_json numbers them from 0).`)

  async function timed(noteId: string, seg: TranscriptSegment, text: string): Promise<{ words: ConfirmedWord[]; timing: SegmentTiming; timingNote?: string }> {
    let audio: SegmentAudio
    try {
      audio = await deps.segmentAudio(noteId, seg.start, seg.end)
    } catch (err) {
      audio = { missing: `the recording could not be decoded (${(err as Error).message})` }
    }
    let a: Alignment | null = null
    if ('samples' in audio) {
      try {
        a = await deps.aligner().align(audio.samples, text, { offset: seg.start })
      } catch (err) {
        audio = { missing: `the aligner failed (${(err as Error).message})` }
      }
    }
    const confirmed = (words: { word: string; start: number; end: number }[]) => words.map(w => ({ word: w.word, start: w.start, end: w.end, confidence: 1 }))
    if (a && a.aligned !== 'proportional') return { words: confirmed(a.words), timing: 'aligned' }
    const why = a ? (a.reason ?? 'no engine aligned the words') : (audio as { missing: string }).missing
    return { words: confirmed(proportionalWords(text, seg.start, seg.end)), timing: 'proportional', timingNote: why }
  }

  return {
    /**
     * Segment `index` of a readable note says `text` (and, with `speaker`, is said by that speaker),
     * its words timed again; the summary marked stale. One transaction; nothing is written on error.
     */
    async edit(lib: Library, id: string, who: EditBy, index: number, text: string, speaker?: string): Promise<EditedSegment & { version: number }> {
      if (text.includes('\0')) throw new ApiError('invalid_request', 'The text contains a NUL character (U+0000); remove it and send the text again.', { details: [{ field: 'text', issue: 'contains U+0000' }] })
      if (text.trim() === '') throw new ApiError('invalid_request', 'The text has no words; send the segment\'s words (to remove a segment, send what was said instead).', { details: [{ field: 'text', issue: 'empty' }] })
      const before = await deps.notes.transcriptOf(await deps.notes.readableTranscript(lib, id))
      const seg = before.segments?.[index]
      if (!seg) throw noSegment(id, index, before.segments?.length ?? 0)
      const t = await timed(id, seg, text)
      let edited: EditedSegment | null = null
      const saved = await deps.notes.editTranscript(lib, id, who, tr => {
        const now = tr.segments?.[index]
        if (!now) throw noSegment(id, index, tr.segments?.length ?? 0)
        if (now.start !== seg.start || now.end !== seg.end) throw new ApiError('conflict', `Segment ${index} of note ${id} changed while its words were being aligned; send the edit again.`)
        if (speaker !== undefined && !tr.speakers.some(s => s.label === speaker)) {
          throw new ApiError('invalid_request', `Note ${id} has no speaker ${speaker}; give one of ${tr.speakers.map(s => s.label).join(', ') || '(none: the note was not diarized)'}.`, { details: [{ field: 'speaker', issue: 'not a speaker of the note' }] })
        }
        let next = editSegmentText(tr, index, text, t.words, t.timing)
        if (speaker !== undefined) next = reassignSegment(next, index, speaker)
        if (next.text.length > MAX_NOTE_TEXT_CHARS) {
          throw new ApiError('invalid_request', `With this text the note's transcript would hold ${next.text.length} characters, over the ${MAX_NOTE_TEXT_CHARS} a note may hold; send a shorter text.`, { details: [{ field: 'text', issue: 'note over its limit' }] })
        }
        edited = { id: index, start: now.start, end: now.end, text, ...t }
        return { transcript: next, fields: { summary_stale: 1 } }
      })
      return { ...edited!, version: saved.version }
    },
  }
}
