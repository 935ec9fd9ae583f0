/**
 * The operations table of the client, read from the OpenAPI document, and its source text: for each
 * operationId its method, path, which input fields go to the path and to the query, the body's kind,
 * and whether it lists pages (`pagination` in its answer); and one typed method per operationId whose
 * types come from openapi-typescript's `paths`.
 */
type Json = Record<string, unknown>

export interface OperationDescription {
  id: string
  summary: string
  method: string
  path: string
  pathParams: string[]
  queryParams: string[]
  body: 'json' | 'multipart' | null
  /** some field of the input is required (a path parameter, a required query parameter or body field) */
  inputRequired: boolean
  /** how its pages are walked: `offset`/`limit` with `hasMore`, or `cursor` = `nextCursor` */
  pagination: 'offset' | 'cursor' | null
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

function resolver(document: Json) {
  return function resolved(x: unknown): Json {
    const ref = (x as Json | undefined)?.$ref
    if (typeof ref !== 'string') return (x ?? {}) as Json
    const at = ref.replace(/^#\//, '').split('/').reduce<unknown>((o, k) => (o as Json)[k], document)
    return resolved(at)
  }
}

function paginationOf(op: Json, resolved: (x: unknown) => Json): OperationDescription['pagination'] {
  const ok = resolved((op.responses as Json)['200'])
  const schema = resolved(((ok.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema)
  const pagination = resolved((schema.properties as Json | undefined)?.pagination)
  const fields = (pagination.properties ?? {}) as Json
  if ('nextCursor' in fields) return 'cursor'
  if ('offset' in fields) return 'offset'
  return null
}

function describe(id: string, method: string, path: string, op: Json, resolved: (x: unknown) => Json): OperationDescription {
  const params = (op.parameters ?? []) as { name: string; in: string; required?: boolean }[]
  const pathParams = params.filter(p => p.in === 'path').map(p => p.name)
  const queryParams = params.filter(p => p.in === 'query').map(p => p.name)
  const content = (resolved(op.requestBody).content ?? {}) as Json
  const body = 'application/json' in content ? 'json' : 'multipart/form-data' in content ? 'multipart' : null
  const bodySchema = body ? resolved((content[body === 'json' ? 'application/json' : 'multipart/form-data'] as Json).schema) : {}
  const bodyFields = Object.keys((bodySchema.properties ?? {}) as Json)
  const clash = bodyFields.filter(f => pathParams.includes(f) || queryParams.includes(f))
  if (clash.length) throw new Error(`${id}: ${clash.join(', ')} is both a body field and a parameter; the client's flat input cannot tell them apart`)
  const required = params.some(p => p.required) || (body === 'multipart') || ((bodySchema.required as unknown[] | undefined)?.length ?? 0) > 0
  return {
    id, method: method.toUpperCase(), path, pathParams, queryParams, body, inputRequired: required,
    summary: String(op.summary ?? id), pagination: paginationOf(op, resolved),
  }
}

/** Every operation of the document, in its order. */
export function describeOperations(document: Json): OperationDescription[] {
  const resolved = resolver(document)
  const list: OperationDescription[] = []
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined
      if (op) list.push(describe(String(op.operationId), method, path, op, resolved))
    }
  }
  return list
}

const quoted = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
const list = (xs: string[]) => `[${xs.map(quoted).join(', ')}]`

export function operationsSource(ops: OperationDescription[]): string {
  const ref = (o: OperationDescription) => `paths[${quoted(o.path)}][${quoted(o.method.toLowerCase())}]`
  const doc = (o: OperationDescription) => `  /** ${o.summary.replaceAll('*/', '*\\/')} (\`${o.method} ${o.path}\`) */`
  const table = ops.map(o => `  ${o.id}: { method: ${quoted(o.method)}, path: ${quoted(o.path)}, pathParams: ${list(o.pathParams)}, queryParams: ${list(o.queryParams)}, body: ${o.body ? quoted(o.body) : 'null'}, pagination: ${o.pagination ? quoted(o.pagination) : 'null'} },`)
  const methods = ops.flatMap(o => [doc(o), `  ${o.id}(input${o.inputRequired ? '' : '?'}: InputOf<${ref(o)}>, options?: CallOptions): Promise<OutputOf<${ref(o)}>>`])
  const pagers = ops.filter(o => o.pagination).flatMap(o => [
    `  /** Every item of ${o.id}, page after page (\`${o.method} ${o.path}\`) */`,
    `  ${o.id}(input${o.inputRequired ? '' : '?'}: PageInputOf<${ref(o)}, ${quoted(o.pagination!)}>, options?: CallOptions): AsyncIterableIterator<ItemOf<${ref(o)}>>`,
  ])
  return [
    "import type { paths } from './openapi.js'",
    "import type { CallOptions, InputOf, ItemOf, OperationSpec, OutputOf, PageInputOf } from '../types.js'",
    '',
    '/** How each operation is called: its method and path, the input fields sent in the path and the query (the rest is the body), and how its pages are walked. */',
    `export const OPERATION_TABLE = {\n${table.join('\n')}\n} as const satisfies Record<string, OperationSpec>`,
    '',
    'export type OperationId = keyof typeof OPERATION_TABLE',
    '',
    '/** One method per operationId: the input is the path parameters, the query and the body in one object. */',
    `export interface OperationMethods {\n${methods.join('\n')}\n}`,
    '',
    '/** For each operation that answers a page (`pagination`), an async iterator over every item of every page. */',
    `export interface Paginators {\n${pagers.join('\n')}\n}`,
    '',
  ].join('\n')
}
