/**
 * The standing fuzz's run against one server (test/system/fuzz.test.ts): each generated request
 * (fuzz-requests.ts) sent as many times as it says, one at a time, while another account's
 * GET /v1/health is polled from a process of its own (test/fixtures/health-poller.ts). A request
 * fails the run when its answer is a 5xx other than a documented one, an error outside the SPEC's
 * envelope, HTML from an API route, no answer, an answer after more than 2 s, or when a health poll
 * that overlapped it took more than 250 ms and did again when it was sent again (the server's event
 * loop was held: a stall, which one request's share of two cores does not explain). fast-check then shrinks the request, for a
 * bounded time, and the failure names the smallest one found with its answer.
 */
import fc from 'fast-check'
import { jsonText, RawJson } from './fuzz-schema'
import { fuzzArbitrary, type Auth, type FuzzBody, type FuzzRequest, type Libraries, type Operation } from './fuzz-requests'
import type { OpenApiDocument } from './fuzz-schema'
import { ROOT } from './process'

const LATENCY_BOUND_MS = 2_000
const HEALTH_BOUND_MS = 250
/** how long fast-check may shrink a failure (each try sends requests again; a stall costs seconds) */
const SHRINK_BUDGET_MS = 20_000

/** SPEC.md "Errors": each code and its status; `service_unavailable` beside them (docs/api.md, a database out of reach). */
const ENVELOPE_CODES: Record<string, number> = {
  invalid_request: 400, invalid_token: 401, insufficient_credits: 402, insufficient_scope: 403, not_found: 404,
  method_not_allowed: 405, conflict: 409, payload_too_large: 413, unsupported_media_type: 415, content_policy: 422,
  rate_limited: 429, internal_error: 500, upstream_failure: 502, service_unavailable: 503,
}
/** SPEC.md "Errors", rule 5: the operations a 502 upstream_failure is documented on (and askLibrary, priced and answered as a question). */
const UPSTREAM_OPERATIONS = ['askNoteQuestion', 'askLibrary', 'completeUpload', 'createTranscription', 'createSummary', 'createYoutubeSummary']

export interface Answer {
  status: number
  contentType: string
  /** the first 200 bytes of the body */
  head: string
  body: any
  headers: Headers
  ms: number
  /** why there was no answer (status 0) */
  error?: string
}

function requestInit(r: FuzzRequest, keys: Record<Auth, string | undefined>): RequestInit {
  const headers: Record<string, string> = {}
  const key = keys[r.auth]
  if (key) headers.authorization = `Bearer ${key}`
  let body: BodyInit | undefined
  if (r.body && 'json' in r.body) {
    body = jsonText(r.body.json) ?? ''
    if (r.body.contentType) headers['content-type'] = r.body.contentType
  } else if (r.body) {
    const form = new FormData()
    for (const [name, v] of r.body.form) {
      if (typeof v === 'string') form.append(name, v)
      else if (v instanceof RawJson) form.append(name, v.text)
      else form.append(name, new Blob([v.file as Uint8Array<ArrayBuffer>], { type: v.type }), 'recording.wav')
    }
    body = form
  }
  return { method: r.method, headers, body, signal: AbortSignal.timeout(60_000) }
}

/** Sends one request and reads its whole answer, timed from the first byte sent to the last read. */
async function send(base: string, r: FuzzRequest, keys: Record<Auth, string | undefined>): Promise<Answer> {
  const init = requestInit(r, keys)
  const started = performance.now()
  try {
    const res = await fetch(base + r.url, init)
    const bytes = new Uint8Array(await res.arrayBuffer())
    const ms = performance.now() - started
    const text = new TextDecoder().decode(bytes)
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', head: new TextDecoder().decode(bytes.subarray(0, 200)), body, headers: res.headers, ms }
  } catch (err) {
    return { status: 0, contentType: '', head: '', body: undefined, headers: new Headers(), ms: performance.now() - started, error: String(err) }
  }
}

