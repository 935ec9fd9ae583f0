import createFetchClient from 'openapi-fetch'
import { NotesvcError, type ErrorDetail } from './errors.js'
import { ERROR_CLASSES, ERROR_STATUS, type ErrorCode } from './generated/errors.js'
import { OPERATION_TABLE, type OperationId, type OperationMethods, type Paginators } from './generated/operations.js'
import { defaultSleep, retryAfterSeconds, retryDelay, retryPolicy, type RetryOptions, type Sleep } from './retry.js'
import type { CallOptions, OperationSpec } from './types.js'
import { uploadRecording, type UploadRecordingOptions, type UploadedNote } from './upload.js'

/** A fetch as the client calls it: with a Request (the runtime's own fetch by default). */
export type Fetch = (request: Request) => Promise<Response>

export interface ClientOptions {
  /** the server's address, such as `https://notes.example.com` (without `/v1`) */
  baseUrl: string
  /** an API key (`svc_live_…`, `svc_test_…`) or an OAuth access token */
  apiKey: string
  fetch?: Fetch
  /** `false` for no retries; by default 2 retries on 429 and 503 */
  retry?: RetryOptions | false
  /** how the client waits between tries (tests pass their own) */
  sleep?: Sleep
}

export type NotesvcClient = OperationMethods & {
  /** async iterators over every item of every page of the list operations */
  readonly paginate: Paginators
  /** createUpload, the PUT of the file, completeUpload, then the note's status until Done (or NoteFailedError) */
  uploadRecording(options: UploadRecordingOptions): Promise<UploadedNote>
  readonly baseUrl: string
}

/** How openapi-fetch is called here: untyped (the generated methods carry the types), answers read by the client. */
interface RawRequester {
  request(method: string, path: string, init: {
    params: { path: Record<string, unknown>; query: Record<string, unknown> }
    body?: unknown
    headers?: Record<string, string>
    parseAs: 'stream'
    signal?: AbortSignal
  }): Promise<{ error?: unknown; response: Response }>
}

type Input = Record<string, unknown>
type Envelope = { error?: { code?: unknown; message?: unknown; request_id?: unknown; retry_after_seconds?: unknown; details?: unknown; doc_url?: unknown } }

const TEXT_TYPES = /^(text\/|application\/x-subrip|application\/x-ndjson)/

/** A success answer's body: parsed JSON, text for text types, a Blob for files, undefined for none. */
async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined
  const type = response.headers.get('content-type') ?? ''
  if (TEXT_TYPES.test(type)) return response.text()
  if (type.includes('json')) {
    const text = await response.text()
    return text === '' ? undefined : JSON.parse(text)
  }
  return response.blob()
}

const codeOfStatus = (status: number): string =>
  (Object.keys(ERROR_STATUS) as ErrorCode[]).find(code => ERROR_STATUS[code] === status) ?? 'http_error'

/** The error of a refused request, from its envelope and headers (or its status alone, when a proxy answered). */
function errorOf(response: Response, body: unknown): NotesvcError {
  const e = (body as Envelope | undefined)?.error ?? {}
  const code = typeof e.code === 'string' ? e.code : codeOfStatus(response.status)
  const Class = ERROR_CLASSES[code as ErrorCode] ?? NotesvcError
  const headerRetry = retryAfterSeconds(response.headers.get('retry-after'))
  return new Class({
    code,
    status: response.status,
    message: typeof e.message === 'string' ? e.message : `notesvc answered ${response.status} ${response.statusText} without an error envelope.`,
    requestId: response.headers.get('x-request-id') ?? (typeof e.request_id === 'string' ? e.request_id : null),
    retryAfter: headerRetry ?? (typeof e.retry_after_seconds === 'number' ? e.retry_after_seconds : null),
    details: Array.isArray(e.details) ? e.details as ErrorDetail[] : [],
    docUrl: typeof e.doc_url === 'string' ? e.doc_url : null,
  })
}

/** The input split into path, query and body as the table says. */
function requestParts(spec: OperationSpec, input: Input) {
  const path: Input = {}
  const query: Input = {}
  const rest: Input = {}
  for (const [k, v] of Object.entries(input)) {
    if (spec.pathParams.includes(k)) path[k] = v
    else if (spec.queryParams.includes(k)) query[k] = v
    else rest[k] = v
  }
  const body = spec.body === 'json' ? rest : spec.body === 'multipart' ? rest.form : undefined
  return { path, query, body }
}

async function* pages(call: (input: Input) => Promise<unknown>, spec: OperationSpec, input: Input): AsyncIterableIterator<unknown> {
  type Page = { data: unknown[]; pagination: { hasMore?: boolean; nextCursor?: string | null } }
  let position: Input = {}
  for (;;) {
    const page = await call({ ...input, ...position }) as Page
    yield* page.data
    if (spec.pagination === 'cursor') {
      if (!page.pagination.nextCursor) return
      position = { cursor: page.pagination.nextCursor }
    } else {
      if (!page.pagination.hasMore || page.data.length === 0) return
      position = { offset: Number(position.offset ?? 0) + page.data.length }
    }
  }
}

/** A client of one notesvc server for one credential: one method per operationId. */
export function createClient(options: ClientOptions): NotesvcClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const policy = retryPolicy(options.retry)
  const sleep = options.sleep ?? defaultSleep
  const fetcher: Fetch = options.fetch ?? (request => globalThis.fetch(request))
  const raw = createFetchClient({ baseUrl, fetch: fetcher, headers: { authorization: `Bearer ${options.apiKey}` } }) as unknown as RawRequester

  async function call(id: OperationId, input: Input = {}, callOptions: CallOptions = {}): Promise<unknown> {
    const spec: OperationSpec = OPERATION_TABLE[id]
    const { path, query, body } = requestParts(spec, input)
    for (let retry = 0; ; retry++) {
      const { error, response } = await raw.request(spec.method, spec.path, {
        params: { path, query }, body, headers: callOptions.headers, parseAs: 'stream', signal: callOptions.signal,
      })
      if (response.ok) return readBody(response)
      const refused = errorOf(response, error)
      const wait = retryDelay(policy, retry, response.status, refused.retryAfter)
      if (wait === null) throw refused
      await sleep(wait)
    }
  }

  const methods: Record<string, unknown> = {}
  const paginate: Record<string, unknown> = {}
  for (const id of Object.keys(OPERATION_TABLE) as OperationId[]) {
    const spec: OperationSpec = OPERATION_TABLE[id]
    methods[id] = (input?: Input, callOptions?: CallOptions) => call(id, input, callOptions)
    if (spec.pagination) paginate[id] = (input: Input = {}, callOptions?: CallOptions) => pages(i => call(id, i, callOptions), spec, input)
  }
  const client = Object.assign(methods, {
    baseUrl,
    paginate,
    uploadRecording: (upload: UploadRecordingOptions) => uploadRecording(client, fetcher, sleep, upload),
  }) as unknown as NotesvcClient
  return client
}
