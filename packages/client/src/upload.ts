import { errorOf } from './answers.js'
import { NoteFailedError } from './errors.js'
import type { components } from './generated/openapi.js'
import type { Sleep } from './retry.js'
import type { NotesvcClient, Fetch } from './client.js'

export type UploadedNote = components['schemas']['Note']
export type NoteStatus = components['schemas']['NoteStatus']
type CreateUploadRequest = components['schemas']['CreateUploadRequest']

export interface UploadRecordingOptions {
  /** a path (Bun and Node only), a Blob (a File in browsers), or a stream of the file's bytes */
  file: string | Blob | ReadableStream<Uint8Array>
  /** the name the note is created from (its title until summarized) */
  fileName: string
  /** by default the Blob's own type, else guessed from the name's extension */
  contentType?: string
  /** bytes; read from a path or Blob, needed for a stream's progress total */
  fileSize?: number
  styleId?: CreateUploadRequest['styleId']
  language?: CreateUploadRequest['language']
  speakers?: CreateUploadRequest['speakers']
  /** bytes sent so far and the total (null when unknown) */
  onUploadProgress?: (sent: number, total: number | null) => void
  /** each status read while processing runs */
  onStatus?: (status: NoteStatus) => void
  signal?: AbortSignal
  /** the pause between status reads (default 1000 ms) */
  pollMs?: number
}

const TYPES: Record<string, string> = {
  wav: 'audio/wav', mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/opus',
  flac: 'audio/flac', webm: 'audio/webm', mp4: 'video/mp4', mov: 'video/quicktime', mkv: 'video/x-matroska',
}

function guessedType(fileName: string): string {
  const extension = fileName.toLowerCase().split('.').pop() ?? ''
  return TYPES[extension] ?? 'application/octet-stream'
}

/**
 * node:fs, imported only when a path is given (in Node), by a name bundlers leave alone: a browser
 * build of the client has no import of it.
 */
const NODE_FS = 'node:fs'

/** The file at a path as a Blob: Bun's own, else Node's fs.openAsBlob. */
async function fileAtPath(path: string): Promise<Blob> {
  const bun = (globalThis as { Bun?: { file(path: string): Blob & { exists(): Promise<boolean> } } }).Bun
  if (bun) {
    const file = bun.file(path)
    if (!(await file.exists())) throw new Error(`No file at ${path}: pass the path of the recording to upload.`)
    return file
  }
  const fs = (await import(NODE_FS)) as { openAsBlob(path: string): Promise<Blob> }
  return fs.openAsBlob(path)
}

/** The bytes as they are read, counted for the progress callback. */
function counted(stream: ReadableStream<Uint8Array>, total: number | null, onProgress?: (sent: number, total: number | null) => void): ReadableStream<Uint8Array> {
  let sent = 0
  return stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      sent += chunk.byteLength
      controller.enqueue(chunk)
      onProgress?.(sent, total)
    },
  }))
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const inBrowser = () => typeof (globalThis as { document?: unknown }).document !== 'undefined'

/** The PUT of the file to the signed URL, with the headers createUpload returned (and no API key). */
async function put(fetcher: Fetch, upload: { uploadUrl: string; headers: Record<string, string> }, file: Blob | ReadableStream<Uint8Array>, total: number | null, options: UploadRecordingOptions) {
  const headers: Record<string, string> = { ...upload.headers }
  let body: BodyInit
  if (file instanceof Blob && inBrowser()) {
    // a browser streams a request body only over HTTP/2: the Blob goes whole, its progress at the end
    body = file
  } else {
    body = counted(file instanceof Blob ? file.stream() : file, total, options.onUploadProgress)
    if (total !== null) headers['content-length'] = String(total)
  }
  const init = { method: 'PUT', headers, body, signal: options.signal, duplex: 'half' } as RequestInit
  const response = await fetcher(new Request(upload.uploadUrl, init))
  if (!response.ok) {
    // the server's own PUT target answers with its envelope; a storage's (S3's XML) is quoted as it is
    const text = await response.text()
    const envelope = parsedJson(text)
    if ((envelope as { error?: unknown } | undefined)?.error) throw errorOf(response, envelope)
    throw new Error(`The upload's PUT was refused (${response.status}): ${text.slice(0, 500)}. Start the upload again with uploadRecording.`)
  }
  await response.body?.cancel()
  if (body === file && total !== null) options.onUploadProgress?.(total, total)
}

/**
 * createUpload, the PUT of the file, completeUpload (retried by the client on 429/503; completing
 * again answers 200), then the note's status every `pollMs` until Done (the note) or Error
 * (NoteFailedError with the note's errorCode).
 */
export async function uploadRecording(client: NotesvcClient, fetcher: Fetch, sleep: Sleep, options: UploadRecordingOptions): Promise<UploadedNote> {
  const file = typeof options.file === 'string' ? await fileAtPath(options.file) : options.file
  const total = file instanceof Blob ? file.size : options.fileSize ?? null
  const contentType = options.contentType ?? (file instanceof Blob && file.type ? file.type.split(';')[0]! : guessedType(options.fileName))
  const call = { signal: options.signal }
  const upload = await client.createUpload({
    fileName: options.fileName, contentType,
    ...(total !== null ? { fileSize: total } : {}),
    ...(options.styleId ? { styleId: options.styleId } : {}),
    ...(options.language ? { language: options.language } : {}),
    ...(options.speakers ? { speakers: options.speakers } : {}),
  }, call)
  await put(fetcher, upload, file, total, options)
  await client.completeUpload({ id: upload.noteId }, call)
  for (;;) {
    options.signal?.throwIfAborted()
    const status = await client.getNoteStatus({ id: upload.noteId }, call)
    options.onStatus?.(status)
    if (status.status === 'Done') return client.getNote({ id: upload.noteId }, call)
    if (status.status === 'Error') {
      throw new NoteFailedError(upload.noteId, status.errorCode, `Note ${upload.noteId} failed to process${status.errorCode ? ` (${status.errorCode})` : ''}: ${status.errorMessage ?? 'no message'}. Fix the recording and upload it again.`)
    }
    await sleep(options.pollMs ?? 1000)
  }
}