/** What is wrong with the error envelope of `a` (SPEC.md "Errors"), or null. */
function envelopeProblem(a: Answer): string | null {
  const e = a.body?.error
  if (!a.contentType.includes('application/json')) return `content-type ${JSON.stringify(a.contentType)}, not application/json`
  if (typeof e !== 'object' || e === null) return 'no "error" object'
  if (ENVELOPE_CODES[e.code] !== a.status) return `code ${JSON.stringify(e.code)} with status ${a.status}`
  if (e.type !== 'invalid_request_error') return `type ${JSON.stringify(e.type)}`
  if (typeof e.message !== 'string' || !/\S/.test(e.message)) return 'no message'
  if (typeof e.doc_url !== 'string' || !e.doc_url.endsWith(`/errors#${e.code}`)) return `doc_url ${JSON.stringify(e.doc_url)}`
  if (e.details !== undefined && !(Array.isArray(e.details) && e.details.every((d: any) => typeof d?.field === 'string' && typeof d?.issue === 'string'))) return 'details not a list of {field, issue}'
  if (e.request_id !== undefined && e.request_id !== a.headers.get('x-request-id')) return 'request_id differs from X-Request-Id'
  if (a.status === 429 && !a.headers.get('retry-after')) return '429 without Retry-After'
  return null
}

/** Why the answer to `r` fails the fuzz, or null. */
export function problemOf(r: FuzzRequest, a: Answer): string | null {
  if (a.status === 0) return `no answer (${a.error})`
  if (/text\/html/i.test(a.contentType) || /^\s*</.test(a.head)) return `HTML from an API route (status ${a.status})`
  if (a.status >= 500) {
    const documented = (a.status === 503 && a.body?.error?.code === 'service_unavailable') || (a.status === 502 && a.body?.error?.code === 'upstream_failure' && UPSTREAM_OPERATIONS.includes(r.operation))
    if (!documented) return `status ${a.status}`
  }
  if (a.status >= 400) {
    const bad = envelopeProblem(a)
    if (bad) return `error outside the envelope: ${bad}`
  }
  if (a.ms > LATENCY_BOUND_MS) return `answered after ${(a.ms / 1000).toFixed(2)} s (bound ${LATENCY_BOUND_MS / 1000} s)`
  return null
}

