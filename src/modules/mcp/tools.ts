import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { Config } from '../../config'
import type { Principal } from '../../http/auth'
import { ApiError, detailsFromValueErrors, type ErrorDetail } from '../../http/errors'
import { OPERATIONS, operation, type Operation } from '../../http/operations'
import { IdParams } from '../../http/schemas'
import type { Services } from '../../services'
import { VERSION } from '../../version'
import { apiIndex } from '../discovery'
import { CreateFolderRequest, UpdateFolderRequest } from '../folders/model'
import { CreateNoteRequest, ListNotesQuery, QuestionRequest, UpdateNoteRequest } from '../notes/model'
import { SummaryRequest, TranscriptionRequest, YoutubeSummaryRequest } from '../processing/model'
import { CreateUploadRequest } from '../uploads/model'
import { UsageQuery } from '../usage/model'

/** What running a tool gives: the operation's response body, and the balance after a charge. */
export interface ToolOutput {
  result: Record<string, unknown>
  creditsRemaining?: number
}

/** The JSON Schema of a tool's arguments, as MCP lists it (always an object). */
export interface ToolInputSchema {
  type: 'object'
  properties: Record<string, unknown>
  required?: string[]
  [key: string]: unknown
}

/** One MCP tool: an operation of the table, its argument schema and how to run it. */
export interface Tool {
  name: string
  description: string
  operation: Operation
  inputSchema: ToolInputSchema
  /** checks the arguments against the model schemas, throwing `invalid_request` with one detail per field */
  validate(args: unknown): void
  run(p: Principal, args: Record<string, unknown>): ToolOutput | Promise<ToolOutput>
}

export type ToolServices = Pick<Services, 'notes' | 'folders' | 'uploads' | 'processing' | 'usage' | 'asr' | 'llmSelector'>

const NoArguments = Type.Object({}, { additionalProperties: false })

/** A plain JSON copy of a TypeBox schema (TypeBox's symbol keys dropped). */
function json(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
}

function invalid(opId: string, details: ErrorDetail[]): ApiError {
  return new ApiError('invalid_request', `The arguments of ${opId} failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.`, { details })
}

function check<T extends TSchema>(c: TypeCheck<T>, value: unknown, part: string): ErrorDetail[] {
  return c.Check(value) ? [] : detailsFromValueErrors(part, [...c.Errors(value)])
}

const compiled = new Map<TSchema, TypeCheck<TSchema>>()
function compile<T extends TSchema>(schema: T): TypeCheck<T> {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c as TypeCheck<T>
}

function describe(op: Operation): string {
  const parts = [`${op.summary}.`]
  if (op.scopes.length) parts.push(`Needs scope${op.scopes.length > 1 ? 's' : ''} ${op.scopes.join(' and ')}.`)
  else parts.push('Public: no scope needed.')
  if (op.credits !== 0) parts.push(`Costs ${op.credits === '1 per started minute' ? '1 credit per started minute of media' : `${op.credits} credit${op.credits === 1 ? '' : 's'}`} (nothing with a sandbox key).`)
  parts.push(`Same as ${op.method} ${op.path} of the HTTP API.`)
  return parts.join(' ')
}

/** A tool whose arguments are exactly one model schema (a request body or a query). */
function plain<S extends TObject>(opId: string, schema: S, run: (p: Principal, args: Static<S>) => ToolOutput | Promise<ToolOutput>): Tool {
  const op = operation(opId)
  const c = compile(schema)
  return {
    name: op.id,
    description: describe(op),
    operation: op,
    inputSchema: json(schema) as ToolInputSchema,
    validate(args) {
      const details = check(c, args, 'arguments')
      if (details.length) throw invalid(op.id, details)
    },
    run: (p, args) => run(p, args as Static<S>),
  }
}

/**
 * A tool for an operation on one resource (`/…/:id`): the path's `id` beside the fields of the body
 * schema, if any. `id` is checked with the path schema, the rest with the body schema.
 */
