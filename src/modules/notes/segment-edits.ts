/**
 * A transcript's segments rearranged (issue 31): one split at a word, two neighbours merged, a range of
 * words given to another speaker. No word is said differently, so nothing is aligned again: the new
 * segments are timed at their words' boundaries (the engine's or the aligner's word times; in
 * proportion to the letters for a segment without them, and it says so). Each is one edit through
 * NotesService.editTranscript (revision, audit record, If-Match, the `note.updated` event) and answers
 * the note's whole transcript as `verbose_json` (the indices after a split or merge all move).
 */
import { ApiError } from '../../http/errors'
import { mergeSegments, reassignWords, segmentWords, splitSegment } from '../../transcript/edits'
import type { TranscriptSegment } from '../../transcript/transcript'
import type { Library } from '../library'
import type { TranscriptVerbose } from './model'
import type { NoteRow } from './repo'
import type { NotesService } from './service'
import type { NoteTranscript, NoteTranscriptSpeaker } from './stored-transcript'
import type { EditBy, TranscriptChange } from './transcript-edits'
import { exportTranscript } from './transcript-export'

export type SegmentEditsService = ReturnType<typeof createSegmentEditsService>

/** A speaker label a person may give words to that the note does not have yet: a capital letter, then up to 7 capitals or digits ("C", "D2"). */
const NEW_LABEL = /^[A-Z][A-Z0-9]{0,7}$/

const VERBOSE = 'GET /v1/notes/{id}/transcript?format=verbose_json'

export function noSegment(id: string, index: number, count: number): ApiError {
  return new ApiError('not_found', `Note ${id} has no segment ${index}; it has ${count} (${VERBOSE.replace('{id}', id)} numbers them from 0).`)
}

/** A new unnamed speaker of a note (no voice print: the diarization engine never heard them apart). */
const blankSpeaker = (label: string): NoteTranscriptSpeaker => ({ label, name: null, engine: null, embedding: null, profileId: null })

/** The segments of a note's transcript: 409 when it has no times (a note created from text). */
function timedSegments(id: string, t: NoteTranscript): readonly TranscriptSegment[] {
  if (t.segments) return t.segments
  throw new ApiError('conflict', `Note ${id} has no timed segments (it was created from text, or transcribed before times were kept), so its segments cannot be split, merged or reassigned. Correct its words with find and replace (POST /v1/notes/${id}/replacements).`)
}

function requireSegment(id: string, t: NoteTranscript, index: number): TranscriptSegment {
  const segments = timedSegments(id, t)
  const seg = segments[index]
  if (!seg) throw noSegment(id, index, segments.length)
  return seg
}

/** 404 unless segment `index` has a word `word` (0-based), naming the words it has. */
function requireWord(id: string, index: number, words: number, word: number, field: string): void {
  if (word >= words) {
    throw new ApiError('not_found', `Segment ${index} of note ${id} has no word ${word}: it has ${words} word${words === 1 ? '' : 's'}, numbered 0 to ${words - 1} (its text split at spaces). Send a ${field} from that range.`, { details: [{ field, issue: `no word ${word}` }] })
  }
}

/** 400 unless `label` is a speaker of the note or a new label a person may add (the note must have been diarized). */
function checkSpeaker(id: string, t: NoteTranscript, label: string): void {
  if (t.speakers.some(s => s.label === label)) return
  if (!t.speakers.length) {
    throw new ApiError('invalid_request', `Note ${id} was not diarized, so it has no speakers to give words to. Upload the recording again with diarization on (NOTESVC_DIARIZATION) to tell its speakers apart.`, { details: [{ field: 'speaker', issue: 'the note has no speakers' }] })
  }
  if (!NEW_LABEL.test(label)) {
    throw new ApiError('invalid_request', `Note ${id} has no speaker ${label}. Give one of ${t.speakers.map(s => s.label).join(', ')}, or a new speaker's label: a capital letter then up to 7 capitals or digits (such as ${nextLabel(t)}), and name them with PATCH /v1/notes/${id}/speakers/{label}.`, { details: [{ field: 'speaker', issue: 'not a speaker of the note, nor a label a new one may have' }] })
  }
}