const excerpt = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n)}… (${s.length.toLocaleString('en-US')} characters)` : s)
const visible = (s: string) => JSON.stringify(s).slice(1, -1)

function bodyText(b: FuzzBody): string {
  if ('json' in b) return `${b.contentType ?? '(no content-type)'} ${visible(excerpt(jsonText(b.json) ?? ''))}`
  return `multipart ${b.form.map(([k, v]) => `${visible(k)}=${typeof v === 'string' ? visible(excerpt(v, 60)) : v instanceof RawJson ? v.label : `<file ${v.file.length} bytes>`}`).join(' ')}`
}

/** The request as a failure message shows it: method, path, query, credential, body excerpt. */
function describeRequest(r: FuzzRequest): string {
  return `${r.operation}: ${r.method} ${excerpt(r.url, 300)} with ${r.auth} credential, sent ${r.repeat}×${r.body ? `\n  body: ${bodyText(r.body)}` : ''}`
}

function describeAnswer(a: Answer): string {
  return `status ${a.status} after ${a.ms.toFixed(0)} ms, ${a.contentType || 'no content-type'}: ${visible(a.head)}`
}

/** Another account's health polls (test/fixtures/health-poller.ts), read as they come. */
class HealthPoller {
  readonly polls: { sent: number; done: number; status: number }[] = []
  private proc: ReturnType<typeof Bun.spawn> | null = null

  start(base: string, key: string) {
    const proc = Bun.spawn(['bun', 'test/fixtures/health-poller.ts', base, key], { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' })
    this.proc = proc
    void (async () => {
      let rest = ''
      for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
        rest += new TextDecoder().decode(chunk)
        const lines = rest.split('\n')
        rest = lines.pop()!
        for (const l of lines) {
          const [sent, done, status] = l.split(' ').map(Number)
          this.polls.push({ sent: sent!, done: done!, status: status! })
        }
      }
    })()
  }

  /** Waits until a poll sent at or after `t` has been answered: every poll before it is then complete. */
  async coveredUntil(t: number, ms = 30_000) {
    const deadline = performance.now() + ms
    while ((this.polls.at(-1)?.sent ?? 0) < t && performance.now() < deadline) await Bun.sleep(1)
  }

  /** The longest poll that overlapped [from, to] (epoch ms), and the non-200 answers among them. */
  during(from: number, to: number): { maxMs: number; failed: number } {
    let maxMs = 0
    let failed = 0
    for (let i = this.polls.length - 1; i >= 0; i--) {
      const p = this.polls[i]!
      if (p.done < from) break
      if (p.sent > to) continue
      maxMs = Math.max(maxMs, p.done - p.sent)
      if (p.status !== 200) failed++
    }
    return { maxMs, failed }
  }

  async stop() {
    this.proc?.kill()
    await this.proc?.exited
  }
}

export interface FuzzOptions {
  name: string
  base: string
  doc: OpenApiDocument
  ops: Operation[]
  libraries: Libraries
  keys: Record<Auth, string | undefined>
  /** another account's key, for the health polls */
  victimKey: string
  seed: number
  runs: number
  wav: Uint8Array
  /** print each request and its answer (NOTESVC_FUZZ_TRACE=1) */
  trace?: boolean
}

export interface FuzzOutcome {
  requests: number
  statuses: Map<number, number>
  /** the statuses of the answers to each operation */
  perOperation: Map<string, Map<number, number>>
  maxLatencyMs: number
  maxHealthMs: number
  /** slow health polls that did not come back when their request was sent again (not stalls; printed) */
  unconfirmedStalls: { operation: string; ms: number }[]
  /** the shrunk counterexample and what was wrong, when the run failed */
  failure: string | null
}

const epochNow = () => performance.timeOrigin + performance.now()

/** Sends `r` once, counts its answer in `outcome`, and measures the health polls that overlapped it. */
async function sendMeasured(o: FuzzOptions, poller: HealthPoller, r: FuzzRequest, outcome: FuzzOutcome) {
  const from = epochNow()
  const a = await send(o.base, r, o.keys)
  const to = epochNow()
  if (o.trace) console.log(`${describeRequest(r)}\n  → ${describeAnswer(a).slice(0, 300)}`)
  await poller.coveredUntil(to)
  const health = poller.during(from, to)
  outcome.requests++
  outcome.statuses.set(a.status, (outcome.statuses.get(a.status) ?? 0) + 1)
  const ofOperation = outcome.perOperation.get(r.operation) ?? new Map<number, number>()
  outcome.perOperation.set(r.operation, ofOperation.set(a.status, (ofOperation.get(a.status) ?? 0) + 1))
  outcome.maxLatencyMs = Math.max(outcome.maxLatencyMs, a.ms)
  outcome.maxHealthMs = Math.max(outcome.maxHealthMs, health.maxMs)
  return { a, health }
}

/**
 * A slow health poll is a stall when sending the request again holds it again: a request whose cost
 * holds the event loop does so each time, where a moment the machine's other work took the cores
 * does not come back with it. Up to two more sends; the slowest poll of each, or null when none was slow.
 */
async function stallAgain(o: FuzzOptions, poller: HealthPoller, r: FuzzRequest, outcome: FuzzOutcome): Promise<number[] | null> {
  const seen: number[] = []
  for (let i = 0; i < 2; i++) {
    const { health } = await sendMeasured(o, poller, r, outcome)
    seen.push(health.maxMs)
    if (health.maxMs > HEALTH_BOUND_MS) return seen
  }
  return null
}

/** Runs the fuzz against a server at `base`; the outcome says whether and how it failed. */
export async function runFuzz(o: FuzzOptions): Promise<FuzzOutcome> {
  const outcome: FuzzOutcome = { requests: 0, statuses: new Map(), perOperation: new Map(), maxLatencyMs: 0, maxHealthMs: 0, unconfirmedStalls: [], failure: null }
  const poller = new HealthPoller()
  poller.start(o.base, o.victimKey)
  let firstFailureAt = 0
  let firstFailure = ''
  const property = fc.asyncProperty(fuzzArbitrary(o.doc, o.ops, o.libraries, o.wav), async r => {
    if (firstFailureAt && performance.now() - firstFailureAt > SHRINK_BUDGET_MS) return true // shrinking has had its time
    for (let i = 0; i < r.repeat; i++) {
      const { a, health } = await sendMeasured(o, poller, r, outcome)
      let problem = problemOf(r, a) ?? (health.failed ? `another account's GET /v1/health failed ${health.failed}× meanwhile` : null)
      if (!problem && health.maxMs > HEALTH_BOUND_MS) {
        const again = await stallAgain(o, poller, r, outcome)
        if (again) problem = `another account's GET /v1/health took ${health.maxMs.toFixed(0)} ms meanwhile, and ${again.map(ms => `${ms.toFixed(0)} ms`).join(', then ')} when sent again (bound ${HEALTH_BOUND_MS} ms)`
        else outcome.unconfirmedStalls.push({ operation: r.operation, ms: health.maxMs })
      }
      if (problem) {
        const message = `${problem}\n  request (${i + 1} of ${r.repeat}): ${describeRequest(r)}\n  answer: ${describeAnswer(a)}`
        if (!firstFailureAt) [firstFailureAt, firstFailure] = [performance.now(), message]
        throw new Error(message)
      }
    }
    return true
  })
  try {
    const details = await fc.check(property, { seed: o.seed, numRuns: o.runs })
    if (details.failed) {
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
      outcome.failure = `fuzz ${o.name} failed (seed ${o.seed}, fast-check path ${details.counterexamplePath}, after ${details.numRuns} runs and ${details.numShrinks} shrinks):\n  ${error}`
        + (firstFailure && firstFailure !== error ? `\nfirst seen, before shrinking, as:\n  ${firstFailure}` : '')
    }
  } finally {
    await poller.stop()
  }
  return outcome
}

