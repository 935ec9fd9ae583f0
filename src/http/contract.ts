import { Elysia } from 'elysia'
import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { RateClass } from '../config'
import type { Principal } from './principal'
import type { PeerServer } from './client-address'
import { ALL_SCOPES, isScope, SCOPES, type Scope } from './scopes'

export { ALL_SCOPES, isScope, SCOPES, type Scope }
import type { ErrorCode } from './errors'
import { jsonBody, noBody } from './json-body'
import type { JsonText } from './responses'
import { bodyValidator, queryValidator } from './schemas'

/** The groups operations are listed under, in the document and on the docs page. */
export const TAGS = [
  { name: 'Discovery', description: 'What the service offers and whether it is up; no credential needed.' },
  { name: 'Notes', description: 'The library of notes: created from text or from processed media, read, changed, deleted, and asked about.' },
  { name: 'Folders', description: 'Folders group notes; deleting one keeps its notes at the top level.' },
  { name: 'Processing', description: 'Uploads, transcriptions and summaries: the operations that run a model and spend credits.' },
  { name: 'Usage', description: 'The credit balance, the monthly grant and the recent charges and refunds.' },
  { name: 'Speakers', description: 'Who said what: the speakers of a diarized note, their names, and the voices remembered for later recordings.' },
  { name: 'Webhooks', description: 'Endpoints that receive signed events when a note finishes processing or fails.' },
  { name: 'Audit', description: 'The account\'s audit log: who signed in, read, exported or deleted what, when and from where.' },
  { name: 'Settings', description: 'The account\'s own settings: what the retention policy keeps and deletes.' },
] as const

export type Tag = (typeof TAGS)[number]['name']
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
/** What an operation costs: a whole number of credits, or one per started minute of media. */
export type Credits = number | '1 per started minute'

/** The success answers of an operation by status: the body's schema, or `null` for no body (204). */
export type Responses = { [status: number]: TSchema | null }

/** How an operation is offered to machine agents over MCP. */
export interface McpExposure {
  /** offered as a tool of the same name */
  tool: boolean
  /** reaches outside the service (fetches a URL the caller names) */
  openWorld: boolean
  /** the tool's arguments when they are not the operation's body or query (a multipart operation's) */
  arguments?: TObject
}

/** One operation as its module declares it: everything the API, the document and MCP derive. */
export interface OperationDeclaration {
  id: string
  method: Method
  /** Elysia path pattern (`/v1/notes/:id`) */
  path: string
  summary: string
  description: string
  tag: Tag
  /** the scopes a credential needs; none for the public operations, which need no credential */
  scopes: readonly Scope[]
  credits: Credits
  /** by default: `processing` when it charges, else `read` for GET and `write` for the rest */
  rateClass?: RateClass
  params?: TObject
  query?: TObject
  /** a JSON body, validated before the handler runs (`routeOptions`) */
  body?: TObject
  /**
   * a `multipart/form-data` body instead: published in the document, not read before the handler,
   * which streams it itself (a file may be gigabytes)
   */
  multipartBody?: TObject
  responses: Responses
  /** media types of text bodies the success answer may have besides JSON (`text/vtt`, …), by the request's choice */
  textResponses?: readonly string[]
  /** error codes beyond the common ones (400, 401, 403, 429, 500; only 429 and 500 when public) */
  errors?: readonly ErrorCode[]
  /** by default a tool that stays inside the service */
  mcp?: Partial<McpExposure>
}

export type Operation<D extends OperationDeclaration = OperationDeclaration> = D & {
  rateClass: RateClass
  /** needs no credential */
  public: boolean
  errors: readonly ErrorCode[]
  mcp: McpExposure
}

/**
 * Every operation of the API, as the modules declare them, collected above the modules (`src/operations.ts`)
 * and handed to what reads them: admission, the OpenAPI document, the API index, the MCP tools, prices.
 */
export interface OperationTable {
  readonly all: readonly Operation[]
  /** the operation of an id; throws for an unknown one */
  byId(id: string): Operation
  /** the operation served at a method and Elysia route pattern, if any */
  forRoute(method: string, path: string): Operation | undefined
}

