import { ApiError, type ErrorCode } from './errors'

/**
 * Sandbox scenarios (docs/decisions.md "Sandbox scenarios"): with a sandbox key, a named outcome a
 * client's own tests can provoke, like a payment provider's test cards. Named by an upload's file name
 * (`insufficient_credits.wav`, any case, any extension) or a transcription URL's last path segment, or
 * by the header `Notesvc-Scenario: <name>` on any operation. Live keys ignore every scenario.
 */
export const SANDBOX_SCENARIOS = ['insufficient_credits', 'rate_limited', 'upstream_failure', 'note_error', 'slow', 'webhook_retry'] as const
export type SandboxScenario = (typeof SANDBOX_SCENARIOS)[number]

/** What each scenario does, for the API index (GET /v1) and the docs. */
export const SCENARIO_OUTCOMES: Record<SandboxScenario, string> = {
  insufficient_credits: '402 insufficient_credits on the charging call (completeUpload, createTranscription, createSummary, …); nothing charged',
  rate_limited: '429 rate_limited with Retry-After: 1; an upload\'s completion is refused only until 1 s after the upload was created, so a client that retries then succeeds',
  upstream_failure: '502 upstream_failure on the charging call; nothing charged',
  note_error: 'completeUpload answers 202; the note ends Error with errorCode transcription_failed and a note.failed webhook',
  slow: 'completeUpload answers 202; the note stays Summarizing for about 3 s, its progress 0.25, 0.5, 0.75 at stage transcribing, then Done',
  webhook_retry: 'the first attempt of each of the note\'s webhook events is recorded as failed and retried 1 s later: the receiver gets the same webhook-id twice',
}

/** The request header that names a scenario. */
export const SCENARIO_HEADER = 'notesvc-scenario'

/** The scenarios that are an error answer, and the code of each. */
const ERROR_SCENARIOS: Partial<Record<SandboxScenario, ErrorCode>> = {
  insufficient_credits: 'insufficient_credits',
  rate_limited: 'rate_limited',
  upstream_failure: 'upstream_failure',
}

/** What every credentialed operation may answer (http/openapi.ts COMMON_ERRORS), of the scenarios' codes. */
const COMMON_SCENARIO_CODES: readonly ErrorCode[] = ['rate_limited']

/**
 * Scenarios an operation answers itself rather than the guard: an upload's completion refuses
 * `rate_limited` only until 1 s after the upload's creation (upload-completion.ts).
 */
const ANSWERED_BY_OPERATION: Record<string, readonly SandboxScenario[]> = { completeUpload: ['rate_limited'] }

const asScenario = (name: string): SandboxScenario | null => {
  const lower = name.trim().toLowerCase()
  return (SANDBOX_SCENARIOS as readonly string[]).includes(lower) ? (lower as SandboxScenario) : null
}

/** The scenario a header value names, or null (absent, or not a scenario's name). */
export const scenarioOfHeader = (value: string | null | undefined): SandboxScenario | null => (value ? asScenario(value) : null)

/**
 * The scenario a file name's stem names (`Insufficient_Credits.WAV` → insufficient_credits), or null.
 * A URL's or a path's last segment counts; its query and fragment do not.
 */
export function scenarioOfFileName(name: string | null | undefined): SandboxScenario | null {
  if (!name) return null
  const last = name.replace(/[?#].*$/, '').split(/[/\\]/).pop() ?? ''
  return asScenario(last.replace(/\.[^.]*$/, ''))
}

/** Whether a scenario is an error answer (402, 429, 502) rather than something done to a note. */
export const isErrorScenario = (scenario: SandboxScenario | null): scenario is SandboxScenario => scenario !== null && ERROR_SCENARIOS[scenario] !== undefined

/** The answer of an error scenario, with a message that says how to get the normal sandbox answer. */
export function scenarioError(scenario: SandboxScenario): ApiError {
  const code = ERROR_SCENARIOS[scenario]
  if (!code) throw new Error(`sandbox scenario ${scenario} is not an error answer`)
  const how = `This is the sandbox scenario ${scenario} (docs/decisions.md "Sandbox scenarios"); nothing was charged. Name the file otherwise, or drop the Notesvc-Scenario header, for the normal sandbox answer.`
  if (code === 'rate_limited') {
    return new ApiError(code, `Too many requests: retry after 1 second. ${how}`, { retryAfterSeconds: 1, headers: { 'retry-after': '1' } })
  }
  if (code === 'insufficient_credits') return new ApiError(code, `The account's credits do not cover this operation. ${how}`)
  return new ApiError(code, `The speech or summary engine failed to answer. ${how}`)
}

/** What the guard reads of an operation: its id, whether it is public, the error codes it declares. */
interface ScenarioTerms {
  readonly id: string
  readonly public?: boolean
  readonly errors?: readonly ErrorCode[]
}

/**
 * Whether an error scenario fires on an operation: only where the operation's declared errors (or
 * the common ones) include its code, so the OpenAPI document stays true; never on the public
 * operations, and not where the operation answers the scenario itself.
 */
export function errorScenarioFires(scenario: SandboxScenario, terms: ScenarioTerms): boolean {
  const code = ERROR_SCENARIOS[scenario]
  if (!code || terms.public) return false
  if (ANSWERED_BY_OPERATION[terms.id]?.includes(scenario)) return false
  return COMMON_SCENARIO_CODES.includes(code) || (terms.errors ?? []).includes(code)
}
