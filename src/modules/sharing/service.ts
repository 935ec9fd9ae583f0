import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { ApiError, notFound } from '../../http/errors'
import { sha256 } from '../../crypto/digest'
import type { Library } from '../library'
import { madeBy, type Principal } from '../../http/principal'
import type { AuditBy, AuditOrigin } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { NotesService } from '../notes/service'
import type { NoteTranscript } from '../notes/stored-transcript'
import type { CreatedNoteShare, CreateNoteShareRequest, NoteShare, ShareFormat } from './model'
import type { NoteShareRow, SharesRepo } from './repo'
import { PassphraseAttempts } from './passphrase-attempts'
import { passphraseProof, proofHolds, PROOF_SECONDS } from './passphrase-proof'
import { createOpeningsLog } from './openings'
import { toNote } from '../notes/note-row'

export type SharingService = ReturnType<typeof createSharingService>

/** A share link's token: 32 random bytes (256 bits) as base64url, 43 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/
const newToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')

/** Where the page of a share link is served (modules/sharing/routes.ts). */
export const SHARE_PATH = '/s'

function toShare(r: NoteShareRow): NoteShare {
  return {
    id: r.id, noteId: r.note_id,
    showSummary: r.show_summary === 1, showSpeakers: r.show_speakers === 1, showRecording: r.show_recording === 1,
    formats: (r.formats ? r.formats.split(',') : []) as ShareFormat[],
    expiresAt: r.expires_at, hasPassphrase: r.passphrase_hash !== null, createdAt: r.created_at, revokedAt: r.revoked_at,
    openCount: Number(r.open_count), lastOpenedAt: r.last_opened_at,
  }
}

/** What a share link shows: the note as the page renders it, cut to what the owner chose. */
export interface SharedNote {
  share: NoteShare
  title: string
  summary: string | null
  transcript: NoteTranscript
  /** when the retention policy removed the recording, if it did */
  mediaRemovedAt: string | null
  /** the recording's content type when the link shows it and there is one to play */
  recording: string | null
  /** the account and library of the note (for its media) */
  library: Library
}

/** Without the speakers' names: each shown by its label ("Speaker A"), in the page and in the downloads. */
const unnamed = (t: NoteTranscript): NoteTranscript => ({ ...t, speakers: t.speakers.map(s => ({ ...s, name: null })) })