export function defineOperation<const D extends OperationDeclaration>(d: D): Operation<D> {
  return {
    ...d,
    rateClass: d.rateClass ?? (d.credits !== 0 ? 'processing' : d.method === 'GET' ? 'read' : 'write'),
    public: d.scopes.length === 0,
    errors: d.errors ?? [],
    mcp: { tool: true, openWorld: false, ...d.mcp },
  }
}

type StaticOf<S, Else> = S extends TSchema ? Static<S> : Else

/** The bodies an operation answers with on success. */
export type SuccessBody<D extends OperationDeclaration> = {
  [S in keyof D['responses']]: D['responses'][S] extends TSchema ? Static<D['responses'][S]> : never
}[keyof D['responses']]

/**
 * What a handler may return: a success body (checked against the response schemas at compile time;
 * responses are not re-checked at run time, which would cost half of a list request), the same as
 * ready JSON text, or an empty `Response` when the operation answers 204.
 */
export type Reply<D extends OperationDeclaration> =
  | SuccessBody<D>
  | (D['textResponses'] extends readonly string[] ? string : never)
  | JsonText<SuccessBody<D>>
  | (null extends D['responses'][keyof D['responses']] ? Response : never)

/** The part of Elysia's context a handler of the contract sees, typed from the declaration. */
export interface HandlerContext<D extends OperationDeclaration> {
  /** the admitted caller; null only for the public operations */
  principal: D['scopes'] extends readonly [] ? null : Principal
  params: StaticOf<D['params'], Record<string, never>>
  /** as sent: read it with `queryReader(operation)` */
  query: Record<string, unknown>
  body: StaticOf<D['body'], undefined>
  set: { status?: number | string; headers: Record<string, string | number> }
  request: Request
  /** the server, to ask for the client's address (src/http/client-address.ts); read it only where needed */
  server: PeerServer
  /** what admission's rate-limit statement read alongside its count (Admitted.alongside), if anything */
  alongside: string | undefined
}

export type Handler<D extends OperationDeclaration> = (ctx: HandlerContext<D>) => Reply<D> | Promise<Reply<D>>

export interface Route {
  operation: Operation
  handler: (ctx: never) => unknown
}

/** An operation and its handler, typed by the declaration. */
export function route<const D extends OperationDeclaration>(operation: Operation<D>, handler: Handler<D>): Route {
  return { operation, handler }
}

/** The checked, typed query of an operation that declares one: numeric parameters become numbers. */
export function queryReader<D extends OperationDeclaration & { query: TObject }>(op: Operation<D>): (query: Record<string, unknown>) => Static<D['query']> {
  return queryValidator(op.query)
}

/**
 * Elysia's options for an operation: path parameters validated from the declared schema, how the body
 * is read (as JSON whatever Content-Type says; not at all when there is none), and the body's check
 * against its schema, after the guard and the path's validation (so a refusal still names the caller
 * in the access log). The body is not given to Elysia to validate: its validation error prints the
 * whole value into its message (JSON.stringify, indented), seconds for a deeply nested body.
 */
export function routeOptions(op: Operation): Record<string, unknown> {
  return {
    ...(op.params ? { params: op.params } : {}),
    ...(op.body ? { ...jsonBody, beforeHandle: bodyCheck(op.body) } : op.method === 'GET' ? {} : noBody),
  }
}

/** A route's check of its JSON body (http/schemas.ts `bodyValidator`), compiled on the route's first request. */
function bodyCheck(schema: TObject): (ctx: { body: unknown }) => void {
  let check: ((body: unknown) => void) | undefined
  return ({ body }) => (check ??= bodyValidator(schema))(body)
}

/**
 * The routes of one module. Each handler goes to Elysia as written, not wrapped: Elysia reads a
 * handler's parameters to decide what to parse, and a wrapper taking the whole context would make it
 * parse everything on every request.
 */
export function contractRoutes(name: string, guard: Elysia<any, any, any, any, any, any, any>, routes: Route[]) {
  const app = new Elysia({ name }).use(guard)
  for (const r of routes) app.route(r.operation.method, r.operation.path, r.handler as never, routeOptions(r.operation) as never)
  return app
}
