import { speakersHintJson } from '../processing/model'
import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/admission'
import type { NotesService } from '../notes/service'
import type { CreditsService } from '../credits/service'
import type { MediaStorage } from '../../storage/storage'
import { TooLargeError } from '../../storage/storage'
import { checkUploadSignature } from '../../storage/signed-url'
import { measuredDuration } from '../../engines/media/decode'
import { MediaUnreadableError } from '../../engines/media/errors'
import type { AsrEngine } from '../../engines/asr/engine'
import { missingSpeechEngine } from '../../engines/asr'
import type { MediaTools } from '../../engines/media/ffmpeg'
import type { StyleId } from '../../engines/llm/engine'
import { SANDBOX_DURATION_SECONDS, SANDBOX_NOTICE, SANDBOX_SEGMENTS, SANDBOX_TRANSCRIPT, sandboxSummary } from '../processing/sandbox'
import type { Charged } from '../processing/service'
import { MAX_UPLOAD_BYTES, UPLOAD_TTL_MS, type CreateUploadRequest, type UploadAccepted } from './model'
import type { UploadRow, UploadsRepo } from './repo'
import type { Library } from '../library'

export type UploadsService = ReturnType<typeof createUploadsService>

/**
 * The upload lifecycle of SPEC.md: start (a note and a signed target), the file arriving (the disk
 * PUT target, or the client's PUT to S3), completion (charged once, processing queued: the processing
 * module's job, which refunds the charge if it fails for good).
 */
