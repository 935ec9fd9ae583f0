/**
 * A segment's words corrected (PATCH /v1/notes/{id}/segments/{index} with `text`): the segment read
 * alone and its new words timed by segment-timing.ts (aligned to the segment's audio, or in
 * proportion, and the segment says which) before the write's transaction; the write then reads the
 * transcript once and checks the segment is still the one aligned.
 */
import { ApiError } from '../../http/errors'
import { editSegmentText, reassignSegment } from '../../transcript/edits'
import type { Library } from '../library'
import { MAX_NOTE_TEXT_CHARS } from './model'
import type { NotesService } from './service'
import type { EditBy } from './transcript-edits'
import type { TimedText, TimeWords } from './segment-timing'
import { noSegment } from './segment-edits'
import { speakerViews } from './speakers'
import type { NoteSpeaker } from './model'

export interface EditedSegment extends TimedText {
  id: number
  start: number
  end: number
  text: string
}

export type SegmentTextService = ReturnType<typeof createSegmentTextService>

export function createSegmentTextService(deps: {
  notes: Pick<NotesService, 'segmentToEdit' | 'editTranscript'>
  timeWords: TimeWords
}) {
  return {
    /**
     * Segment `index` of a readable note says `text` (and, with `speaker`, is said by that speaker),
     * its words timed again; the summary marked stale. One transaction; nothing is written on error.
     */
    async edit(lib: Library, id: string, who: EditBy, index: number, text: string, speaker?: string): Promise<EditedSegment & { version: number; speakers: NoteSpeaker[] }> {
      if (text.includes('\0')) throw new ApiError('invalid_request', 'The text contains a NUL character (U+0000); remove it and send the text again.', { details: [{ field: 'text', issue: 'contains U+0000' }] })
      if (text.trim() === '') throw new ApiError('invalid_request', 'The text has no words; send the segment\'s words (to remove a segment, send what was said instead).', { details: [{ field: 'text', issue: 'empty' }] })
      // the one segment read (the transaction reads the whole transcript, once)
      const { segment: seg, count } = await deps.notes.segmentToEdit(lib, id, index)
      if (!seg) throw noSegment(id, index, count)
      const [t] = await deps.timeWords(id, [{ seg, text }])
      let edited: EditedSegment | null = null
      const saved = await deps.notes.editTranscript(lib, id, who, tr => {
        const now = tr.segments?.[index]
        if (!now) throw noSegment(id, index, tr.segments?.length ?? 0)
        if (now.start !== seg.start || now.end !== seg.end) throw new ApiError('conflict', `Segment ${index} of note ${id} changed while its words were being aligned; send the edit again.`)
        if (speaker !== undefined && !tr.speakers.some(s => s.label === speaker)) {
          throw new ApiError('invalid_request', `Note ${id} has no speaker ${speaker}; give one of ${tr.speakers.map(s => s.label).join(', ') || '(none: the note was not diarized)'}.`, { details: [{ field: 'speaker', issue: 'not a speaker of the note' }] })
        }
        let next = editSegmentText(tr, index, text, t!.words, t!.timing)
        if (speaker !== undefined) next = reassignSegment(next, index, speaker)
        if (next.text.length > MAX_NOTE_TEXT_CHARS) {
          throw new ApiError('invalid_request', `With this text the note's transcript would hold ${next.text.length} characters, over the ${MAX_NOTE_TEXT_CHARS} a note may hold; send a shorter text.`, { details: [{ field: 'text', issue: 'note over its limit' }] })
        }
        edited = { id: index, start: now.start, end: now.end, text, ...t! }
        return { transcript: next, fields: { summary_stale: 1 }, change: 'text', segments: [index] }
      })
      // the speakers as saved, for the answer (GET …/speakers's list), without reading the note again
      return { ...edited!, version: saved.version, speakers: speakerViews(saved) }
    },
  }
}
