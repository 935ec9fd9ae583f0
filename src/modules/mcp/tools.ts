import type { AuditService } from '../audit/service'
import { principalBy } from '../audit/by'
import type { DiarizationSelector } from '../../engines/diarization'
import type { SpeakersService } from '../notes/speakers'
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import type { TypeCheck } from '@sinclair/typebox/compiler'
import type { Config } from '../../config'
import type { Principal } from '../../http/admission'
import type { OperationDeclaration } from '../../http/contract'
import { ApiError, type ErrorDetail } from '../../http/errors'
import { compileCheck, valueErrorDetails } from '../../http/schemas'
import { textDetails } from '../../http/text-check'
import type { Operation } from '../../http/contract'
// the registry's type only: which operations exist, so that every tool has a runner (checked at compile time)
import type { OPERATIONS } from '../../operations'
import type { AsrEngine } from '../../engines/asr/engine'
import type { LlmSelector } from '../../engines/llm'
import type { CreditsService } from '../credits/service'
import type { FoldersService } from '../folders/service'
import type { NotesService } from '../notes/service'
import type { OpenAiService } from '../openai/service'
import type { ProcessingService } from '../processing/service'
import type { UploadsService } from '../uploads/service'
import type { UsageService } from '../usage/service'
import type { HealthSources } from '../discovery'
import { apiIndex, health } from '../discovery'
import { exportTranscript } from '../notes/transcript-export'

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
  /** MCP's hints about the tool, from the operation's method and its declared exposure */
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean }
  /** checks the arguments against the model schemas, throwing `invalid_request` with one detail per field */
  validate(args: unknown): void
  run(p: Principal, args: Record<string, unknown>): ToolOutput | Promise<ToolOutput>
}

/** The services the tools call (the composition root's, `src/services.ts`). */
export interface ToolServices {
  /** the audit log: deletions and transcript exports through tools are recorded as through the API */
  audit: Pick<AuditService, 'recordBy'>
  notes: NotesService
  speakers: SpeakersService
  folders: FoldersService
  uploads: UploadsService
  processing: ProcessingService
  openai: OpenAiService
  usage: UsageService
  credits: CreditsService
  asr: () => AsrEngine
  llmSelector: Pick<LlmSelector, 'lastKnown'>
  diarizationSelector: Pick<DiarizationSelector, 'describe'>
  backend: HealthSources['backend']
}

const NoArguments = Type.Object({}, { additionalProperties: false })

/** A plain JSON copy of a TypeBox schema (TypeBox's symbol keys dropped). */
function json(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
}

function invalid(opId: string, details: ErrorDetail[]): ApiError {
  return new ApiError('invalid_request', `The arguments of ${opId} failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.`, { details })
}

/**
 * The arguments' text the database cannot hold (U+0000, a lone surrogate), refused as the HTTP guard
 * refuses it in a path or body (src/http/text-check.ts), beside the schema's details. Not for the
 * public operations, which read nothing from the database (health's `detail` is never refused).
 */
function withUnfitText(op: Operation, details: ErrorDetail[], args: unknown): ErrorDetail[] {
  if (op.public) return details
  for (const d of textDetails(args, 'arguments')) if (!details.some(x => x.field === d.field)) details.push(d)
  return details
}

function check<T extends TSchema>(c: TypeCheck<T>, value: unknown, part: string): ErrorDetail[] {
  return c.Check(value) ? [] : valueErrorDetails(c, value, part)
}

const compiled = new Map<TSchema, TypeCheck<TSchema>>()
function compile<T extends TSchema>(schema: T): TypeCheck<T> {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = compileCheck(schema)))
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

function annotations(op: Operation): Tool['annotations'] {
  return {
    title: op.summary,
    readOnlyHint: op.method === 'GET',
    destructiveHint: op.method === 'DELETE',
    idempotentHint: op.method !== 'POST',
    openWorldHint: op.mcp.openWorld,
  }
}

type Run = (p: Principal, args: Record<string, unknown>) => ToolOutput | Promise<ToolOutput>