const n = (x: number) => x.toLocaleString('en-US')
const statusList = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]).map(([s, c]) => `${s}: ${n(c)}`).join(', ')

/** The statuses of each operation's answers, one line each (NOTESVC_FUZZ_VERBOSE=1). */
export function perOperationLines(r: FuzzOutcome): string {
  return [...r.perOperation].sort((a, b) => a[0].localeCompare(b[0])).map(([op, m]) => `  ${op}: ${statusList(m)}`).join('\n')
}

/** The one summary line of a run. */
export function summaryLine(o: FuzzOptions, r: FuzzOutcome): string {
  const count = (which: (s: number) => boolean) => [...r.statuses].filter(([s]) => which(s)).reduce((t, [, c]) => t + c, 0)
  const statuses = statusList(r.statuses)
  return `fuzz ${o.name}: ${o.ops.length} operations, ${n(r.requests)} requests, seed ${o.seed}, ${n(count(s => s === 500))} × 500, ${n(count(s => s > 500))} × 502/503, max latency ${(r.maxLatencyMs / 1000).toFixed(2)} s, max health ${r.maxHealthMs.toFixed(0)} ms${r.unconfirmedStalls.length ? ` (${r.unconfirmedStalls.length} slow polls not repeated when sent again: ${r.unconfirmedStalls.map(u => `${u.operation} ${u.ms.toFixed(0)} ms`).join(', ')})` : ''} (statuses ${statuses})`
}
