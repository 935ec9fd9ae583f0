import { describe, expect, test } from 'bun:test'
import { createTestApp, fixedClock } from '../helpers/app'
import { SPEC_ERROR_STATUS, type SpecScope } from '../helpers/interface'
import { approvedCode, REDIRECT } from '../helpers/oauth'

/**
 * One admission path: the same credential, sent to the same operation over the HTTP API and over the
 * MCP endpoint, meets the same outcome (SPEC "Authentication" and "Rate limits"; DECISIONS "Machine
 * agents": MCP is authenticated by the same bearer credentials and offers one tool per operation).
 * Expectations are data; each case gets a fresh credential per surface, so the two never share a
 * rate-limit window.
 */

const READ_LIMIT = 3
const clock = fixedClock('2026-04-01T09:00:00.000Z')
const t = createTestApp({ clock, env: { NOTESVC_RATE_LIMITS: `read=${READ_LIMIT},write=100,processing=100` } })

let accounts = 0
const key = async (scopes?: SpecScope[]) => (await t.services.accounts.createKey({ email: `admission${++accounts}@example.com`, scopes })).key

/**
 * An OAuth access token from the authorization-code flow with PKCE, run against the service directly,
 * and how long it lives (`expires_in`, seconds).
 */
async function accessToken(scope: string): Promise<{ token: string; expiresIn: number }> {
  const oauth = t.services.oauth
  const client = await oauth.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
  const account = await t.services.accounts.ensureAccount(`oauth${++accounts}@example.com`)
  const code = await approvedCode(oauth, client.client_id, account.id, scope)
  const tokens = await oauth.token(new URLSearchParams({ grant_type: 'authorization_code', code: code.value, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: code.verifier }), null)
  return { token: tokens.access_token, expiresIn: tokens.expires_in }
}

/** What admission decided: an error code, or `ok` when the operation ran. */
type Outcome = string

interface Case {
  name: string
  /** the Authorization header to send (none when undefined); made fresh for each surface */
  authorization: () => string | undefined | Promise<string | undefined>
  /** calls of the same operation with the same credential before the one that counts */
  before?: number
  outcome: Outcome
}

/** Every case calls listNotes (scope notes:read, rate class read). */
const CASES: Case[] = [
  { name: 'a key with the needed scope', authorization: async () => `Bearer ${await key(['notes:read'])}`, outcome: 'ok' },
  { name: 'no credential', authorization: () => undefined, outcome: 'invalid_token' },
  { name: 'a malformed credential', authorization: () => 'Bearer not a key, not a token', outcome: 'invalid_token' },
  { name: 'a key under another scheme', authorization: async () => `Basic ${await key(['notes:read'])}`, outcome: 'invalid_token' },
  { name: 'an unknown key', authorization: () => `Bearer svc_live_${crypto.randomUUID().replaceAll('-', '')}`, outcome: 'invalid_token' },
  {
    name: 'a revoked key',
    authorization: async () => {
      const { key: token, info } = await t.services.accounts.createKey({ email: `revoked${++accounts}@example.com` })
      await t.services.accounts.revokeKey(info.id)
      return `Bearer ${token}`
    },
    outcome: 'invalid_token',
  },
  { name: 'a live OAuth access token', authorization: async () => `Bearer ${(await accessToken('notes:read')).token}`, outcome: 'ok' },
  {
    name: 'an expired OAuth access token',
    authorization: async () => {
      const { token, expiresIn } = await accessToken('notes:read')
      clock.advance((expiresIn + 1) * 1000)
      return `Bearer ${token}`
    },
    outcome: 'invalid_token',
  },
  { name: 'a key without the needed scope', authorization: async () => `Bearer ${await key(['folders:read', 'notes:write'])}`, outcome: 'insufficient_scope' },
  { name: 'an OAuth token without the needed scope', authorization: async () => `Bearer ${(await accessToken('folders:read')).token}`, outcome: 'insufficient_scope' },
  { name: 'a key past its read limit', authorization: async () => `Bearer ${await key(['notes:read'])}`, before: READ_LIMIT, outcome: 'rate_limited' },
]

const withAuthorization = (authorization: string | undefined, headers: Record<string, string> = {}) =>
  authorization === undefined ? headers : { ...headers, authorization }

/** GET /v1/notes. */
async function overHttp(authorization: string | undefined): Promise<Outcome> {
  const res = await t.app.handle(new Request('http://localhost/v1/notes', { headers: withAuthorization(authorization) }))
  const body = (await res.json()) as { error?: { code: string } }
  const outcome = body.error?.code ?? 'ok'
  expect({ outcome, status: res.status }).toEqual({ outcome, status: outcome === 'ok' ? 200 : SPEC_ERROR_STATUS[outcome]! })
  return outcome
}

let rpcId = 0
/**
 * The listNotes tool over POST /mcp. A credential refused before any tool runs is an HTTP error with
 * the envelope; a refused tool call is a tool result with `isError` and the envelope.
 */
async function overMcp(authorization: string | undefined): Promise<Outcome> {
  const message = { jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'listNotes', arguments: {} } }
  const headers = withAuthorization(authorization, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' })
  const res = await t.app.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }))
  const body = (await res.json()) as { error?: { code: string }; result?: { isError?: boolean; structuredContent?: { error?: { code: string } } } }
  if (res.status !== 200) {
    expect(res.status).toBe(SPEC_ERROR_STATUS[body.error!.code]!)
    return body.error!.code
  }
  return body.result?.isError ? body.result.structuredContent!.error!.code : 'ok'
}

const SURFACES = [['HTTP API', overHttp], ['MCP endpoint', overMcp]] as const

describe('the same credential meets the same admission over HTTP and MCP', () => {
  const rows = CASES.flatMap(c => SURFACES.map(([surface, call]) => [`${c.name} → ${c.outcome} (${surface})`, c, call] as const))

  test.each(rows)('%s', async (_name, c, call) => {
    const authorization = await c.authorization()
    for (let i = 0; i < (c.before ?? 0); i++) expect(await call(authorization)).toBe('ok')
    expect(await call(authorization)).toBe(c.outcome)
  })
})
