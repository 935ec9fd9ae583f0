import type BusboyType from '@fastify/busboy'
import { createWriteStream } from 'node:fs'
import { ApiError } from '../../http/errors'

/**
 * A `multipart/form-data` request read as a stream: its one file written to `path` as it arrives
 * (never whole in memory), its text fields collected. Bun's `request.formData()` would buffer the
 * whole body, a 5 GB recording included, so the body goes through `@fastify/busboy` (the streaming
 * parser Fastify and undici use), fed one chunk at a time: the next chunk is read from the socket
 * only once busboy has taken the last one, and busboy holds a chunk until the file stream has been
 * written to disk, so a slow disk slows the client instead of filling memory.
 */
export interface ReceivedForm {
  /** every text field by name, in the order sent (a name may repeat: `timestamp_granularities[]`) */
  fields: Map<string, string[]>
  /** the file part, when one was sent under `fileField` */
  file: { fileName: string; contentType: string; bytes: number } | null
}

export interface MultipartLimits {
  /** the form field that carries the file */
  fileField: string
  maxFileBytes: number
  /** longest text field, in bytes */
  maxFieldBytes: number
  maxFields: number
}

const invalid = (field: string, issue: string, message: string) => new ApiError('invalid_request', message, { details: [{ field, issue }] })

export async function receiveMultipart(request: Request, path: string, limits: MultipartLimits): Promise<ReceivedForm> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !/boundary=/i.test(contentType)) {
    throw invalid('body', 'must be multipart/form-data', `Send the recording as multipart/form-data (a \`${limits.fileField}\` part and text fields), as OpenAI's audio API takes it; this request's Content-Type is ${contentType ? `"${contentType.slice(0, 100)}"` : 'missing'}.`)
  }
  if (!request.body) throw invalid(limits.fileField, 'is required', `The request has no body; send the recording as the \`${limits.fileField}\` part of a multipart/form-data body.`)

  // busboy and node:stream loaded on the first multipart request, not at start (with Node's streams
  // they cost milliseconds of every cold start)
  const [{ default: Busboy }, { pipeline }] = await Promise.all([import('@fastify/busboy'), import('node:stream/promises')])
  let busboy: ReturnType<typeof BusboyType>
  try {
    busboy = Busboy({
      headers: { 'content-type': contentType },
      limits: { files: 1, fileSize: limits.maxFileBytes, fields: limits.maxFields, fieldSize: limits.maxFieldBytes, parts: limits.maxFields + 1, headerPairs: 100 },
    })
  } catch (err) {
    throw invalid('body', 'is not valid multipart/form-data', `The multipart body could not be read (${(err as Error).message}); send multipart/form-data with a boundary.`)
  }

  const form: ReceivedForm = { fields: new Map(), file: null }
  let failure: ApiError | null = null
  // a refusal ends the reading at once, even while busboy holds a chunk it will never take
  let stop!: () => void
  const stopped = new Promise<void>(resolve => { stop = resolve })
  const fail = (e: ApiError) => {
    failure ??= e
    stop()
  }
  let fileWritten: Promise<void> = Promise.resolve()
  const open: { file?: { destroy(err?: Error): void } } = {}

  busboy.on('file', (name, stream, fileName, _encoding, mimeType) => {
    if (name !== limits.fileField || form.file) {
      fail(invalid(name, form.file ? 'only one file is taken' : `unexpected file field; send the recording as \`${limits.fileField}\``, `Only one file is taken, as the \`${limits.fileField}\` field; this request sent a file as \`${name}\`.`))
      stream.resume()
      return
    }
    const file = { fileName: fileName ?? '', contentType: mimeType ?? 'application/octet-stream', bytes: 0 }
    form.file = file
    stream.on('data', (chunk: Buffer) => { file.bytes += chunk.length })
    stream.on('limit', () => fail(new ApiError('payload_too_large', `The file is larger than ${limits.maxFileBytes} bytes (5 GB), the most one request may send; split the recording or compress it (for example to 16 kHz mono Opus).`)))
    open.file = stream
    fileWritten = pipeline(stream, createWriteStream(path))
    fileWritten.catch(() => {}) // awaited below; a body cut short rejects it before anything awaits it
  })
  busboy.on('field', (name, value, _nameTruncated, valueTruncated) => {
    if (valueTruncated) {
      fail(invalid(name, `must be at most ${limits.maxFieldBytes} bytes`, `The field \`${name}\` is longer than ${limits.maxFieldBytes} bytes; shorten it.`))
      return
    }
    const list = form.fields.get(name)
    if (list) list.push(value)
    else form.fields.set(name, [value])
  })
  const tooMany = () => fail(invalid('body', `at most ${limits.maxFields} fields and one file`, `The form has too many parts; send one \`${limits.fileField}\` and at most ${limits.maxFields} text fields.`))
  busboy.on('fieldsLimit', tooMany)
  busboy.on('partsLimit', tooMany)
  busboy.on('filesLimit', () => fail(invalid(limits.fileField, 'only one file is taken', `Only one file is taken, as the \`${limits.fileField}\` field.`)))

  const finished = new Promise<void>((resolve, reject) => {
    busboy.on('finish', resolve)
    busboy.on('error', reject)
  })
  finished.catch(() => {}) // read below; a parse error also rejects a write

  let ended = false
  try {
    for await (const chunk of request.body) {
      if (failure) break // 413 or a refused part: the rest is not read
      await Promise.race([stopped, new Promise<void>((resolve, reject) => busboy.write(chunk, (err?: Error | null) => (err ? reject(err) : resolve())))])
    }
    if (!failure) {
      busboy.end()
      await finished
    }
    ended = true
  } catch (err) {
    if (err instanceof ApiError) throw err
    throw invalid('body', 'is not valid multipart/form-data', `The multipart body could not be read (${(err as Error).message}); send multipart/form-data as curl -F or an HTTP library's form encoder writes it.`)
  } finally {
    // refused, cut short or unreadable: the parser and the file being written are closed before the
    // caller removes the folder, so no deleted file stays open holding its disk space
    if (failure || !ended) {
      busboy.destroy()
      open.file?.destroy(new Error('the upload was refused or cut short'))
      await fileWritten.catch(() => {})
    }
  }
  if (failure) throw failure
  await fileWritten
  return form
}
