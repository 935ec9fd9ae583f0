/**
 * The types of a method's input and answer, read from one operation of openapi-typescript's `paths`:
 * the input is the path parameters, the query and the JSON body in one flat object (as the server's
 * handlers take them); the answer is the union of the success bodies.
 */

/** How the generated table describes an operation (generated/operations.ts). */
export interface OperationSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  pathParams: readonly string[]
  queryParams: readonly string[]
  body: 'json' | 'multipart' | null
  pagination: 'offset' | 'cursor' | null
}

/** Per call: a signal to abort it, and headers to add (`If-Match`, `Notesvc-Scenario`, …). */
export interface CallOptions {
  signal?: AbortSignal
  headers?: Record<string, string>
}

/** An object type written out as one, so an error names its fields rather than an intersection. */
type Flat<T> = { [K in keyof T]: T[K] }
type Nothing = {}
type Part<T> = [NonNullable<T>] extends [never] ? Nothing : NonNullable<T>

type ParametersOf<Op> = Op extends { parameters: infer P } ? P : Nothing
type PathOf<Op> = ParametersOf<Op> extends { path?: infer X } ? Part<X> : Nothing
type QueryOf<Op> = ParametersOf<Op> extends { query?: infer X } ? Part<X> : Nothing
type BodyOf<Op> = Op extends { requestBody?: infer RB }
  ? [NonNullable<RB>] extends [never] ? Nothing
    : NonNullable<RB> extends { content: { 'application/json': infer B } } ? B
      : NonNullable<RB> extends { content: { 'multipart/form-data': unknown } } ? { form: FormData }
        : Nothing
  : Nothing

export type InputOf<Op> = Flat<PathOf<Op> & QueryOf<Op> & BodyOf<Op>>

/** Media types the client reads as text; JSON is parsed, anything else is a Blob. */
type TextType = `text/${string}` | 'application/x-subrip' | 'application/x-ndjson'
type ContentBody<C> = { [K in keyof C]: K extends 'application/json' ? C[K] : K extends TextType ? string : Blob }[keyof C]
type ResponseBody<R> = R extends { content: infer C } ? ([C] extends [never] ? undefined : ContentBody<C>) : undefined
type Success = 200 | 201 | 202 | 203 | 204 | 206
type Responses<Op> = Op extends { responses: infer R } ? R : never

export type OutputOf<Op> = { [S in keyof Responses<Op> & Success]: ResponseBody<Responses<Op>[S]> }[keyof Responses<Op> & Success]

/** One item of a listed page. */
export type ItemOf<Op> = OutputOf<Op> extends { data: (infer I)[] } ? I : never

/** A paginator's input: the operation's, without what the paginator moves itself. */
export type PageInputOf<Op, Style extends 'offset' | 'cursor'> = Flat<Omit<InputOf<Op>, Style extends 'offset' ? 'offset' : 'cursor'>>
