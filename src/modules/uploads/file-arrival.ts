import type { Clock } from '../../clock'
import { ApiError } from '../../http/errors'
import type { NotesService } from '../notes/service'
import type { MediaStorage } from '../../storage/storage'
import { TooLargeError } from '../../storage/storage'
import { checkUploadSignature } from '../../storage/signed-url'
import { MAX_UPLOAD_BYTES, UPLOAD_TTL_MS } from './model'
import type { UploadRow, UploadsRepo } from './repo'

/** The most bytes an upload may store: its declared fileSize, within the 5 GB limit. */
export const uploadLimitOf = (row: UploadRow) => Math.min(row.declared_size ?? MAX_UPLOAD_BYTES, MAX_UPLOAD_BYTES)

function tooLarge(limit: number) {
  return new ApiError('payload_too_large', `The file is larger than the ${limit} bytes this upload allows (the declared fileSize, at most 5 GB); start a new upload with the right fileSize.`)
}

/**
 * The upload's file arriving at a storage that receives uploads itself (the signed PUT target), and
 * the partial files of PUTs a dead process left behind, reclaimed at start-up.
 */
export function createFileArrival(deps: {
  repo: UploadsRepo
  notes: NotesService
  storage: MediaStorage
  clock: Clock
  /** the key upload URLs are signed with (kept in the database, read when first needed) */
  uploadSecret: () => Promise<string>
}) {
  const { repo, notes, storage, clock } = deps

  return {
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
      const limit = uploadLimitOf(row)
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
