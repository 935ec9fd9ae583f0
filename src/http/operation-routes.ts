import { Elysia } from 'elysia'
import { Answer } from './answer'
import type { Caller } from './caller'
import { routeOptions, type OperationDefinition, type ServicesOf } from './contract'
import type { Principal } from './principal'
import { parseQueryFromURL } from 'elysia/parse-query'
import { arrayQueryParams, queryValidator } from './schemas'

/** What Elysia gives a handler to set the answer's status and headers with */
type ResponseSet = { status?: number | string; headers: Record<string, string | number> }
type Handle = (input: unknown, caller: Caller<Principal | null>, services: unknown) => unknown

const JSON_TEXT = 'application/json; charset=utf-8'
/** The input of an operation that takes none */
const NO_INPUT = Object.freeze({})

/** The first success status an operation declares: its answer's, unless the handler says another. */
function firstStatus(op: OperationDefinition): number {
  return Math.min(...Object.keys(op.responses).map(Number))
}

/**
 * A handler's result as Elysia answers it: ready JSON text with its content type, nothing as 204, an
 * `Answer` with its status and headers, anything else (a body, a ready Response) as it is, under the
 * operation's first declared status.
 */
function respond(set: ResponseSet, status: number, r: unknown): unknown {
  if (typeof r === 'string') {
    set.headers['content-type'] = JSON_TEXT
    if (status !== 200) set.status = status
    return r
  }
  if (r === undefined) {
    set.status = 204
    return new Response(null, { status: 204 })
  }
  if (r instanceof Answer) {
    const o = r.options
    set.status = o.status ?? status
    if (o.creditsRemaining !== undefined) set.headers['x-credits-remaining'] = String(o.creditsRemaining)
    if (o.contentType !== undefined) set.headers['content-type'] = o.contentType
    if (o.headers) Object.assign(set.headers, o.headers)
    return r.body
  }
  if (status !== 200) set.status = status
  return r
}

/** `respond` once the result is there: at once when the handler answered at once (a kept page), with no turn through promises. */
function settle(set: ResponseSet, status: number, r: unknown): unknown {
  return r instanceof Promise ? r.then(value => respond(set, status, value)) : respond(set, status, r)
}

/**
 * The Elysia handler of one operation. Elysia reads a handler's parameters to decide what to parse
 * for its route (its "sucrose"), and parses everything for a handler that takes the whole context:
 * so each shape below names exactly what it reads, as the hand-written handlers did. `query` only
 * where the operation declares one; the body (already named by the guard, `set` too) and `request`
 * cost nothing more; never `server` or `headers`. `caller` is the guard's (http/auth.ts). Elysia
 * awaits what these return (it takes a handler that returns a call's value for an asynchronous one).
 */
function elysiaHandler(op: OperationDefinition, services: unknown): (ctx: never) => unknown {
  const handle = op.handle.bind(op) as Handle
  const status = firstStatus(op)
  if (op.multipartBody) {
    return (({ caller, request, set }: { caller: Caller<Principal | null>; request: Request; set: ResponseSet }) =>
      settle(set, status, handle({ form: request }, caller, services))) as never
  }
  const input = inputOf(op)
  const arrays = op.query ? arrayQueryParams(op.query) : undefined
  if (arrays) {
    // repeated parameters (`tag=a&tag=b`) read from the URL as arrays, the others as Elysia reads them
    return (({ caller, params, body, set, request }: { caller: Caller<Principal | null>; params: unknown; body: unknown; set: ResponseSet; request: Request }) => {
      const qi = request.url.indexOf('?')
      const query = qi === -1 ? {} : parseQueryFromURL(request.url, qi + 1, arrays)
      return settle(set, status, handle(input(params, query, body), caller, services))
    }) as never
  }
  if (op.query) {
    return (({ caller, params, query, body, set }: { caller: Caller<Principal | null>; params: unknown; query: Record<string, unknown>; body: unknown; set: ResponseSet }) =>
      settle(set, status, handle(input(params, query, body), caller, services))) as never
  }
  return (({ caller, params, body, set }: { caller: Caller<Principal | null>; params: unknown; body: unknown; set: ResponseSet }) =>
    settle(set, status, handle(input(params, undefined, body), caller, services))) as never
}

/**
 * How a request's parts become the handler's one input object: the part itself when the operation
 * declares only one (nothing copied), else query, body and path parameters merged (as an MCP tool's
 * arguments are). The query is checked and typed by `queryValidator` (numbers become numbers), but
 * for a public operation, which reads nothing of the database and refuses nothing (health's `detail`),
 * it is the query as sent.
 */
function inputOf(op: OperationDefinition): (params: unknown, query: Record<string, unknown> | undefined, body: unknown) => unknown {
  const readQuery = !op.query ? undefined : op.public ? (query: Record<string, unknown>) => query : queryValidator(op.query)
  const parts = [op.params, op.query, op.body].filter(Boolean).length
  if (parts === 0) return () => NO_INPUT
  if (parts === 1) {
    if (readQuery) return (_params, query) => readQuery(query!)
    return op.params ? params => params : (_params, _query, body) => body
  }
  // the path's parameters last: they name what is acted on, whatever a body holds
  return (params, query, body) => ({
    ...(readQuery ? (readQuery(query!) as object) : {}),
    ...(op.body ? (body as object) : {}),
    ...(op.params ? (params as object) : {}),
  })
}

/**
 * The routes of every operation given (src/operations.ts), each from its definition alone: path,
 * method, validation (`routeOptions`) and handler, which gets the services the definitions asked for;
 * behind the guard (http/auth.ts), which admits the caller before anything is read.
 */
export function operationRoutes<const Ops extends readonly OperationDefinition[]>(guard: Elysia<any, any, any, any, any, any, any>, operations: Ops, services: ServicesOf<Ops>) {
  const app = new Elysia({ name: 'operation-routes' }).use(guard)
  for (const op of operations) app.route(op.method, op.path, elysiaHandler(op, services) as never, routeOptions(op) as never)
  return app
}
