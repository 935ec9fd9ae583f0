/** What an answer says besides its body (src/http/answer.ts `Answer`). */
interface AnswerOptions {
  /** one of the operation's declared success statuses, when not the first (`completeUpload`: 202 or 200) */
  status?: number
  /** the balance after a charge: `X-Credits-Remaining` over HTTP, the result's `notesvc/creditsRemaining` over MCP */
  creditsRemaining?: number
  /** the body's media type when it is not plain JSON: a text export (`text/vtt`, …), or JSON OpenAI's way */
  contentType?: string
  /** further HTTP headers (a text export's `Content-Disposition`) */
  headers?: Record<string, string>
  /**
   * For a text body, what a JSON-only transport (MCP) answers instead: these fields, then `contentType`
   * and `content` (the text).
   */
  textFields?: Record<string, unknown>
}

/**
 * An operation's answer when a bare body does not say all of it (src/http/contract.ts `Result`): a
 * charge's balance, another declared status, a text body, headers. Each transport renders it its
 * own way (http/operation-routes.ts, modules/mcp/tools.ts).
 */
export class Answer<B = unknown> {
  constructor(readonly body: B, readonly options: AnswerOptions = {}) {}
}

/** A charging operation's answer: its body, and the balance left (`X-Credits-Remaining`). */
export function charged<B>(r: { body: B; creditsRemaining: number }, options: Omit<AnswerOptions, 'creditsRemaining'> = {}): Answer<B> {
  return new Answer(r.body, { ...options, creditsRemaining: r.creditsRemaining })
}
