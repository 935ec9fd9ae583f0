import type { Role } from './roles'
import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { RateClass } from '../config'
import type { Principal } from './principal'
import type { Answer } from './answer'
import type { Caller } from './caller'
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
  { name: 'Tags', description: 'Tags label notes, many per note; the list filters by them (`tag=`), and a summary\'s topics are offered as suggested tags.' },
  { name: 'Processing', description: 'Uploads, transcriptions and summaries: the operations that run a model and spend credits.' },
  { name: 'Usage', description: 'The credit balance, the monthly grant and the recent charges and refunds.' },
  { name: 'Speakers', description: 'Who said what: the speakers of a diarized note, their names, and the voices remembered for later recordings.' },
  { name: 'Webhooks', description: 'Endpoints that receive signed events when a note finishes processing or fails.' },
  { name: 'Audit', description: 'The account\'s audit log: who signed in, read, exported or deleted what, when and from where.' },
  { name: 'Settings', description: 'The account\'s own settings: what the retention policy keeps and deletes.' },
  { name: 'Workspaces', description: 'Personal and team workspaces: members and their roles, invitations, keys, and the identity provider\'s groups that join a team.' },
] as const

type Tag = (typeof TAGS)[number]['name']
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
/** What an operation costs: a whole number of credits, or one per started minute of media. */
type Credits = number | '1 per started minute'

/** The success answers of an operation by status: the body's schema, or `null` for no body (204). */
type Responses = { [status: number]: TSchema | null }

/** How an operation is offered to machine agents over MCP. */
interface McpExposure {
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
  /**
   * the least role in the workspace it needs (docs/decisions.md "Workspaces"): by default `viewer` for
   * GET and `editor` for the rest; a person in their personal workspace is its owner
   */
  role?: Role
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
  /**
   * the success answer is a file of one of these media types instead of JSON (a note's export: text, or
   * bytes such as a .docx), by the request's choice; its `responses` entry names and describes it
   */
  fileResponses?: readonly string[]
  /** error codes beyond the common ones (400, 401, 403, 429, 500; only 429 and 500 when public) */
  errors?: readonly ErrorCode[]
  /** by default a tool that stays inside the service */
  mcp?: Partial<McpExposure>
}

export type Operation<D extends OperationDeclaration = OperationDeclaration> = D & {
  rateClass: RateClass
  role: Role
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

function contractOf<const D extends OperationDeclaration>(d: D): Operation<D> {
  return {
    ...d,
    rateClass: d.rateClass ?? (d.credits !== 0 ? 'processing' : d.method === 'GET' ? 'read' : 'write'),
    role: d.role ?? (d.method === 'GET' ? 'viewer' : 'editor'),
    public: d.scopes.length === 0,
    errors: d.errors ?? [],
    mcp: { tool: true, openWorld: false, ...d.mcp },
  }
}

type StaticOf<S, Else> = S extends TSchema ? Static<S> : Else

/** The bodies an operation answers with on success. */
type SuccessBody<D extends OperationDeclaration> = {
  [S in keyof D['responses']]: D['responses'][S] extends TSchema ? Static<D['responses'][S]> : never
}[keyof D['responses']]

/**
 * A multipart operation's input: the request, whose body its handler streams (HTTP), or the tool's
 * arguments (`mcp.arguments`: the file base64-encoded or as a URL) over MCP.
 */
type FormInput<A> = { form: Request; arguments?: undefined } | { form?: undefined; arguments: A }

/** What a handler is given: the path parameters, the checked query and the body, in one object. */
type Input<D extends OperationDeclaration> = D['multipartBody'] extends TObject
  ? FormInput<D['mcp'] extends { arguments: TSchema } ? Static<D['mcp']['arguments']> : never>
  : StaticOf<D['params'], unknown> & StaticOf<D['query'], unknown> & StaticOf<D['body'], unknown>

/**
 * What a handler returns: a success body (checked against the response schemas at compile time;
 * responses are not re-checked at run time, which would cost half of a list request), the same as
 * ready JSON text, an `Answer` (http/answer.ts: a charge's balance, another declared status, a text
 * body), nothing for an operation that answers 204, or a ready `Response` (a stream) for one that is
 * not an MCP tool. The first declared status is the answer's unless an `Answer` says otherwise.
 */
type Result<D extends OperationDeclaration> =
  | SuccessBody<D>
  | JsonText<SuccessBody<D>>
  | Answer<SuccessBody<D> | (D['textResponses'] extends readonly string[] ? string : never)>
  | (D['fileResponses'] extends readonly string[] ? Answer<string | Uint8Array> : never)
  | (null extends D['responses'][keyof D['responses']] ? void : never)
  | (D['mcp'] extends { tool: false } ? Response : never)

/** An operation's handler: its input, who calls, and the services its module asked for (`operationDefiner`). */
type Handler<D extends OperationDeclaration, S> = (
  input: Input<D>,
  caller: Caller<D['scopes'] extends readonly [] ? null : Principal>,
  services: S,
) => Result<D> | Promise<Result<D>>

/** One operation defined once: its contract and its handler, from which the HTTP route, the MCP tool and the OpenAPI entry are derived. */
type Definition<D extends OperationDeclaration, S> = Operation<D> & { handle: Handler<D, S> }

/** Any operation's definition, as what derives from every one of them sees it (each is typed where it is defined). */
export interface OperationDefinition extends Operation {
  handle(input: unknown, caller: Caller<Principal | null>, services: unknown): unknown
}

/** The services every one of a list of definitions asks for, together: what the transports hand them. */
export type ServicesOf<Ops extends readonly { handle: (...args: never[]) => unknown }[]> = UnionToIntersection<
  Ops[number] extends infer O ? (O extends { handle: (input: never, caller: never, services: infer S) => unknown } ? S : never) : never
>
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/**
 * How a module defines its operations: `const defineOperation = operationDefiner<TheServices>()`,
 * then `defineOperation({ contract }, (input, caller, services) => …)` for each, where `services` is
 * what the module named (its own service, another module's), handed in by the composition root.
 */
export function operationDefiner<S>() {
  return <const D extends OperationDeclaration>(declaration: D, handle: Handler<D, S>): Definition<D, S> => ({ ...contractOf(declaration), handle })
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
