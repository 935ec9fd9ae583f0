/**
 * What a request is, for the metrics: the operation id of the operations table (`listNotes`), or the
 * route template outside the API (`/signin`, `/v1/uploads/:id/file`), never a path with an id. Set on
 * the Request itself by whatever routed it (the guard, which runs for every request a route matched;
 * the kept first page, answered before routing) and read by the server when the response is ready
 * (http/listen.ts `observe`); a request no route matched carries none. A symbol property on the
 * object: a few nanoseconds, where an Elysia hook on every request cost several microseconds.
 */
const LABEL = Symbol('notesvc.requestLabel')

type Labelled = Request & { [LABEL]?: string }

export function labelRequest(request: Request, label: string): void {
  ;(request as Labelled)[LABEL] = label
}

export function requestLabel(request: Request): string | undefined {
  return (request as Labelled)[LABEL]
}
