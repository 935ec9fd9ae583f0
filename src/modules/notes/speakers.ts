/**
 * The speakers of a note (the label each transcript segment carries, the name given) and the voices a
 * library remembers. A name is given once and shows everywhere the note is read: the transcript
 * formats and subtitles map labels to names when they are written, search by speaker reads
 * note_speakers, and the summary (made with "Speaker A" for an unnamed speaker) has the old name
 * replaced by the new one where it stands as a whole word: attendees, action items' owners, the text.
 */
import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import { ApiError, notFound } from '../../http/errors'
import type { IdGenerator } from '../../ids'
import { mergeSpeaker, nameSpeaker, reassignSegment } from '../../transcript/edits'
import { displayName, speakingTime, type TranscriptSegment } from '../../transcript/transcript'
import type { Library } from '../library'
import type { ListSpeakerProfilesQuery, NoteSpeaker, SpeakerProfile, SpeakerProfileList, UpdateNoteSpeakerRequest } from './model'
import type { NoteFields, NoteRow, NotesRepo } from './repo'
import type { SpeakerProfileRow, SpeakersRepo } from './speakers-repo'
import { storedTranscript, type NoteTranscript, type NoteTranscriptSpeaker, type SpeakerSuggestion } from './stored-transcript'
import type { EditBy, TranscriptEdits } from './transcript-edits'

