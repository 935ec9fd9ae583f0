/**
 * The account's retention policy through the API (GET/PATCH /v1/settings/retention): what it says,
 * what it refuses with a 400 that says what to give, the audit event of a change, and the Note's
 * `mediaRemovedAt` once the sweep removed a recording.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope, fixedClock } from '../../helpers/app'
import { startIdTokenIssuer } from '../../helpers/id-tokens'
import { oauthApp } from '../../helpers/oauth'
import { until } from '../../helpers/process'

let idp: Awaited<ReturnType<typeof startIdTokenIssuer>>
beforeAll(async () => { idp = await startIdTokenIssuer({ clientId: 'notesvc' }) })
afterAll(() => idp.stop())

const FOREVER = { mode: 'forever', days: null }

describe('GET and PATCH /v1/settings/retention', () => {
  test('an account follows the instance default until it sets its own; `default` goes back to it', async () => {
    const t = createTestApp({ env: { NOTESVC_RETENTION_MODE: 'media', NOTESVC_RETENTION_DAYS: '90' } })
    const key = await t.key()
    const first = await t.call('GET', '/v1/settings/retention', { token: key })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ mode: 'default', days: null, effective: { mode: 'media', days: 90 }, instanceDefault: { mode: 'media', days: 90 }, updatedAt: null })

    const set = await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'notes', days: 365 } })
    expect(set.status).toBe(200)
    expect(set.body).toMatchObject({ mode: 'notes', days: 365, effective: { mode: 'notes', days: 365 }, instanceDefault: { mode: 'media', days: 90 } })
    expect(Date.parse(set.body.updatedAt)).not.toBeNaN()
    expect((await t.call('GET', '/v1/settings/retention', { token: key })).body).toEqual(set.body)

    const forever = await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'forever' } })
    expect(forever.body.effective).toEqual(FOREVER)

    const back = await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'default', days: null } })
    expect(back.body).toEqual(first.body)
  })

  test('another account\'s policy is its own', async () => {
    const t = createTestApp()
    const a = await t.key({ email: 'a@example.com' })
    const b = await t.key({ email: 'b@example.com' })
    await t.call('PATCH', '/v1/settings/retention', { token: a, body: { mode: 'notes', days: 7 } })
    expect((await t.call('GET', '/v1/settings/retention', { token: b })).body.effective).toEqual(FOREVER)
  })

  // each row: a body a client might send, and what the 400's message must tell them to give
  const BAD: [string, unknown, RegExp][] = [
    ['media without days', { mode: 'media' }, /Give days \(a whole number from 1 to 36500\) with mode media/],
    ['notes with days null', { mode: 'notes', days: null }, /Give days .* with mode notes/],
    ['days with forever', { mode: 'forever', days: 30 }, /Leave days out with mode forever/],
    ['an unknown mode', { mode: 'weekly', days: 7 }, /Give mode as one of default, forever, media, notes/],
    ['days of 0', { mode: 'media', days: 0 }, /Give days as a whole number from 1 to 36500 \(not 0\)/],
    ['days over 100 years', { mode: 'media', days: 36_501 }, /Give days as a whole number from 1 to 36500/],
    ['days as a fraction', { mode: 'notes', days: 1.5 }, /Give days as a whole number from 1 to 36500 \(not 1.5\)/],
    ['days as text', { mode: 'notes', days: 'ten' }, /days/],
    ['no mode', { days: 5 }, /mode: is required/],
  ]
  test.each(BAD)('%s: 400 invalid_request saying what to give, and nothing changed', async (_what, body, message) => {
    const t = createTestApp()
    const key = await t.key()
    const res = await t.call('PATCH', '/v1/settings/retention', { token: key, body })
    expectEnvelope(res, 400, 'invalid_request')
    expect(res.body.error.message).toMatch(message)
    expect((await t.call('GET', '/v1/settings/retention', { token: key })).body.mode).toBe('default')
  })

  test('a sandbox key may read the policy but not change it (it covers the live library too)', async () => {
    const t = createTestApp()
    const key = await t.key({ sandbox: true })
    expect((await t.call('GET', '/v1/settings/retention', { token: key })).status).toBe(200)
    const res = await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'notes', days: 1 } })
    expectEnvelope(res, 400, 'invalid_request')
    expect(res.body.error.message).toContain('use a live key')
  })

  test('scopes: reading needs notes:read, changing needs notes:write', async () => {
    const t = createTestApp()
    const readOnly = await t.key({ scopes: ['notes:read'] })
    expect((await t.call('GET', '/v1/settings/retention', { token: readOnly })).status).toBe(200)
    expectEnvelope(await t.call('PATCH', '/v1/settings/retention', { token: readOnly, body: { mode: 'forever' } }), 403, 'insufficient_scope')
    const writeOnly = await t.key({ email: 'w@example.com', scopes: ['notes:write'] })
    expectEnvelope(await t.call('GET', '/v1/settings/retention', { token: writeOnly }), 403, 'insufficient_scope')
  })

  test('an OAuth access token or an ID token with notes:write may read the policy but not change it (403, what to do instead)', async () => {
    const o = oauthApp()
    const { tokens } = await o.fullFlow({ scope: 'notes:read notes:write' })
    const byToken = async (method: string, token: string, call: typeof o.call) => call(method, '/v1/settings/retention', { token, body: method === 'PATCH' ? { mode: 'notes', days: 1 } : undefined })
    expect((await byToken('GET', tokens.access_token, o.call)).status).toBe(200)
    const oauthRefused = await byToken('PATCH', tokens.access_token, o.call)
    expectEnvelope(oauthRefused, 403, 'insufficient_scope')
    expect(oauthRefused.body.error.message).toContain('a person sets it on the settings page (/settings) or with a live API key')

    const t = createTestApp({ env: { NOTESVC_OIDC_ISSUER: idp.issuer, NOTESVC_OIDC_CLIENT_ID: 'notesvc' } })
    const idToken = await idp.sign('sub-ray', { email: 'ray@example.com', email_verified: true })
    expect((await byToken('GET', idToken, t.call)).status).toBe(200)
    expectEnvelope(await byToken('PATCH', idToken, t.call), 403, 'insufficient_scope')

    // nothing changed, nothing recorded: both accounts still follow the default
    for (const app of [o, t]) {
      expect((await app.store.all("SELECT * FROM retention_policies"))).toEqual([])
      expect((await app.store.all("SELECT * FROM audit_events WHERE action = 'retention.changed'"))).toEqual([])
    }
  })

  test('a change is recorded in the audit log: who (the key), old and new', async () => {
    const t = createTestApp()
    const key = await t.key()
    await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'media', days: 30 } }, )
    await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'notes', days: 10 }, headers: { 'user-agent': 'retention-test/1' } })
    const rows = await t.store.all<{ actor_type: string; actor_id: string; details: string; user_agent: string | null }>("SELECT actor_type, actor_id, details, user_agent FROM audit_events WHERE action = 'retention.changed' ORDER BY at, id")
    expect(rows.map(r => JSON.parse(r.details))).toEqual([
      { oldMode: 'default', oldDays: null, newMode: 'media', newDays: 30 },
      { oldMode: 'media', oldDays: 30, newMode: 'notes', newDays: 10 },
    ])
    expect(rows[1]!.actor_type).toBe('key')
    expect(rows[1]!.actor_id).toMatch(/^key_/)
    expect(rows[1]!.user_agent).toBe('retention-test/1')
  })
})

describe('a note whose recording the policy removed', () => {
  test('keeps its transcript and says when in mediaRemovedAt; its media answers 404 naming the policy and the date', async () => {
    const clock = fixedClock('2026-03-01T08:00:00.000Z')
    const t = createTestApp({ clock })
    const key = await t.key()
    await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'media', days: 14 } })
    const bytes = new TextEncoder().encode('RIFF-a-recording')
    const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'talk.wav', contentType: 'audio/wav', fileSize: bytes.length } })
    const put = await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: bytes }))
    expect(put.status).toBeLessThan(300)
    const id = up.body.noteId
    await t.store.run("UPDATE notes SET status = 'Done', processing_stage = NULL WHERE id = ?", [id])
    await t.store.run("UPDATE note_bodies SET original_transcription = 'kept words' WHERE note_id = ?", [id])
    expect((await t.call('GET', `/v1/notes/${id}`, { token: key })).body.mediaRemovedAt).toBeUndefined()

    clock.set('2026-03-16T08:00:00.000Z') // 15 days later
    expect(await t.services.retention.sweep()).toMatchObject({ recordingsRemoved: 1 })

    const note = await t.call('GET', `/v1/notes/${id}`, { token: key })
    expect(note.body.mediaRemovedAt).toBe('2026-03-16T08:00:00.000Z')
    expect(note.body.originalTranscription).toBe('kept words')
    expect((await t.call('GET', `/v1/notes/${id}/transcript`, { token: key })).body.transcript).toBe('kept words')
    const lib = { accountId: (await t.store.get<{ account_id: string }>('SELECT account_id FROM notes WHERE id = ?', [id]))!.account_id, sandbox: false }
    const err = await t.services.uploads.media(lib, id).then(() => null, e => e)
    expect(err?.code).toBe('not_found')
    expect(err.message).toContain(`The recording of note ${id} was removed by the retention policy on 2026-03-16`)
  })
})

describe('the audit log\'s own retention (NOTESVC_AUDIT_RETENTION_DAYS)', () => {
  test('the sweep prunes audit events older than the days set, and keeps them all when unset', async () => {
    for (const [env, pruned, left] of [[{ NOTESVC_AUDIT_RETENTION_DAYS: '90' }, 1, ['key.created']], [{}, 0, ['account.created', 'key.created']]] as const) {
      const clock = fixedClock('2026-01-01T00:00:00.000Z')
      const t = createTestApp({ clock, env })
      await t.services.audit.record({ accountId: null, actor: { type: 'operator' }, action: 'account.created' })
      clock.set('2026-04-05T00:00:00.000Z') // 94 days later
      await t.services.audit.record({ accountId: null, actor: { type: 'operator' }, action: 'key.created' })
      expect((await t.services.retention.sweep()).auditEventsPruned).toBe(pruned)
      expect((await t.store.all<{ action: string }>('SELECT action FROM audit_events ORDER BY at')).map(r => r.action)).toEqual([...left])
    }
  })
})

describe('an account\'s policy covers its sandbox library too', () => {
  test('an old note of the sandbox library is swept under the account\'s policy', async () => {
    const t = createTestApp()
    const live = await t.key({ email: 'both@example.com' })
    const sandbox = await t.key({ email: 'both@example.com', sandbox: true })
    await t.call('PATCH', '/v1/settings/retention', { token: live, body: { mode: 'notes', days: 7 } })
    const old = (await t.call('POST', '/v1/notes', { token: sandbox, body: { title: 'old sandbox', content: 'x' } })).body.id
    const young = (await t.call('POST', '/v1/notes', { token: sandbox, body: { title: 'young sandbox', content: 'y' } })).body.id
    await t.store.run('UPDATE notes SET date_created = ? WHERE id = ?', [new Date(Date.now() - 8 * 86_400_000).toISOString(), old])
    expect(await t.services.retention.sweep()).toEqual({ notesDeleted: 1, recordingsRemoved: 0, skippedProcessing: 0, failed: 0, auditEventsPruned: 0 })
    expect((await t.call('GET', `/v1/notes/${old}`, { token: sandbox })).status).toBe(404)
    expect((await t.call('GET', `/v1/notes/${young}`, { token: sandbox })).status).toBe(200)
  })
})

describe('the sweep on the workers\' schedule', () => {
  test('a process with workers runs it when due, without anyone asking', async () => {
    const t = createTestApp({
      env: { NOTESVC_WORKERS: '1', NOTESVC_RETENTION_MODE: 'notes', NOTESVC_RETENTION_DAYS: '1' },
      // every 60 ms instead of the minutes a variable can say, so the test need not wait
      config: { retention: { mode: 'notes', days: 1, sweepMinutes: 0.001, auditDays: null } },
    })
    const key = await t.key()
    const old = (await t.call('POST', '/v1/notes', { token: key, body: { title: 'old', content: 'x' } })).body.id
    const young = (await t.call('POST', '/v1/notes', { token: key, body: { title: 'young', content: 'y' } })).body.id
    await t.store.run('UPDATE notes SET date_created = ? WHERE id = ?', [new Date(Date.now() - 3 * 86_400_000).toISOString(), old])
    await t.services.workers.start()
    try {
      await until('the scheduled sweep deleted the old note', async () => (await t.call('GET', `/v1/notes/${old}`, { token: key })).status === 404 || null)
      expect((await t.call('GET', `/v1/notes/${young}`, { token: key })).status).toBe(200)
      expect((await t.services.recurring.get('retention_sweep'))!.status).not.toBe('failed')
    } finally {
      await t.services.workers.stop()
    }
  })
})
