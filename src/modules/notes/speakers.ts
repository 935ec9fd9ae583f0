/**
 * The speakers of a note (the label each transcript segment carries, the name given) and the voices a
 * library remembers. A name is given once and shows everywhere the note is read: the transcript
 * formats and subtitles map labels to names when they are written, search by speaker reads
 * note_speakers, and the summary (made with "Speaker A" for an unnamed speaker) has the old name
 * replaced by the new one where it stands as a whole word: attendees, action items' owners, the text.
 */
import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { TranscriptSegment } from '../../engines/asr/engine'
import { ApiError, notFound } from '../../http/errors'
import type { IdGenerator } from '../../ids'
import type { Library } from '../library'
import type { ListSpeakerProfilesQuery, NoteSpeaker, SpeakerProfile, SpeakerProfileList, UpdateNoteSpeakerRequest } from './model'
import type { NoteRow, NotesRepo } from './repo'
import { saidText } from './search-query'
import type { NoteSpeakerRow, SpeakerProfileRow, SpeakersRepo } from './speakers-repo'
import { noteSegments } from './timing'

/** What a transcript shows for a speaker: the name given, else "Speaker A". */
export function displayName(label: string, name: string | null | undefined): string {
  return name ?? `Speaker ${label}`
}

/** A speaker as the pipeline stores it with the transcript. */
export interface NewNoteSpeaker {
  label: string
  name: string | null
  engine: string | null
  embedding: number[] | null
  profileId: string | null
}

/** The note_speakers rows of a transcript's speakers, with what each said (for search by speaker). */
export function speakerRows(segments: readonly TranscriptSegment[], speakers: readonly NewNoteSpeaker[]): Omit<NoteSpeakerRow, 'note_id'>[] {
  return speakers.map(s => ({
    label: s.label,
    name: s.name,
    said: saidText(segments.filter(g => g.speaker === s.label).map(g => g.text).join(' ')),
    engine: s.engine,
    embedding: s.embedding ? JSON.stringify(s.embedding.map(x => Math.round(x * 1e5) / 1e5)) : null,
    profile_id: s.profileId,
  }))
}

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

export type SpeakersService = ReturnType<typeof createSpeakersService>

/** How many voices one account may remember, live and sandbox together (NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT). */
export const DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT = 500

/** What a rename past the limit says: the name was given, the voice not remembered, and what to do. */
const toProfile = (p: SpeakerProfileRow): SpeakerProfile => ({ id: p.id, name: p.name, engine: p.engine, createdAt: p.created_at, updatedAt: p.updated_at })

function notRemembered(had: number): string {
  return `Named, but the voice is not remembered: this account already remembers ${had} voices, the most it may on this server (live and sandbox together). Forget voices it no longer needs (GET /v1/speakers, then DELETE /v1/speakers/{id}), then name the speaker again to remember it; the server's operator can raise the limit (NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT).`
}

