import createFetchClient from 'openapi-fetch'
import { errorOf, readBody } from './answers.js'
import { OPERATION_TABLE, type OperationId, type OperationMethods, type Paginators } from './generated/operations.js'
import { defaultSleep, retryDelay, retryPolicy, type RetryOptions, type Sleep } from './retry.js'
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