/** A tool whose arguments are exactly one model schema (the request body, or the query). */
function plain(op: Operation, schema: TObject, run: Run): Tool {
  const c = compile(schema)
  return {
    name: op.id,
    description: describe(op),
    operation: op,
    inputSchema: json(schema) as ToolInputSchema,
    annotations: annotations(op),
    validate(args) {
      const details = withUnfitText(op, check(c, args, 'arguments'), args)
      if (details.length) throw invalid(op.id, details)
    },
    run,
  }
}

/**
 * A tool for an operation on one resource (`/…/:id`): the path's parameters beside the fields of the
 * body schema, if any. The path parameters are checked with the path schema, the rest with the body's.
 */
function withPathParams(op: Operation, params: TObject, body: TObject, run: Run): Tool {
  const paramsCheck = compile(params)
  const bodyCheck = compile(body)
  const bodyJson = json(body)
  const paramNames = Object.keys(params.properties)
  const inputSchema: ToolInputSchema = {
    ...bodyJson,
    type: 'object',
    properties: { ...(json(params).properties as Record<string, unknown>), ...(bodyJson.properties as Record<string, unknown>) },
    required: [...params.required ?? [], ...((bodyJson.required as string[] | undefined) ?? [])],
    additionalProperties: false,
  }
  if (typeof bodyJson.minProperties === 'number') inputSchema.minProperties = bodyJson.minProperties + paramNames.length
  if (typeof bodyJson.error === 'string') inputSchema.error = `give ${paramNames.join(', ')}, and ${bodyJson.error}`
  return {
    name: op.id,
    description: describe(op),
    operation: op,
    inputSchema,
    annotations: annotations(op),
    validate(args) {
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalid(op.id, [{ field: 'arguments', issue: 'must be an object' }])
      const pathArgs: Record<string, unknown> = {}
      const rest: Record<string, unknown> = { ...(args as Record<string, unknown>) }
      for (const name of paramNames) {
        pathArgs[name] = rest[name]
        delete rest[name]
      }
      const details = withUnfitText(op, [...check(paramsCheck, pathArgs, paramNames.length === 1 ? paramNames[0]! : 'arguments'), ...check(bodyCheck, rest, 'arguments')], args)
      if (details.length) throw invalid(op.id, details)
    },
    run,
  }
}

/** The tool of an operation, its arguments from the declared path parameters, body or query. */
function toolFor(op: Operation, run: Run): Tool {
  const schema = op.mcp.arguments ?? op.body ?? op.query ?? NoArguments
  return op.params ? withPathParams(op, op.params, schema, run) : plain(op, schema, run)
}

const out = (result: unknown): ToolOutput => ({ result: result as Record<string, unknown> })
const charged = (r: { body: unknown; creditsRemaining: number }): ToolOutput => ({ result: r.body as Record<string, unknown>, creditsRemaining: r.creditsRemaining })

type Declared = (typeof OPERATIONS)[number]
type StaticOf<S> = S extends TSchema ? Static<S> : unknown
/** A tool's arguments: the operation's path parameters and body (or query) in one object. */
type ArgsOf<D extends OperationDeclaration> = D['mcp'] extends { arguments: TSchema } ? Static<D['mcp']['arguments']> : StaticOf<D['params']> & StaticOf<D['body']> & StaticOf<D['query']>
/** How each tool runs, by operation: one entry per operation offered as a tool, checked at compile time. */
type Runners = { [D in Declared as D['mcp']['tool'] extends false ? never : D['id']]: (p: Principal, args: ArgsOf<D>) => ToolOutput | Promise<ToolOutput> }