/** The first single-letter label the note does not use, for the error's example. */
function nextLabel(t: NoteTranscript): string {
  const used = new Set(t.speakers.map(s => s.label))
  return [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'].find(l => !used.has(l)) ?? 'AA'
}

export function createSegmentEditsService(deps: { notes: Pick<NotesService, 'editTranscript'> }) {
  /** One edit of the segments, answered with the whole transcript as verbose_json and its version. */
  async function edit(lib: Library, id: string, who: EditBy, change: TranscriptChange, apply: (t: NoteTranscript) => { transcript: NoteTranscript; segments: number[]; stale: boolean }): Promise<{ transcript: TranscriptVerbose; version: number }> {
    let note: NoteRow | undefined
    const saved = await deps.notes.editTranscript(lib, id, who, (t, row) => {
      note = row
      const { transcript, segments, stale } = apply(t)
      return { transcript, change, segments, ...(stale ? { fields: { summary_stale: 1 } } : {}) }
    })
    const body = exportTranscript({ noteId: id, title: note!.title, type: note!.type, language: note!.language, transcript: saved }, 'verbose_json').body
    return { transcript: body as TranscriptVerbose, version: saved.version }
  }

  return {
    /** Segment `index` split into two, the second starting at its word `word` (1 ≤ word < its words). */
    split: (lib: Library, id: string, who: EditBy, index: number, word: number) => edit(lib, id, who, 'split', t => {
      const n = segmentWords(requireSegment(id, t, index)).tokens.length
      requireWord(id, index, n, word, 'word')
      if (word === 0) {
        throw new ApiError('invalid_request', n === 1
          ? `Segment ${index} of note ${id} has one word, so it cannot be split.`
          : `A split at word 0 would leave the first segment empty: send a word from 1 to ${n - 1} (the second segment starts at that word).`, { details: [{ field: 'word', issue: 'must be from 1' }] })
      }
      return { transcript: splitSegment(t, index, word), segments: [index, index + 1], stale: false }
    }),

    /** Segments `index` and `index + 1` as one, said by the first's speaker or by `speaker`. */
    merge: (lib: Library, id: string, who: EditBy, index: number, speaker?: string) => edit(lib, id, who, 'merge', t => {
      const a = requireSegment(id, t, index)
      const b = t.segments![index + 1]
      if (!b) throw new ApiError('not_found', `Note ${id} has no segment ${index + 1} to merge segment ${index} with: segment ${index} is its last. Merge a segment with the one after it (send the index of the first of the two).`)
      if (speaker !== undefined) checkSpeaker(id, t, speaker)
      const who = speaker ?? a.speaker
      return { transcript: mergeSegments(t, index, speaker, blankSpeaker), segments: [index], stale: a.speaker !== who || b.speaker !== who }
    }),

    /** Words `from` to `to` (inclusive) of segment `index` said by `speaker`: the segment split into up to three. */
    reassign: (lib: Library, id: string, who: EditBy, index: number, from: number, to: number, speaker: string) => edit(lib, id, who, 'reassign', t => {
      const seg = requireSegment(id, t, index)
      const n = segmentWords(seg).tokens.length
      requireWord(id, index, n, from, 'fromWord')
      requireWord(id, index, n, to, 'toWord')
      if (to < from) throw new ApiError('invalid_request', `toWord (${to}) is before fromWord (${from}); send the range's first word as fromWord and its last as toWord (both included).`, { details: [{ field: 'toWord', issue: 'before fromWord' }] })
      checkSpeaker(id, t, speaker)
      if (seg.speaker === speaker) throw new ApiError('invalid_request', `Words ${from} to ${to} of segment ${index} are already said by speaker ${speaker}; nothing to change. Send another speaker.`, { details: [{ field: 'speaker', issue: 'already the segment\'s speaker' }] })
      const { transcript, segments } = reassignWords(t, index, from, to, speaker, blankSpeaker)
      return { transcript, segments, stale: true }
    }),
  }
}