/** `from` replaced by `to` wherever it stands as a whole word, in a text or any string inside a JSON value. */
function renamed<T>(value: T, from: string, to: string): T {
  if (from === to) return value
  const re = new RegExp(`(?<![\\p{L}\\p{N}])${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'gu')
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(re, to)
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(value) as T
}

/** The indices of the segments speaker `label` says: those a rename or merge of the speaker shows differently. */
function segmentsOf(t: NoteTranscript, label: string): number[] {
  return (t.segments ?? []).flatMap((s, i) => (s.speaker === label ? [i] : []))
}

export type SpeakersService = ReturnType<typeof createSpeakersService>

/** A speaker of a note as the API shows it, with how much they say in `segments`. */
function speakerView(speaker: NoteTranscriptSpeaker, segments: readonly TranscriptSegment[] | null): NoteSpeaker {
  return { id: speaker.label, name: speaker.name, displayName: displayName(speaker.label, speaker.name), ...speakingTime(segments, speaker.label), profileId: speaker.profileId, suggestion: speaker.suggestion ?? null }
}

/** A transcript's speakers as the API lists them: in order of first speech (label "A" before "B", "Z" before "AA"), as NotesRepo.speakersOf reads them. */
export const speakerViews = (t: NoteTranscript): NoteSpeaker[] =>
  [...t.speakers].sort((a, b) => a.label.length - b.label.length || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)).map(s => speakerView(s, t.segments))

/** How many voices one account may remember, live and sandbox together (NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT). */
const DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT = 500

const toProfile = (p: SpeakerProfileRow): SpeakerProfile => ({ id: p.id, name: p.name, engine: p.engine, createdAt: p.created_at, updatedAt: p.updated_at })

/** What a rename past the limit says: the name was given, the voice not remembered, and what to do. */
function notRemembered(had: number): string {
  return `Named, but the voice is not remembered: this account already remembers ${had} voices, the most it may on this server (live and sandbox together). Forget voices it no longer needs (GET /v1/speakers, then DELETE /v1/speakers/{id}), then name the speaker again to remember it; the server's operator can raise the limit (NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT).`
}

function requireSpeaker(note: NoteRow, t: NoteTranscript, label: string): NoteTranscriptSpeaker {
  const speaker = t.speakers.find(s => s.label === label)
  if (!speaker) throw new ApiError('not_found', `Note ${note.id} has no speaker ${label}; GET /v1/notes/${note.id}/speakers lists them.`)
  return speaker
}

/** The note's title, summary and structured content with the name shown `from` renamed `to`, as fields to write with the transcript. */
function renamedSummary(note: NoteRow, from: string, to: string): NoteFields {
  const structured = note.structured_content === null ? null : renamed(JSON.parse(note.structured_content) as unknown, from, to)
  return {
    title: renamed(note.title, from, to),
    summary: renamed(note.summary, from, to),
    structured_content: structured === null ? null : JSON.stringify(structured),
  }
}

export function createSpeakersService(deps: {
  repo: SpeakersRepo
  notes: NotesRepo
  store: Pick<Store, 'transaction'>
  clock: Clock
  ids: IdGenerator
  /** the note when its transcript can be read (409 while processing) */
  readable: (lib: Library, id: string) => Promise<NoteRow>
  /** the one edit path of a transcript (NotesService: revision, version, audit record) */
  editTranscript: TranscriptEdits['editTranscript']
  /** voices one account may remember (default DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT) */
  maxProfilesPerAccount?: number
}) {
  const { repo, notes, clock, ids } = deps
  const maxProfiles = deps.maxProfilesPerAccount ?? DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT

  const view = speakerView

  const { editTranscript } = deps

  /**
   * Speaker `speaker` named `name` (null: unnamed) in `t`, with `suggestion` left (null: answered): with a
   * voice print and unless `remember` is false, the voice stored under the name (past the account's
   * limit the name is still given, what the person asked for, and the answer says it was not
   * remembered). The next transcript, the summary's names changed with it, and the answer.
   */
  async function named(lib: Library, note: NoteRow, t: NoteTranscript, speaker: NoteTranscriptSpeaker, name: string | null, remember: boolean | undefined, suggestion: SpeakerSuggestion | null) {
    let profileId = name === null ? null : speaker.profileId
    let notice: string | undefined
    if (name !== null && remember !== false && speaker.embedding && speaker.engine) {
      const saved = await repo.saveProfileUnder(lib, { id: ids.next('spk'), name, engine: speaker.engine, embedding: speaker.embedding, at: clock.now().toISOString() }, maxProfiles)
      profileId = saved.saved ? saved.id : null
      if (!saved.saved) notice = notRemembered(saved.had)
    } else if (remember === false) profileId = null
    const answer: NoteSpeaker = { ...view({ ...speaker, name, profileId, suggestion }, t.segments), ...(notice ? { notice } : {}) }
    return {
      transcript: nameSpeaker(t, speaker.label, name, { profileId, suggestion }),
      fields: renamedSummary(note, displayName(speaker.label, speaker.name), displayName(speaker.label, name)),
      change: 'speaker' as const,
      segments: segmentsOf(t, speaker.label),
      answer,
    }
  }

  return {
    /** The speakers of a readable note (409 while processing), in order of first speech. */
    list: async (lib: Library, id: string): Promise<NoteSpeaker[]> => {
      const note = await deps.readable(lib, id)
      const t = storedTranscript(note, await notes.speakersOf(note.id))
      return t.speakers.map(s => view(s, t.segments))
    },

    /** The voices a library remembers of one diarization engine, with their prints: a new recording's speakers are compared with them. */
    rememberedVoices: async (accountId: string, isSandbox: boolean, engine: string): Promise<{ id: string; name: string; embedding: number[] }[]> =>
      (await repo.profilesFor(accountId, isSandbox, engine)).map(p => ({ id: p.id, name: p.name, embedding: JSON.parse(p.embedding) as number[] })),

    async update(lib: Library, id: string, label: string, body: UpdateNoteSpeakerRequest, who: EditBy): Promise<NoteSpeaker> {
      let answer: NoteSpeaker | undefined
      await editTranscript(lib, id, who, async (t, note) => {
        const speaker = requireSpeaker(note, t, label)
        if (body.mergeInto !== undefined) {
          if (body.name !== undefined) throw new ApiError('invalid_request', 'Send either name or mergeInto, not both: merge first, then name the speaker that remains.', { details: [{ field: 'mergeInto', issue: 'sent with name' }] })
          if (body.mergeInto === label) throw new ApiError('invalid_request', `${displayName(label, null)} cannot be merged into itself; name another speaker of the note.`, { details: [{ field: 'mergeInto', issue: 'the same speaker' }] })
          const into = requireSpeaker(note, t, body.mergeInto)
          const merged = mergeSpeaker(t, label, into.label)
          answer = view(into, merged.segments)
          return { transcript: merged, fields: renamedSummary(note, displayName(label, speaker.name), displayName(into.label, into.name)), change: 'speaker', segments: segmentsOf(t, label) }
        }
        const name = body.name === undefined ? speaker.name : body.name === null ? null : body.name.trim()
        if (name === '') throw new ApiError('invalid_request', 'name is blank; send a name, or null to unname the speaker.', { details: [{ field: 'name', issue: 'blank' }] })
        // a name given answers the suggestion; only `remember` sent leaves it
        const next = await named(lib, note, t, speaker, name, body.remember, body.name === undefined ? speaker.suggestion ?? null : null)
        answer = next.answer
        return next
      })
      return answer!
    },

    /**
     * A person's answer to the voice suggested for a speaker: accepted, the suggested name is given as
     * a rename that remembers the voice gives it (the voice's print becomes this speaker's, a
     * confirmation); dismissed, the suggestion is cleared and not offered again for this note. Either
     * is an edit of the transcript (revision, audit record, If-Match); 404 when there is none.
     */
    async answerSuggestion(lib: Library, id: string, label: string, accept: boolean, who: EditBy): Promise<NoteSpeaker & { version: number }> {
      let answer: NoteSpeaker | undefined
      const saved = await editTranscript(lib, id, who, async (t, note) => {
        const speaker = requireSpeaker(note, t, label)
        const offered = speaker.suggestion
        if (!offered) throw new ApiError('not_found', `Speaker ${label} of note ${id} has no voice suggested (none was recognised, or it was confirmed or dismissed already); name them with PATCH /v1/notes/${id}/speakers/${label} instead.`)
        if (!accept) {
          answer = view({ ...speaker, suggestion: null }, t.segments)
          return { transcript: nameSpeaker(t, label, speaker.name, { suggestion: null }), change: 'speaker', segments: segmentsOf(t, label) }
        }
        const next = await named(lib, note, t, speaker, offered.name, true, null)
        answer = next.answer
        return next
      })
      return { ...answer!, version: saved.version }
    },

    async reassign(lib: Library, id: string, index: number, label: string, who: EditBy): Promise<NoteSpeaker[]> {
      const next = await editTranscript(lib, id, who, t => {
        const segments = t.segments ?? []
        if (!segments[index]) throw new ApiError('not_found', `Note ${id} has no segment ${index}; it has ${segments.length} (GET /v1/notes/${id}/transcript?format=verbose_json numbers them from 0).`)
        if (!t.speakers.some(s => s.label === label)) throw new ApiError('invalid_request', `Note ${id} has no speaker ${label}; give one of ${t.speakers.map(s => s.label).join(', ') || '(none: the note was not diarized)'}.`, { details: [{ field: 'speaker', issue: 'not a speaker of the note' }] })
        // who said it changed, so the summary's owners and attendees may be wrong: stale until made again
        const moved = segments[index].speaker !== label
        return { transcript: reassignSegment(t, index, label), ...(moved ? { fields: { summary_stale: 1 } } : {}), change: 'reassign', segments: [index] }
      })
      return next.speakers.map(s => view(s, next.segments))
    },

    /** A page of the library's remembered voices by name: `limit` (default 50) from `offset`. */
    async profiles(lib: Library, q: ListSpeakerProfilesQuery = {}): Promise<SpeakerProfileList> {
      const limit = q.limit ?? 50
      const offset = q.offset ?? 0
      const rows = await repo.profiles(lib, limit + 1, offset)
      return {
        data: rows.slice(0, limit).map(toProfile),
        pagination: { limit, offset, hasMore: rows.length > limit },
      }
    },

    /** One remembered voice of the library; 404 for another library's (another account's, or the sandbox's). */
    async profile(lib: Library, id: string): Promise<SpeakerProfile> {
      const row = await repo.profile(lib, id)
      if (!row) throw notFound('speaker profile', id)
      return toProfile(row)
    },

    async deleteProfile(lib: Library, id: string): Promise<void> {
      if (!(await repo.deleteProfile(lib, id))) throw notFound('speaker profile', id)
    },

  }
}
