/**
 * The audit log's routes (GET /v1/audit-events, its JSON lines export) and the events the API, the
 * OAuth server and the CLI's services record, through app.handle: paging and filters, one account's
 * events invisible to another, who may read the log, bad queries refused with 400, and an event that
 * commits with its change or not at all.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope, fixedClock } from '../../helpers/app'
import { startIdTokenIssuer } from '../../helpers/id-tokens'
import { oauth, oauthApp } from '../../helpers/oauth'

let idp: Awaited<ReturnType<typeof startIdTokenIssuer>>
beforeAll(async () => { idp = await startIdTokenIssuer({ clientId: 'notesvc' }) })
afterAll(() => idp.stop())

const START = '2026-11-20T09:00:00.000Z'

/** An app on a clock that moves a second between events, and a live key of each of two accounts. */
async function twoAccounts() {
  const clock = fixedClock(START)
  const t = createTestApp({ clock })
  const alice = await t.key({ email: 'alice@example.com' })
  clock.advance(1000)
  const bob = await t.key({ email: 'bob@example.com' })
  return { ...t, clock, alice, bob }
}

describe('GET /v1/audit-events', () => {
  test('pages newest first with limit and cursor, every event once, and filters by action and since', async () => {
    const t = await twoAccounts()
    // alice: account.created, key.created (above), then 5 notes deleted a second apart
    const deleted: string[] = []
    for (let i = 0; i < 5; i++) {
      t.clock.advance(1000)
      const note = await t.call('POST', '/v1/notes', { token: t.alice, body: { title: `n${i}`, content: 'x' } })
      expect((await t.call('DELETE', `/v1/notes/${note.body.id}`, { token: t.alice })).status).toBe(204)
      deleted.push(note.body.id)
    }
    const seen: any[] = []
    let cursor: string | null = null
    const sizes: number[] = []
    do {
      const page = await t.call('GET', `/v1/audit-events?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: t.alice })
      expect(page.status).toBe(200)
      sizes.push(page.body.data.length)
      expect(page.body.pagination.hasMore).toBe(page.body.pagination.nextCursor !== null)
      seen.push(...page.body.data)
      cursor = page.body.pagination.nextCursor
    } while (cursor)
    expect(sizes).toEqual([3, 3, 1])
    expect(seen.map(e => e.action)).toEqual(['note.deleted', 'note.deleted', 'note.deleted', 'note.deleted', 'note.deleted', 'key.created', 'account.created'])
    expect(seen.filter(e => e.action === 'note.deleted').map(e => e.target.id)).toEqual([...deleted].reverse())
    expect(new Set(seen.map(e => e.id)).size).toBe(7)
    // one account's only: bob's key never shows
    expect(seen.every(e => e.accountId === seen[0].accountId)).toBe(true)

    const onlyKeys = await t.call('GET', '/v1/audit-events?action=key.created', { token: t.alice })
    expect(onlyKeys.body.data.map((e: any) => e.action)).toEqual(['key.created'])
    // since: the last two deletions (at +5 s and +6 s from the start) and nothing before
    const since = await t.call('GET', '/v1/audit-events?since=2026-11-20T09:00:05.000Z', { token: t.alice })
    expect(since.body.data.map((e: any) => e.target.id)).toEqual([deleted[4], deleted[3]])
  })

  test("another account's events are invisible: the list, the export, and its cursors", async () => {
    const t = await twoAccounts()
    const note = await t.call('POST', '/v1/notes', { token: t.alice, body: { title: 'private', content: 'x' } })
    expect((await t.call('DELETE', `/v1/notes/${note.body.id}`, { token: t.alice })).status).toBe(204)
    const aliceCursor = (await t.call('GET', '/v1/audit-events?limit=1', { token: t.alice })).body.pagination.nextCursor
    expect(aliceCursor).not.toBeNull()

    const list = await t.call('GET', '/v1/audit-events', { token: t.bob })
    expect(list.body.data.map((e: any) => e.action)).toEqual(['key.created', 'account.created'])
    expect(list.text).not.toContain(note.body.id)
    // a cursor of alice's list is only a position in time: bob sees his own events before it
    const withHers = await t.call('GET', `/v1/audit-events?cursor=${aliceCursor}`, { token: t.bob })
    expect(withHers.body.data.map((e: any) => e.action)).toEqual(['key.created', 'account.created'])
    // bob cannot delete alice's note either (404), and that is no event of alice's
    expect((await t.call('DELETE', `/v1/notes/${note.body.id}`, { token: t.bob })).status).toBe(404)

    const exported = await t.call('GET', '/v1/audit-events/export', { token: t.bob })
    expect(exported.status).toBe(200)
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8')
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-acct_[0-9a-z]+\.jsonl"$/)
    const lines = exported.text.trimEnd().split('\n').map(l => JSON.parse(l))
    // oldest first, ending with the export itself
    expect(lines.map(e => e.action)).toEqual(['account.created', 'key.created', 'audit.exported'])
    expect(exported.text).not.toContain(note.body.id)
    const aliceAfter = await t.call('GET', '/v1/audit-events', { token: t.alice })
    expect(aliceAfter.body.data.map((e: any) => e.action)).toEqual(['note.deleted', 'key.created', 'account.created'])
  })

  test('bad queries are refused with 400 naming the parameter', async () => {
    const t = await twoAccounts()
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['action=note.read', 'action'],
      ['since=last%20week', 'since'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ]
    for (const [query, field] of cases) {
      const res = await t.call('GET', `/v1/audit-events?${query}`, { token: t.alice })
      expectEnvelope(res, 400, 'invalid_request')
      expect({ query, fields: res.body.error.details.map((d: any) => d.field) }).toEqual({ query, fields: [field] })
    }
  })

  test('who may read it: a live key with usage:read, not a sandbox key, a key without the scope or no credential', async () => {
    const t = createTestApp()
    const sandbox = await t.key({ sandbox: true })
    const noUsage = await t.key({ scopes: ['notes:read'] })
    for (const path of ['/v1/audit-events', '/v1/audit-events/export']) {
      expectEnvelope(await t.call('GET', path, { token: sandbox }), 403, 'insufficient_scope')
      expectEnvelope(await t.call('GET', path, { token: noUsage }), 403, 'insufficient_scope')
      expectEnvelope(await t.call('GET', path), 401, 'invalid_token')
    }
  })
})

describe('reads counted, not repeated (issue 29)', () => {
  // Fails on the old code: every read was an event of its own (2,000 reads, 2,000 events).
  test('a transcript read again and again is one event with its count, first and last time; the export counts itself', async () => {
    const t = await twoAccounts()
    const note = await t.call('POST', '/v1/notes', { token: t.alice, body: { title: 'n', content: 'words' } })
    for (const format of ['', '?format=srt', '?format=txt', '']) {
      t.clock.advance(1000)
      expect((await t.call('GET', `/v1/notes/${note.body.id}/transcript${format}`, { token: t.alice })).status).toBe(format === '?format=srt' ? 409 : 200)
    }
    const [e] = (await t.call('GET', '/v1/audit-events?action=note.transcript_exported', { token: t.alice })).body.data
    // three readable (a note from text has no times: srt is 409 and exports nothing); the first's details
    expect({ count: e.count, at: e.at, lastAt: e.lastAt, details: e.details }).toEqual({ count: 3, at: '2026-11-20T09:00:02.000Z', lastAt: '2026-11-20T09:00:05.000Z', details: { format: 'json', sandbox: false } })

    // exported twice: the second export's line counts both, in the first's place
    t.clock.advance(1000)
    await t.call('GET', '/v1/audit-events/export', { token: t.alice })
    t.clock.advance(1000)
    const second = await t.call('GET', '/v1/audit-events/export', { token: t.alice })
    const lines = second.text.trimEnd().split('\n').map(l => JSON.parse(l))
    expect(lines.map(l => [l.action, l.count])).toEqual([['account.created', 1], ['key.created', 1], ['note.transcript_exported', 3], ['audit.exported', 2]])
    expect(lines.at(-1)).toMatchObject({ at: '2026-11-20T09:00:06.000Z', lastAt: '2026-11-20T09:00:07.000Z' })
    // ten minutes on, another slot: a new event
    t.clock.advance(10 * 60_000)
    await t.call('GET', `/v1/notes/${note.body.id}/transcript`, { token: t.alice })
    const all = (await t.call('GET', '/v1/audit-events?action=note.transcript_exported', { token: t.alice })).body.data
    expect(all.map((x: any) => x.count)).toEqual([1, 3])
    // a write stays one event each, count 1
    expect((await t.call('DELETE', `/v1/notes/${note.body.id}`, { token: t.alice })).status).toBe(204)
    const [deleted] = (await t.call('GET', '/v1/audit-events?action=note.deleted', { token: t.alice })).body.data
    expect({ count: deleted.count, lastAt: deleted.lastAt }).toEqual({ count: 1, lastAt: deleted.at })
  })
})

describe('ID tokens of the identity provider', () => {
  // fails if requireOwnCredential refuses only the 'oauth' actor (an ID token is the 'sso' actor)
  test('an ID token bearer cannot read or export the log (403); the same account\'s live key can', async () => {
    const t = createTestApp({ env: { NOTESVC_OIDC_ISSUER: idp.issuer, NOTESVC_OIDC_CLIENT_ID: 'notesvc' } })
    const idToken = await idp.sign('sub-ida', { email: 'ida@example.com', email_verified: true })
    // the token is a working credential of ida's account…
    expect((await t.call('GET', '/v1/notes', { token: idToken })).status).toBe(200)
    for (const path of ['/v1/audit-events', '/v1/audit-events/export']) {
      const refused = await t.call('GET', path, { token: idToken })
      expectEnvelope(refused, 403, 'insufficient_scope')
      expect(refused.body.error.message).toContain('with a live API key (usage:read) or on the settings page')
    }
    // …and nothing was exported: no audit.exported event; ida's own key reads the log
    const key = await t.key({ email: 'ida@example.com' })
    const events = (await t.call('GET', '/v1/audit-events', { token: key })).body.data.map((e: any) => e.action)
    expect(events).not.toContain('audit.exported')
    expect((await t.call('GET', '/v1/audit-events/export', { token: key })).status).toBe(200)
  })
})

describe('OAuth grants', () => {
  test('consent and revocation are recorded; an OAuth access token cannot read the log', async () => {
    const t = oauthApp()
    const { as, client, tokens, user } = await t.fullFlow({ scope: 'notes:read usage:read' })
    const refused = await t.app.handle(new Request('http://localhost/v1/audit-events', { headers: { authorization: `Bearer ${tokens.access_token}` } }))
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as any).error.code).toBe('insufficient_scope')
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, t.options))

    const key = await t.key({ email: 'user@example.com' })
    const events = (await t.call('GET', '/v1/audit-events', { token: key })).body.data.reverse()
    expect(events.map((e: any) => ({ action: e.action, actor: e.actor, target: e.target, details: e.details }))).toEqual([
      { action: 'account.created', actor: { type: 'operator', id: null }, target: { type: 'account', id: user.account.id }, details: { plan: 'free' } },
      { action: 'oauth.granted', actor: { type: 'user', id: user.account.id }, target: { type: 'oauth_client', id: client.client_id }, details: { scopes: 'notes:read usage:read' } },
      { action: 'oauth.revoked', actor: { type: 'oauth', id: client.client_id }, target: { type: 'oauth_token', id: expect.stringMatching(/^tok_/) }, details: { kind: 'refresh', wholeGrant: true } },
      { action: 'key.created', actor: { type: 'operator', id: null }, target: { type: 'key', id: expect.stringMatching(/^key_/) }, details: { sandbox: false, scopes: 'notes:read notes:write folders:read folders:write transcriptions:write summaries:write usage:read' } },
    ])
    // no token, code or verifier anywhere in the events
    const text = JSON.stringify(events)
    for (const secret of [tokens.access_token, tokens.refresh_token!]) expect(text.includes(secret)).toBe(false)
  })
})

describe('events recorded by the services', () => {
  test('a plan change says from and to; setting the same plan records nothing', async () => {
    const t = createTestApp()
    const key = await t.key({ email: 'p@example.com' })
    await t.services.accounts.setPlan('p@example.com', 'pro')
    await t.services.accounts.setPlan('p@example.com', 'pro')
    const events = (await t.call('GET', '/v1/audit-events?action=plan.changed', { token: key })).body.data
    expect(events.map((e: any) => ({ actor: e.actor, details: e.details }))).toEqual([{ actor: { type: 'operator', id: null }, details: { from: 'free', to: 'pro' } }])
  })

  test('a folder deleted through the API is recorded with the key that did it', async () => {
    const t = createTestApp()
    const key = await t.key()
    const folder = await t.call('POST', '/v1/folders', { token: key, body: { name: 'Secret project' } })
    expect((await t.call('DELETE', `/v1/folders/${folder.body.id}`, { token: key })).status).toBe(204)
    const [e] = (await t.call('GET', '/v1/audit-events?action=folder.deleted', { token: key })).body.data
    expect({ actor: e.actor.type, target: e.target, ip: e.ip }).toEqual({ actor: 'key', target: { type: 'folder', id: folder.body.id }, ip: 'local' })
    expect(JSON.stringify(e)).not.toContain('Secret project')
  })

  test('a deletion whose event cannot be written is not made: the two commit together', async () => {
    // Would fail if the event were written after the deletion's transaction (the note gone, no record).
    const t = createTestApp()
    const key = await t.key()
    const note = await t.call('POST', '/v1/notes', { token: key, body: { title: 'kept', content: 'x' } })
    t.services.audit.recordBy = async () => { throw new Error('the audit log is unwritable') }
    expect((await t.call('DELETE', `/v1/notes/${note.body.id}`, { token: key })).status).toBe(500)
    expect((await t.call('GET', `/v1/notes/${note.body.id}`, { token: key })).status).toBe(200)
  })
})