/** One tool per operation the contract offers to agents, in the table's order. */
export function createTools(deps: { config: Config; services: ToolServices; operations: typeof OPERATIONS }): Tool[] {
  const { notes, folders, uploads, processing, openai, usage, speakers, audit } = deps.services
  const index = apiIndex(deps.config, { operations: deps.operations, costs: deps.services.credits.publishedCosts() })
  const runners: Runners = {
    getApiIndex: () => out(index),
    getHealth: async (_p, q) => out(await health({ asrEngine: () => deps.services.asr().name, asrServer: () => deps.services.asr().server?.(), llmEngine: () => deps.services.llmSelector.lastKnown(), diarizationEngine: () => deps.services.diarizationSelector.describe().engine, backend: deps.services.backend }, q.detail)),

    listNotes: async (p, q) => out(JSON.parse(await notes.listJson(p, q))),
    createNote: async (p, body) => out(await notes.create(p, body)),
    getNote: async (p, { id }) => out(await notes.get(p, id)),
    updateNote: async (p, { id, ...body }) => out(await notes.update(p, id, body)),
    deleteNote: async (p, { id }) => {
      await notes.delete(p, id, () => audit.recordBy(principalBy(p), { accountId: p.accountId, action: 'note.deleted', target: { type: 'note', id }, details: { sandbox: p.sandbox } }))
      return out({ id, deleted: true })
    },
    getNoteStatus: async (p, { id }) => out(await notes.status(p, id)),
    getNoteTranscript: async (p, { id, format }) => {
      const exported = () => audit.recordBy(principalBy(p), { accountId: p.accountId, action: 'note.transcript_exported', target: { type: 'note', id }, details: { format: format ?? 'json', sandbox: p.sandbox } })
      if (format === undefined) {
        const transcript = await notes.transcript(p, id)
        await exported()
        return out(transcript)
      }
      const t = exportTranscript(await notes.transcriptWithTimes(p, id), format)
      await exported()
      return out(typeof t.body === 'string' ? { noteId: id, format, contentType: t.contentType, content: t.body } : t.body)
    },
    askNoteQuestion: async (p, { id, question }) => charged(await processing.askNoteQuestion(p, id, question)),
    listNoteSpeakers: async (p, { id }) => out({ data: await speakers.list(p, id) }),
    updateNoteSpeaker: async (p, { id, speakerId, ...body }) => out(await speakers.update(p, id, speakerId, body)),
    updateNoteSegment: async (p, { id, index, speaker }) => out({ data: await speakers.reassign(p, id, Number(index), speaker) }),
    listSpeakerProfiles: async (p, q) => out(await speakers.profiles(p, q)),
    deleteSpeakerProfile: async (p, { id }) => {
      await speakers.deleteProfile(p, id)
      return out({ id, deleted: true })
    },

    listFolders: async p => out(await folders.list(p)),
    createFolder: async (p, body) => out(await folders.create(p, body)),
    getFolder: async (p, { id }) => out(await folders.get(p, id)),
    updateFolder: async (p, { id, ...body }) => out(await folders.update(p, id, body)),
    deleteFolder: async (p, { id }) => {
      await folders.delete(p, id, () => audit.recordBy(principalBy(p), { accountId: p.accountId, action: 'folder.deleted', target: { type: 'folder', id }, details: { sandbox: p.sandbox } }))
      return out({ id, deleted: true })
    },

    createUpload: async (p, body) => out(await uploads.createUpload(p, body)),
    completeUpload: async (p, { id }) => charged(await uploads.completeUpload(p, id)),
    createTranscription: async (p, body) => charged(await processing.createTranscription(p, body)),
    createSummary: async (p, body) => charged(await processing.createSummary(p, body)),
    createYoutubeSummary: async (p, body) => charged(await processing.createYoutubeSummary(p, body)),
    createAudioTranscription: async (p, args) => {
      const r = await openai.transcribeToolCall(p, args)
      const body = r.body.body
      return { creditsRemaining: r.creditsRemaining, result: typeof body === 'string' ? { format: args.response_format, contentType: r.body.contentType, content: body } : body }
    },
    createAudioTranslation: async (p, args) => {
      const r = await openai.transcribeToolCall(p, args, 'translate')
      const body = r.body.body
      return { creditsRemaining: r.creditsRemaining, result: typeof body === 'string' ? { format: args.response_format, contentType: r.body.contentType, content: body } : body }
    },
    listModels: () => out(openai.listModels()),

    getUsage: async (p, q) => out(await usage.usage(p.accountId, q.limit ?? 50)),
  }
  return deps.operations.filter(op => op.mcp.tool).map(op => toolFor(op as Operation, runners[op.id as keyof Runners] as Run))
}
