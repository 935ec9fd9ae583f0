import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { TypeCheck } from '@sinclair/typebox/compiler'
import { Answer } from '../../http/answer'
import type { Caller } from '../../http/caller'
import type { Operation, OperationDefinition } from '../../http/contract'
import { ApiError, type ErrorDetail } from '../../http/errors'
import { compileCheck, valueErrorDetails } from '../../http/schemas'
import { textDetails } from '../../http/text-check'

/** What running a tool gives: the operation's response body, and the balance after a charge. */
interface ToolOutput {
  result: Record<string, unknown>
  creditsRemaining?: number
}

/** The JSON Schema of a tool's arguments, as MCP lists it (always an object). */
interface ToolInputSchema {
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
  run(caller: Caller, args: Record<string, unknown>): Promise<ToolOutput>
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
  if (!op.public) parts.push(`Needs the role ${op.role}${op.role === 'owner' ? '' : ' or above'} in the workspace.`)
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

type Run = Tool['run']

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

/**
 * What a handler's result is over MCP, which carries JSON only: JSON text parsed; nothing (a 204 of a
 * DELETE) as the path's arguments with `deleted: true`; an `Answer`'s body, a text body as its
 * `textFields` with `contentType` and `content` (a file of bytes, such as a .docx: `contentBase64`),
 * and a charge's balance beside it; a body as it is.
 */
function toolOutput(op: Operation, args: Record<string, unknown>, r: unknown): ToolOutput {
  if (typeof r === 'string') return { result: JSON.parse(r) as Record<string, unknown> }
  if (r === undefined) return { result: { ...pathArguments(op, args), deleted: true } }
  if (r instanceof Answer) {
    const o = r.options
    const result = typeof r.body === 'string'
      ? { ...o.textFields, contentType: o.contentType, content: r.body }
      : r.body instanceof Uint8Array
        ? { ...o.textFields, contentType: o.contentType, contentBase64: Buffer.from(r.body).toString('base64') }
        : (r.body as Record<string, unknown>)
    return o.creditsRemaining === undefined ? { result } : { result, creditsRemaining: o.creditsRemaining }
  }
  if (r instanceof Response) throw new Error(`${op.id} answers with a stream, which a tool cannot; it must not be offered over MCP (mcp: { tool: false })`)
  return { result: r as Record<string, unknown> }
}

function pathArguments(op: Operation, args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(op.params?.properties ?? {}).map(name => [name, args[name]]))
}

/**
 * One tool per operation the definitions offer to agents (`mcp.tool`), in their order, each running
 * the operation's own handler with the services the definitions asked for: the arguments are its
 * input (a multipart operation's, `mcp.arguments`, as `{ arguments }`).
 */
export function createTools(operations: readonly OperationDefinition[], services: unknown): Tool[] {
  return operations.filter(op => op.mcp.tool).map(op => {
    const run: Run = async (caller, args) => toolOutput(op, args, await op.handle(op.multipartBody ? { arguments: args } : args, caller, services))
    return toolFor(op, run)
  })
}