export function createSpeakersService(deps: {
  repo: SpeakersRepo
  notes: NotesRepo
  store: Pick<Store, 'transaction'>
  clock: Clock
  ids: IdGenerator
  /** the note when its transcript can be read (409 while processing) */
  readable: (lib: Library, id: string) => Promise<NoteRow>
  /** voices one account may remember (default DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT) */
  maxProfilesPerAccount?: number
}) {
  const { repo, notes, store, clock, ids } = deps
  const maxProfiles = deps.maxProfilesPerAccount ?? DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT

  function view(row: NoteSpeakerRow, segments: readonly TranscriptSegment[]): NoteSpeaker {
    const mine = segments.filter(s => s.speaker === row.label)
    return {
      id: row.label,
      name: row.name,
      displayName: displayName(row.label, row.name),
      segments: mine.length,
      seconds: Math.round(mine.reduce((t, s) => t + Math.max(0, s.end - s.start), 0) * 1000) / 1000,
      profileId: row.profile_id,
    }
  }

  async function listOf(note: NoteRow): Promise<NoteSpeaker[]> {
    const segments = noteSegments(note) ?? []
    return (await repo.ofNote(note.id)).map(r => view(r, segments))
  }

  async function requireSpeaker(note: NoteRow, label: string): Promise<NoteSpeakerRow> {
    const row = (await repo.ofNote(note.id)).find(r => r.label === label)
    if (!row) throw new ApiError('not_found', `Note ${note.id} has no speaker ${label}; GET /v1/notes/${note.id}/speakers lists them.`)
    return row
  }

  /** The summary's text and structured content with `from` renamed `to`, and the segments given; one write. */
  async function rewrite(note: NoteRow, from: string, to: string, segments?: TranscriptSegment[]) {
    const structured = note.structured_content === null ? null : renamed(JSON.parse(note.structured_content) as unknown, from, to)
    await notes.write(note.id, {
      title: renamed(note.title, from, to),
      summary: renamed(note.summary, from, to),
      structured_content: structured === null ? null : JSON.stringify(structured),
      ...(segments ? { transcript_segments: JSON.stringify(segments) } : {}),
      updated_at: clock.now().toISOString(),
    })
  }

  return {
    /** The speakers of a readable note (409 while processing), in order of first speech. */
    list: async (lib: Library, id: string): Promise<NoteSpeaker[]> => listOf(await deps.readable(lib, id)),

    /** The voices a library remembers of one diarization engine, with their prints: a new recording's speakers are compared with them. */
    rememberedVoices: async (accountId: string, isSandbox: boolean, engine: string): Promise<{ id: string; name: string; embedding: number[] }[]> =>
      (await repo.profilesFor(accountId, isSandbox, engine)).map(p => ({ id: p.id, name: p.name, embedding: JSON.parse(p.embedding) as number[] })),

    update(lib: Library, id: string, label: string, body: UpdateNoteSpeakerRequest): Promise<NoteSpeaker> {
      return store.transaction(async () => {
        const note = await deps.readable(lib, id)
        const speaker = await requireSpeaker(note, label)
        if (body.mergeInto !== undefined) {
          if (body.name !== undefined) throw new ApiError('invalid_request', 'Send either name or mergeInto, not both: merge first, then name the speaker that remains.', { details: [{ field: 'mergeInto', issue: 'sent with name' }] })
          if (body.mergeInto === label) throw new ApiError('invalid_request', `Speaker ${label} cannot be merged into itself; name another speaker of the note.`, { details: [{ field: 'mergeInto', issue: 'the same speaker' }] })
          const into = await requireSpeaker(note, body.mergeInto)
          const segments = (noteSegments(note) ?? []).map(s => (s.speaker === label ? { ...s, speaker: into.label } : s))
          await repo.remove(note.id, label)
          await repo.setSaid(note.id, into.label, saidText(segments.filter(s => s.speaker === into.label).map(s => s.text).join(' ')))
          await rewrite(note, displayName(label, speaker.name), displayName(into.label, into.name), segments)
          return view({ ...into }, segments)
        }
        const name = body.name === undefined ? speaker.name : body.name === null ? null : body.name.trim()
        if (name === '') throw new ApiError('invalid_request', 'name is blank; send a name, or null to unname the speaker.', { details: [{ field: 'name', issue: 'blank' }] })
        let profileId = name === null ? null : speaker.profile_id
        let notice: string | undefined
        if (name !== null && body.remember !== false && speaker.embedding && speaker.engine) {
          // past the account's limit the name is still given (what the person asked for), not remembered
          const saved = await repo.saveProfileUnder(lib, { id: ids.next('spk'), name, engine: speaker.engine, embedding: speaker.embedding, at: clock.now().toISOString() }, maxProfiles)
          profileId = saved.saved ? saved.id : null
          if (!saved.saved) notice = notRemembered(saved.had)
        } else if (body.remember === false) profileId = null
        await repo.setName(note.id, label, name, profileId)
        await rewrite(note, displayName(label, speaker.name), displayName(label, name))
        return { ...view({ ...speaker, name, profile_id: profileId }, noteSegments(note) ?? []), ...(notice ? { notice } : {}) }
      })
    },

    reassign(lib: Library, id: string, index: number, label: string): Promise<NoteSpeaker[]> {
      return store.transaction(async () => {
        const note = await deps.readable(lib, id)
        const segments = noteSegments(note) ?? []
        const segment = segments[index]
        if (!segment) throw new ApiError('not_found', `Note ${id} has no segment ${index}; it has ${segments.length} (GET /v1/notes/${id}/transcript?format=verbose_json numbers them from 0).`)
        const rows = await repo.ofNote(note.id)
        if (!rows.some(r => r.label === label)) throw new ApiError('invalid_request', `Note ${id} has no speaker ${label}; give one of ${rows.map(r => r.label).join(', ') || '(none: the note was not diarized)'}.`, { details: [{ field: 'speaker', issue: 'not a speaker of the note' }] })
        const before = segment.speaker
        segments[index] = { ...segment, speaker: label }
        for (const l of new Set([before, label])) {
          if (l) await repo.setSaid(note.id, l, saidText(segments.filter(s => s.speaker === l).map(s => s.text).join(' ')))
        }
        // who said it changed, so the summary's owners and attendees may be wrong: stale until made again
        await notes.write(note.id, { transcript_segments: JSON.stringify(segments), ...(before !== label ? { summary_stale: 1 } : {}), updated_at: clock.now().toISOString() })
        return (await repo.ofNote(note.id)).map(r => view(r, segments))
      })
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