function byId<S extends TObject>(opId: string, body: S | null, run: (p: Principal, id: string, args: Static<S>) => ToolOutput | Promise<ToolOutput>): Tool {
  const op = operation(opId)
  const idCheck = compile(IdParams)
  const bodyCheck = body ? compile(body) : compile(NoArguments)
  const bodyJson = body ? json(body) : json(NoArguments)
  const required = [...IdParams.required ?? [], ...((bodyJson.required as string[] | undefined) ?? [])]
  const inputSchema: ToolInputSchema = {
    ...bodyJson,
    type: 'object',
    properties: { ...(json(IdParams).properties as Record<string, unknown>), ...(bodyJson.properties as Record<string, unknown>) },
    required,
    additionalProperties: false,
  }
  if (typeof bodyJson.minProperties === 'number') inputSchema.minProperties = bodyJson.minProperties + 1
  if (typeof bodyJson.error === 'string') inputSchema.error = `give id, and ${bodyJson.error}`
  return {
    name: op.id,
    description: describe(op),
    operation: op,
    inputSchema,
    validate(args) {
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalid(op.id, [{ field: 'arguments', issue: 'must be an object' }])
      const { id, ...rest } = args as Record<string, unknown>
      const details = [...check(idCheck, { id }, 'id'), ...check(bodyCheck, rest, 'arguments')]
      if (details.length) throw invalid(op.id, details)
    },
    run: (p, args) => {
      const { id, ...rest } = args
      return run(p, id as string, rest as Static<S>)
    },
  }
}

const out = (result: unknown): ToolOutput => ({ result: result as Record<string, unknown> })
const charged = async (pending: Promise<{ body: unknown; creditsRemaining: number }>): Promise<ToolOutput> => {
  const r = await pending
  return { result: r.body as Record<string, unknown>, creditsRemaining: r.creditsRemaining }
}

/** One tool per operation of the table, in its order. */
export function createTools(deps: { config: Config; services: ToolServices }): Tool[] {
  const { notes, folders, uploads, processing, usage } = deps.services
  const index = apiIndex(deps.config)
  const tools: Tool[] = [
    plain('getApiIndex', NoArguments, () => out(index)),
    plain('getHealth', NoArguments, () => out({ status: 'ok', version: VERSION, engines: { asr: deps.services.asr().name, llm: deps.services.llmSelector.lastKnown() } })),

    plain('listNotes', ListNotesQuery, (p, q) => out(JSON.parse(notes.listJson(p, q)))),
    plain('createNote', CreateNoteRequest, (p, body) => out(notes.create(p, body))),
    byId('getNote', null, (p, id) => out(notes.get(p, id))),
    byId('updateNote', UpdateNoteRequest, (p, id, body) => out(notes.update(p, id, body))),
    byId('deleteNote', null, async (p, id) => {
      await notes.delete(p, id)
      return out({ id, deleted: true })
    }),
    byId('getNoteStatus', null, (p, id) => out(notes.status(p, id))),
    byId('getNoteTranscript', null, (p, id) => out(notes.transcript(p, id))),
    byId('askNoteQuestion', QuestionRequest, (p, id, body) => charged(processing.askNoteQuestion(p, id, body.question))),

    plain('listFolders', NoArguments, p => out(folders.list(p))),
    plain('createFolder', CreateFolderRequest, (p, body) => out(folders.create(p, body))),
    byId('getFolder', null, (p, id) => out(folders.get(p, id))),
    byId('updateFolder', UpdateFolderRequest, (p, id, body) => out(folders.update(p, id, body))),
    byId('deleteFolder', null, (p, id) => {
      folders.delete(p, id)
      return out({ id, deleted: true })
    }),

    plain('createUpload', CreateUploadRequest, async (p, body) => out(await uploads.createUpload(p, body))),
    byId('completeUpload', null, (p, id) => charged(uploads.completeUpload(p, id))),
    plain('createTranscription', TranscriptionRequest, (p, body) => charged(processing.createTranscription(p, body))),
    plain('createSummary', SummaryRequest, (p, body) => charged(processing.createSummary(p, body))),
    plain('createYoutubeSummary', YoutubeSummaryRequest, (p, body) => charged(processing.createYoutubeSummary(p, body))),

    plain('getUsage', UsageQuery, (p, q) => out(usage.usage(p.accountId, q.limit ?? 50))),
  ]
  const missing = OPERATIONS.filter(o => !tools.some(t => t.name === o.id))
  if (missing.length) throw new Error(`no MCP tool for ${missing.map(o => o.id).join(', ')}`)
  return tools
}

/** The scope check of the HTTP guard, with the same message. */
export function checkScopes(principal: Principal, op: Operation) {
  const missing = op.scopes.filter(s => !principal.scopes.has(s))
  if (missing.length) {
    throw new ApiError('insufficient_scope', `This credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} needed by ${op.id}; use a key or token that has ${op.scopes.join(' and ')}.`)
  }
}