export function createSharingService(deps: {
  repo: SharesRepo
  notes: Pick<NotesService, 'get' | 'readableTranscript' | 'transcriptOf'>
  /** the content type of a note's received recording, or null when it has none (the uploads' row) */
  recordingType: (noteId: string) => Promise<string | null>
  /** how long openings wait to be written together (openings.ts); 0: each at once */
  openingsFlushMs?: number
  audit: Pick<AuditService, 'recordBy' | 'record'>
  clock: Clock
  ids: IdGenerator
  store: Pick<Store, 'transaction'>
  /** NOTESVC_SHARING */
  enabled: boolean
  publicUrl: string
  /** the key that signs a passphrase's proof (an instance secret, db/settings.ts lazySecret) */
  signingKey: () => Promise<string>
  /** wrong passphrases allowed per link and per address in each window before 429 */
  passphraseLimits?: { perLink: number; perAddress: number; windowMs: number }
  /** argon2id's cost for passphrases (tests lower it) */
  passphraseHashCost?: { memoryCost?: number; timeCost?: number }
}) {
  const { repo, clock, ids } = deps
  const attempts = new PassphraseAttempts(deps.passphraseLimits ?? { perLink: 5, perAddress: 20, windowMs: 15 * 60_000 })
  // OWASP's argon2id minimum (19 MiB, two passes) rather than Bun's default 64 MiB: the passphrase
  // stands behind a 256-bit token and its tries are limited, and a link made or tried must not hold
  // the server's cores for long (the standing fuzz timed another account's health meanwhile)
  const hashOptions = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2, ...deps.passphraseHashCost } as const
  const base = deps.publicUrl.replace(/\/+$/, '')
  const openings = createOpeningsLog({ repo, audit: deps.audit, store: deps.store, flushMs: deps.openingsFlushMs ?? 1000 })

  function checkEnabled(): void {
    if (!deps.enabled) {
      throw new ApiError('sharing_disabled', 'Share links are turned off on this instance (NOTESVC_SHARING=off). Ask its operator to turn them on, or send the transcript another way (GET /v1/notes/{id}/transcript).')
    }
  }

  /** The link of a token, if it opens now: not revoked, not expired, sharing on; null for every other case alike. */
  async function live(token: string): Promise<NoteShareRow | null> {
    if (!deps.enabled || !TOKEN_SHAPE.test(token)) return null
    const row = await repo.byTokenHash(sha256(token))
    if (!row || row.revoked_at !== null) return null
    if (row.expires_at !== null && Date.parse(row.expires_at) <= clock.now().getTime()) return null
    return row
  }

  return {
    /** A link to a note of the library; in a team, it names the member who made it (revoked with their membership). */
    async create(lib: Library & Partial<Pick<Principal, 'actorId'>>, noteId: string, body: CreateNoteShareRequest, by: AuditBy): Promise<CreatedNoteShare> {
      checkEnabled()
      await deps.notes.get(lib, noteId)
      const now = clock.now()
      if (body.expiresAt !== undefined && Date.parse(body.expiresAt) <= now.getTime()) {
        throw new ApiError('invalid_request', `expiresAt ${body.expiresAt} is not in the future; send a later time, or leave it out for a link that does not expire.`, { details: [{ field: 'expiresAt', issue: 'must be in the future' }] })
      }
      const token = newToken()
      const row: NoteShareRow = {
        id: ids.next('shr'), note_id: noteId, account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, token_hash: sha256(token),
        show_summary: body.showSummary ? 1 : 0, show_speakers: body.showSpeakers ? 1 : 0, show_recording: body.showRecording ? 1 : 0,
        formats: (body.formats ?? []).join(','), expires_at: body.expiresAt ? new Date(body.expiresAt).toISOString() : null,
        passphrase_hash: body.passphrase ? await Bun.password.hash(body.passphrase, hashOptions) : null,
        created_at: now.toISOString(), revoked_at: null, open_count: 0, last_opened_at: null, made_by: madeBy(lib),
      }
      await deps.store.transaction(async () => {
        await repo.insert(row)
        await deps.audit.recordBy(by, { accountId: lib.accountId, action: 'share.created', target: { type: 'note', id: noteId }, details: { shareId: row.id, sandbox: lib.sandbox } })
      })
      return { ...toShare(row), url: `${base}${SHARE_PATH}/${token}` }
    },

    async list(lib: Library, noteId: string): Promise<{ data: NoteShare[] }> {
      await deps.notes.get(lib, noteId)
      await openings.flush()
      return { data: (await repo.listOfNote(lib, noteId)).map(toShare) }
    },

    async revoke(lib: Library, noteId: string, shareId: string, by: AuditBy): Promise<void> {
      await deps.store.transaction(async () => {
        if (!(await repo.revoke(lib, noteId, shareId, clock.now().toISOString()))) throw notFound('share link', shareId)
        await deps.audit.recordBy(by, { accountId: lib.accountId, action: 'share.revoked', target: { type: 'note', id: noteId }, details: { shareId, sandbox: lib.sandbox } })
      })
    },

    /** The link of a token when it opens now, else null (unknown, revoked, expired, sharing off: one answer). */
    live,

    /** The revision of the link's note now (null: gone), which names what its page shows (routes.ts keeps pages by it). */
    noteRevision: (row: NoteShareRow) => repo.noteRevision({ accountId: row.account_id, sandbox: row.sandbox === 1 }, row.note_id),

    /**
     * What the link shows, or null when its note cannot be shown (deleted, still processing, failed):
     * the page then answers the same 404 as for an unknown link.
     */
    async sharedNote(row: NoteShareRow): Promise<SharedNote | null> {
      const library: Library = { accountId: row.account_id, sandbox: row.sandbox === 1 }
      try {
        const noteRow = await deps.notes.readableTranscript(library, row.note_id)
        const note = toNote(noteRow)
        const transcript = await deps.notes.transcriptOf(noteRow)
        const share = toShare(row)
        const mediaRemovedAt = note.mediaRemovedAt ?? null
        return {
          share, library, title: note.title, summary: share.showSummary ? note.summary : null,
          transcript: share.showSpeakers ? transcript : unnamed(transcript), mediaRemovedAt,
          recording: share.showRecording && !mediaRemovedAt ? await deps.recordingType(row.note_id) : null,
        }
      } catch (err) {
        if (err instanceof ApiError && (err.code === 'not_found' || err.code === 'conflict')) return null
        throw err
      }
    },

    /** Counts an opening of the page and writes `share.opened` to the owner's audit log (in batches: openings.ts). */
    opened: (row: NoteShareRow, origin: AuditOrigin): Promise<void> =>
      openings.record({ shareId: row.id, noteId: row.note_id, accountId: row.account_id, sandbox: row.sandbox === 1, at: clock.now().toISOString(), origin }),

    /** Writes the openings waiting (on the way out, and for tests). */
    flushOpenings: () => openings.flush(),

    /**
     * Checks a passphrase sent to the link's form: a proof to put in the page's URL when right, the
     * seconds to wait when the link or the address tried too many wrong ones, else 'wrong'.
     */
    async tryPassphrase(row: NoteShareRow, passphrase: string, address: string): Promise<{ proof: string } | { retryAfterSeconds: number } | 'wrong'> {
      const now = clock.now().getTime()
      const wait = attempts.waitSeconds(row.id, address, now)
      if (wait > 0) return { retryAfterSeconds: wait }
      attempts.tried(row.id, address, now)
      if (row.passphrase_hash && passphrase.length <= 200 && (await Bun.password.verify(passphrase, row.passphrase_hash))) {
        attempts.succeeded(row.id, address, now)
        return { proof: passphraseProof(await deps.signingKey(), row.id, Math.floor(now / 1000) + PROOF_SECONDS) }
      }
      return 'wrong'
    },

    /** Whether a request may see the link's page: no passphrase, or a proof of it that has not run out. */
    async admitted(row: NoteShareRow, proof: string | null): Promise<boolean> {
      if (row.passphrase_hash === null) return true
      return proof !== null && proofHolds(await deps.signingKey(), row.id, proof, Math.floor(clock.now().getTime() / 1000))
    },
  }
}
