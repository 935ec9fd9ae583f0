import { speakersHintJson } from '../processing/model'
import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/admission'
import type { NotesService } from '../notes/service'
import type { CreditsService } from '../credits/service'
import type { MediaStorage } from '../../storage/storage'
import type { AsrEngine } from '../../engines/asr/engine'
import type { MediaTools } from '../../engines/media/ffmpeg'
import { SANDBOX_NOTICE } from '../processing/sandbox'
import { createFileArrival } from './file-arrival'
import { MAX_UPLOAD_BYTES, UPLOAD_TTL_MS, type CreateUploadRequest } from './model'
import type { UploadsRepo } from './repo'
import { createUploadCompletion } from './upload-completion'
import type { Library } from '../library'

export type UploadsService = ReturnType<typeof createUploadsService>

/**
 * The upload lifecycle of SPEC.md: start (a note and a signed target), the file arriving (the disk
 * PUT target, or the client's PUT to S3), completion (charged once, processing queued: the processing
 * module's job, which refunds the charge if it fails for good). The file's arrival is
 * file-arrival.ts, completion upload-completion.ts.
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
  /** queues the sandbox scenario `slow`'s steps (processing/sandbox-slow.ts), in the caller's transaction */
  queueSandboxSlow: (noteId: string) => Promise<void>
  /** tells this process's idle workers a job is waiting (after the commit) */
  wakeWorkers: () => void
}) {
  const { repo, notes, storage, clock } = deps
  const arrival = createFileArrival(deps)

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
      const now = clock.now()
      const expiresAt = new Date(now.getTime() + UPLOAD_TTL_MS)
      const target = await storage.uploadTarget(`uploads/${note.id}`, body.contentType, expiresAt, now)
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

    receiveFile: arrival.receiveFile,

    completeUpload: createUploadCompletion(deps),

    /**
     * A live stream's recording (modules/live): the note's upload row, made with the stream's note
     * (inside the caller's transaction); its file is written when the stream ends, then marked complete
     * with what the stream was charged (no charge here: the stream charged each minute as it started).
     */
    recordings: {
      start: (p: Principal, noteId: string, fileName: string) => repo.insert({
        note_id: noteId, account_id: p.accountId, sandbox: p.sandbox ? 1 : 0, storage_key: `uploads/${noteId}`, file_name: fileName,
        content_type: 'audio/wav', declared_size: null, source: p.source, created_at: clock.now().toISOString(), speakers_hint: null,
      }),
      key: async (noteId: string): Promise<string | null> => (await repo.byNote(noteId))?.storage_key ?? null,
      /** received (the library plays it, backups copy it) and complete, as an upload's file once it is */
      async complete(noteId: string, durationSeconds: number, creditsCharged: number, size: number) {
        const at = clock.now().toISOString()
        await repo.markReceived(noteId, size, at)
        return repo.markCompleted({ note_id: noteId, completed_at: at, duration_seconds: durationSeconds, credits_charged: creditsCharged, usage_id: null })
      },
    },

    reclaimInterruptedUploads: arrival.reclaimInterruptedUploads,
  }
}