export function createUploadsService(deps: {
  repo: UploadsRepo
  notes: NotesService
  credits: CreditsService
  storage: MediaStorage
  tools: MediaTools
  /** the speech engine the job will use: completion is refused while none is installed */
  asr: () => AsrEngine
  clock: Clock
  ids: IdGenerator
  publicUrl: string
  /** the key upload URLs are signed with (kept in the database, read when first needed) */
  uploadSecret: () => Promise<string>
  /** runs `fn` in one database transaction, which the repositories it calls join */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
  /** adds the processing job (inside the caller's transaction; on PostgreSQL its NOTIFY goes out at commit) */
  queueJob: (noteId: string) => Promise<void>
  /** tells this process's idle workers a job is waiting (after the commit) */
  wakeWorkers: () => void
}) {
  const { repo, notes, credits, storage, clock } = deps

  async function requireUpload(p: Principal, id: string): Promise<UploadRow> {
    const row = await repo.get(p, id)
    if (!row) throw new ApiError('not_found', `No upload with id ${id} exists in this library; start one with POST /v1/uploads.`)
    return row
  }

  const limitOf = (row: UploadRow) => Math.min(row.declared_size ?? MAX_UPLOAD_BYTES, MAX_UPLOAD_BYTES)

  /**
   * The stored file's duration, measured from its audio (never its header's claim), before anything is
   * charged; a file whose header cannot be true, or that holds no audio, is refused here with nothing
   * charged and the upload left open for another PUT.
   */
  async function durationOf(row: UploadRow): Promise<number | null> {
    const copy = await storage.localCopy(row.storage_key)
    try {
      return await measuredDuration(copy.path, deps.tools)
    } catch (err) {
      if (!(err instanceof MediaUnreadableError)) throw err
      throw new ApiError('invalid_request', `The file uploaded for ${row.note_id} cannot be transcribed: ${err.message}. Nothing was charged; PUT a playable recording to the uploadUrl again and complete the upload, or start a new one with POST /v1/uploads.`, {
        details: [{ field: 'file', issue: err.message }],
      })
    } finally {
      await copy.release()
    }
  }

  return {
    async createUpload(p: Principal, body: CreateUploadRequest) {
      const type = body.contentType.toLowerCase().split(';')[0]!.trim()
      if (!/^(audio|video)\/[a-z0-9.+-]+$/.test(type)) {
        throw new ApiError('unsupported_media_type', `contentType ${body.contentType} is not supported; upload audio (audio/*) or video (video/*).`, {
          details: [{ field: 'contentType', issue: 'must be an audio/* or video/* MIME type' }],
        })
      }
      if (body.fileSize !== undefined && body.fileSize > MAX_UPLOAD_BYTES) {
        throw new ApiError('payload_too_large', `fileSize ${body.fileSize} exceeds the limit of ${MAX_UPLOAD_BYTES} bytes (5 GB); split the recording or compress it.`, {
          details: [{ field: 'fileSize', issue: `must be at most ${MAX_UPLOAD_BYTES}` }],
        })
      }
      const hint = speakersHintJson(body.speakers)
      const note = await deps.transaction(async () => {
        const n = await notes.createPending(p, {
          title: body.fileName.replace(/\.[A-Za-z0-9]{1,5}$/, ''),
          type: type.startsWith('video/') ? 'video' : 'audio',
          styleId: body.styleId ?? 'note',
          language: body.language && body.language !== 'auto' ? body.language : null,
          source: 'upload',
          stage: 'awaiting_upload',
        })
        await repo.insert({
          note_id: n.id, account_id: p.accountId, sandbox: p.sandbox ? 1 : 0, storage_key: `uploads/${n.id}`,
          file_name: body.fileName, content_type: body.contentType, declared_size: body.fileSize ?? null,
          source: p.source, created_at: clock.now().toISOString(), speakers_hint: hint,
        })
        return n
      })
      const expiresAt = new Date(clock.now().getTime() + UPLOAD_TTL_MS)
      const target = await storage.uploadTarget(`uploads/${note.id}`, body.contentType, expiresAt)
      return {
        noteId: note.id,
        uploadUrl: target.url,
        method: 'PUT' as const,
        headers: target.headers,
        filePath: `uploads/${note.id}`,
        contentType: body.contentType,
        expiresAt: expiresAt.toISOString(),
        next: `PUT the file to uploadUrl with these headers, then POST ${deps.publicUrl}/v1/uploads/${note.id}/complete`,
        ...(p.sandbox ? { notice: `${SANDBOX_NOTICE} Completing this upload does not need the file.` } : {}),
      }
    },

    /** The stored media of an uploaded note of the library, for playing it back; 404 when it has none. */
    async media(lib: Library, noteId: string): Promise<{ key: string; contentType: string; size: number }> {
      const row = await repo.get(lib, noteId)
      const removedAt = row ? (await notes.get(lib, noteId)).mediaRemovedAt : null
      if (removedAt) {
        throw new ApiError('not_found', `The recording of note ${noteId} was removed by the retention policy on ${removedAt.slice(0, 10)}; its transcript and summary are kept (GET /v1/notes/${noteId}). The account's retention policy (GET /v1/settings/retention, or /settings in the browser) says what is kept.`)
      }
      const stored = row?.received_at ? await storage.stat(row.storage_key) : null
      if (!row || !stored) throw new ApiError('not_found', `Note ${noteId} has no uploaded recording in this library; only notes made from an upload can be played.`)
      return { key: row.storage_key, contentType: row.content_type, size: stored.size }
    },

    /** the bytes of stored media (a key `media` returned), whole or a byte range */
    readMedia: (key: string, range?: { start: number; end: number }) => storage.read(key, range),

    /** The recording lengths (seconds) of those of `noteIds` that are completed uploads of the library. */
    async durations(lib: Library, noteIds: string[]): Promise<Record<string, number>> {
      const out: Record<string, number> = {}
      for (const r of await repo.durations(lib, noteIds)) if (r.duration_seconds !== null) out[r.note_id] = r.duration_seconds
      return out
    },

    /** The PUT target of a storage that receives uploads itself: checks the signature, then streams the body to storage within the size limit. */
    async receiveFile(noteId: string, query: { expires?: string; signature?: string }, request: Request) {
      const receive = storage.receiveUpload?.bind(storage)
      if (!receive) throw new ApiError('not_found', `This server does not receive uploads itself (NOTESVC_STORAGE=${storage.name} hands out its own upload URLs): PUT the file to the uploadUrl POST /v1/uploads returned.`)
      const check = checkUploadSignature(await deps.uploadSecret(), noteId, query.expires, query.signature, clock.now())
      if (check !== 'ok') {
        throw new ApiError('invalid_token', check === 'expired'
          ? 'This upload URL has expired; start a new upload with POST /v1/uploads.'
          : 'This upload URL is not valid (bad or missing signature); use the uploadUrl returned by POST /v1/uploads as is.')
      }
      const row = await repo.byNote(noteId)
      if (!row) throw new ApiError('not_found', `No upload with id ${noteId} exists.`)
      if (row.completed_at) throw new ApiError('conflict', `Upload ${noteId} is already completed; its file cannot be replaced.`)
      const limit = limitOf(row)
      const declared = Number(request.headers.get('content-length') ?? NaN)
      if (declared > limit) throw tooLarge(limit)
      if (!request.body) throw new ApiError('invalid_request', 'The PUT has no body; send the file as the request body.')
      try {
        const size = await receive(row.storage_key, request.body, limit, Number.isFinite(declared) ? declared : undefined)
        await repo.markReceived(noteId, size, clock.now().toISOString())
        return { noteId, receivedBytes: size }
      } catch (err) {
        if (err instanceof TooLargeError) throw tooLarge(limit)
        throw err
      }
    },

    async completeUpload(p: Principal, id: string): Promise<Charged<UploadAccepted> & { accepted: boolean }> {
      const row = await requireUpload(p, id)
      const poll = `${deps.publicUrl}/v1/notes/${id}/status`
      const remaining = async () => (await credits.balance(p.accountId)).totalRemaining
      const already = async (r: UploadRow): Promise<Charged<UploadAccepted> & { accepted: boolean }> => ({
        accepted: false,
        creditsRemaining: await remaining(),
        body: { noteId: id, status: (await notes.requireNote(p, id)).status, creditsCharged: 0, durationSeconds: r.duration_seconds, poll, alreadyCompleted: true },
      })
      if (row.completed_at) return already(row)

      if (p.sandbox) {
        const sandboxCost = credits.quote(p, 'completeUpload', SANDBOX_DURATION_SECONDS)
        const won = await deps.transaction(async () => {
          if (!(await repo.markCompleted({ note_id: id, completed_at: clock.now().toISOString(), duration_seconds: SANDBOX_DURATION_SECONDS, credits_charged: sandboxCost, usage_id: null }))) return false
          const fixed = sandboxSummary((await notes.requireNote(p, id)).style_id as StyleId)
          await notes.finish(id, { summary: fixed.summary, transcript: SANDBOX_TRANSCRIPT, structuredContent: fixed.structuredContent, language: 'en', segments: SANDBOX_SEGMENTS })
          return true
        })
        if (!won) return already((await repo.byNote(id))!)
        return { accepted: true, creditsRemaining: await remaining(), body: { noteId: id, status: 'Done', creditsCharged: sandboxCost, durationSeconds: SANDBOX_DURATION_SECONDS, poll, alreadyCompleted: false } }
      }

      const noEngine = missingSpeechEngine(deps.asr())
      if (noEngine) throw new ApiError('upstream_failure', `${noEngine} Nothing was charged; the upload is kept, so complete it again once an engine is installed.`)
      const stored = await storage.stat(row.storage_key)
      const removedAt = stored ? null : (await notes.requireNote(p, id)).media_removed_at
      if (removedAt) {
        throw new ApiError('conflict', `Upload ${id} was never completed, and the retention policy removed it on ${removedAt.slice(0, 10)}; start a new upload with POST /v1/uploads.`)
      }
      if (!stored) throw new ApiError('conflict', `The file for upload ${id} has not arrived yet; PUT it to the uploadUrl, then complete the upload.`)
      if (stored.size > limitOf(row)) {
        await storage.delete(row.storage_key)
        throw new ApiError('conflict', `The stored file (${stored.size} bytes) is larger than the ${limitOf(row)} bytes allowed for this upload, so it was removed; upload it again.`)
      }
      const duration = await durationOf(row)
      const cost = credits.quote(p, 'completeUpload', duration)

      // Charging, marking complete, the note's stage and queueing are one transaction, on the upload's
      // row locked first: of concurrent calls (on any node) exactly one charges; the rest find it
      // completed and charge nothing.
      const outcome = await deps.transaction(async () => {
        const current = (await repo.byNote(id, { lock: true }))!
        if (current.completed_at) return null
        const charge = await credits.charge({ accountId: p.accountId, operation: 'completeUpload', credits: cost, source: p.source, noteId: id })
        await repo.markCompleted({ note_id: id, completed_at: clock.now().toISOString(), duration_seconds: duration, credits_charged: cost, usage_id: charge.usageId })
        await notes.setStage(id, 'queued')
        await deps.queueJob(id)
        return charge.balance.totalRemaining
      })
      if (outcome === null) return already((await repo.byNote(id))!)
      deps.wakeWorkers()
      return { accepted: true, creditsRemaining: outcome, body: { noteId: id, status: 'Summarizing', creditsCharged: cost, durationSeconds: duration, poll, alreadyCompleted: false } }
    },

    /**
     * Removes the temporary files of PUTs a dead process left behind (killed mid-upload): those older
     * than the upload URL's lifetime, and those whose upload no longer awaits its file (the note was
     * deleted, or the upload completed). Run at start-up, before the server answers, so no PUT of this
     * process is under way; a live PUT's file would be kept anyway (fresh, and its note awaiting).
     */
    async reclaimInterruptedUploads(): Promise<{ files: number; bytes: number }> {
      const reclaimed = { files: 0, bytes: 0 }
      const now = clock.now().getTime()
      for (const partial of await storage.partialWrites()) {
        const noteId = partial.key.startsWith('uploads/') ? partial.key.slice('uploads/'.length) : null
        const upload = noteId ? await repo.byNote(noteId) : null
        const awaiting = Boolean(upload && !upload.completed_at && (await notes.getById(upload.note_id))?.processing_stage === 'awaiting_upload')
        if (awaiting && now - partial.modifiedAt.getTime() < UPLOAD_TTL_MS) continue
        await storage.removePartialWrite(partial)
        reclaimed.files++
        reclaimed.bytes += partial.bytes
      }
      return reclaimed
    },
  }
}

function tooLarge(limit: number) {
  return new ApiError('payload_too_large', `The file is larger than the ${limit} bytes this upload allows (the declared fileSize, at most 5 GB); start a new upload with the right fileSize.`)
}
