import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { makeWav } from '../../fixtures/wav'
import { createTestApp, expectEnvelope, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { stopAfterTest, webhookReceiver } from '../../helpers/webhook-receiver'
import { closingAfterEach } from '../../helpers/closing'
import { memoryStore } from '../../../src/db/open'
import { createIdGenerator } from '../../../src/ids'
import { silentLogger } from '../../../src/log'
import { createWebhooksRepo, type WebhookRow } from '../../../src/modules/webhooks/repo'
import { createWebhooksService } from '../../../src/modules/webhooks/service'
import type { ApiError } from '../../../src/http/errors'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

const DEV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' }
/** The retry schedule the README promises, after each failed attempt (ms). */
const SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000]
const DAY_MS = 24 * 3_600_000

const receiver = webhookReceiver

for (const b of backEnds) describe.skipIf(b.skip)(`webhooks on ${b.name}`, () => {
  const open = closingAfterEach(b)

  /** An app on this back end with the development setting (loopback receivers), its clock fixed at the real time. */
  async function setup(env: Record<string, string> = DEV) {
    const clock = fixedClock(new Date())
    const t = createTestApp({ clock, store: await open(), env })
    const deliver = () => t.services.webhooks.deliverDue('test-sender')
    return { ...t, clock, deliver, live: await t.key(), sandbox: await t.key({ sandbox: true }) }
  }
  type T = Awaited<ReturnType<typeof setup>>

  const create = (t: T, token: string, body: unknown) => t.call('POST', '/v1/webhooks', { token, body })
  /** A sandbox upload completed: the note is Done at once (DECISIONS.md "Sandbox"). */
  async function sandboxNoteDone(t: T): Promise<string> {
    const up = await t.call('POST', '/v1/uploads', { token: t.sandbox, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    expect((await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: t.sandbox })).status).toBe(202)
    return up.body.noteId
  }

  test('create answers 201 with a whsec_ secret once; list shows it without the secret; delete answers 204', async () => {
    const t = await setup()
    const r = receiver()
    const made = await create(t, t.live, { url: r.url, events: ['note.completed', 'note.failed'], description: 'CRM sync' })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ url: r.url, events: ['note.completed', 'note.failed'], description: 'CRM sync', sandbox: false, disabled: false, disabledAt: null })
    expect(made.body.id).toStartWith('whk_')
    expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(new Date(made.body.createdAt).toISOString()).toBe(made.body.createdAt)

    const list = await t.call('GET', '/v1/webhooks', { token: t.live })
    expect(list.status).toBe(200)
    const { secret: _secret, ...shown } = made.body
    expect(list.body).toEqual({ data: [shown] })
    expect(list.text).not.toContain(made.body.secret)

    expect((await t.call('DELETE', `/v1/webhooks/${made.body.id}`, { token: t.live })).status).toBe(204)
    expect((await t.call('GET', '/v1/webhooks', { token: t.live })).body).toEqual({ data: [] })
    expect((await t.call('DELETE', `/v1/webhooks/${made.body.id}`, { token: t.live })).status).toBe(404)
  })

  test('scopes: notes:read lists and reads deliveries, notes:write creates and deletes', async () => {
    const t = await setup()
    const r = receiver()
    const reader = await t.key({ scopes: ['notes:read'] })
    const writer = await t.key({ scopes: ['notes:write'] })
    const body = { url: r.url, events: ['note.completed'] }
    const made = await create(t, writer, body)
    expect(made.status).toBe(201)
    expect((await create(t, reader, body)).body.error.code).toBe('insufficient_scope')
    expect((await t.call('GET', '/v1/webhooks', { token: writer })).status).toBe(403)
    expect((await t.call('GET', '/v1/webhooks', { token: reader })).status).toBe(200)
    expect((await t.call('GET', `/v1/webhooks/${made.body.id}/deliveries`, { token: reader })).body).toEqual({ data: [] })
    expect((await t.call('DELETE', `/v1/webhooks/${made.body.id}`, { token: reader })).status).toBe(403)
    expect((await t.call('DELETE', `/v1/webhooks/${made.body.id}`, { token: writer })).status).toBe(204)
  })

  test('an account registers at most 25 endpoints, live and sandbox together: the 26th is 409 conflict, saying what to do', async () => {
    const t = await setup()
    const r = receiver()
    const body = (i: number) => ({ url: `${r.url}/${i}`, events: ['note.completed'] })
    const made: string[] = []
    for (let i = 0; i < 25; i++) {
      const res = await create(t, i < 20 ? t.live : t.sandbox, body(i))
      expect(res.status).toBe(201)
      made.push(res.body.id)
    }
    for (const token of [t.live, t.sandbox]) {
      const refused = await create(t, token, body(25))
      expectEnvelope(refused, 409, 'conflict')
      expect(refused.body.error.message).toContain('already has 25 webhook endpoints')
      expect(refused.body.error.message).toContain('DELETE /v1/webhooks/{id}')
    }
    expect((await t.call('GET', '/v1/webhooks', { token: t.live })).body.data).toHaveLength(20)
    // another account has its own 25
    expect((await create(t, await t.key({ email: 'someone-else@example.com' }), body(26))).status).toBe(201)
    // one deleted makes room for one, even for two requests at the same moment
    expect((await t.call('DELETE', `/v1/webhooks/${made[0]}`, { token: t.live })).status).toBe(204)
    const both = await Promise.all([create(t, t.live, body(27)), create(t, t.sandbox, body(28))])
    expect(both.map(res => res.status).sort()).toEqual([201, 409])
  })

  test('NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT sets the number', async () => {
    const t = await setup({ ...DEV, NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT: '2' })
    const r = receiver()
    expect((await create(t, t.live, { url: r.url, events: ['note.completed'] })).status).toBe(201)
    expect((await create(t, t.sandbox, { url: r.url, events: ['note.completed'] })).status).toBe(201)
    const refused = await create(t, t.live, { url: r.url, events: ['note.failed'] })
    expectEnvelope(refused, 409, 'conflict')
    expect(refused.body.error.message).toContain('already has 2 webhook endpoints')
  })

  test('a registration made while another is still being committed cannot take the same last place', async () => {
    const t = await setup()
    const { account } = await t.services.accounts.createKey({ email: 'one-place@example.com' })
    const repo = createWebhooksRepo(t.store)
    const row = (id: string): WebhookRow => ({ id, account_id: account.id, sandbox: 0, url: 'http://127.0.0.1:9/hook', events: '["note.completed"]', description: null, secret: 'whsec_x', disabled_at: null, disabled_reason: null, created_at: t.clock.now().toISOString() })
    // the first insert's transaction stays open while the second is made, in a transaction of its own
    let inserted = () => {}
    const firstInserted = new Promise<void>(resolve => { inserted = resolve })
    const second = (async () => {
      await firstInserted
      return repo.insertUnder(row('whk_second'), 1)
    })()
    const first = await t.store.transaction(async () => {
      const result = await repo.insertUnder(row('whk_first'), 1)
      inserted()
      await Bun.sleep(300)
      return result
    })
    expect(first).toEqual({ inserted: true, had: 0 })
    expect(await second).toEqual({ inserted: false, had: 1 })
  })

  test.each([
    ['no URL', { events: ['note.completed'] }, 'url'],
    ['not a URL', { url: 'hooks here', events: ['note.completed'] }, 'url'],
    ['an ftp URL', { url: 'ftp://127.0.0.1/hooks', events: ['note.completed'] }, 'url'],
    ['a URL with credentials', { url: 'http://user:pw@127.0.0.1:8080/hooks', events: ['note.completed'] }, 'url'],
    ['an unknown event', { url: 'http://127.0.0.1:8080/hooks', events: ['note.completed', 'note.deleted'] }, 'events.1'],
    ['empty events', { url: 'http://127.0.0.1:8080/hooks', events: [] }, 'events'],
    ['no events', { url: 'http://127.0.0.1:8080/hooks' }, 'events'],
    ['a repeated event', { url: 'http://127.0.0.1:8080/hooks', events: ['note.failed', 'note.failed'] }, 'events'],
    ['an unknown field', { url: 'http://127.0.0.1:8080/hooks', events: ['note.failed'], secret: 'mine' }, 'secret'],
  ])('%s: 400 naming the field', async (_label, body, field) => {
    const t = await setup()
    const res = await create(t, t.live, body)
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field)
    expect((await t.call('GET', '/v1/webhooks', { token: t.live })).body.data).toEqual([])
  })

  test.each([
    ['loopback', 'https://127.0.0.1/hooks'],
    ['a private network', 'https://10.1.2.3/hooks'],
    ['IPv6 loopback', 'https://[::1]/hooks'],
    ['localhost', 'https://localhost/hooks'],
    ['link-local metadata', 'https://169.254.169.254/latest'],
    ['plain http', 'http://127.0.0.1:8080/hooks'],
  ])('without the development setting, %s is refused at creation: 400 naming url', async (_label, url) => {
    const t = await setup({})
    const res = await create(t, t.live, { url, events: ['note.completed'] })
    expect(res.status).toBe(400)
    expect(res.body.error.details).toEqual([{ field: 'url', issue: expect.any(String) }])
    expect(res.body.error.message).toContain('refused')
  })

  test('a delivery is signed as Standard Webhooks defines: the library verifies it', async () => {
    const t = await setup()
    const r = receiver()
    const made = (await create(t, t.sandbox, { url: r.url, events: ['note.completed'] })).body
    const noteId = await sandboxNoteDone(t)
    expect(await t.deliver()).toBe(1)
    expect(r.got).toHaveLength(1)
    const { headers, body } = r.got[0]!
    expect(headers['content-type']).toBe('application/json')
    expect(headers['webhook-id']).toStartWith('msg_')
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(new Webhook(made.secret).verify(body, headers)).toEqual({
      type: 'note.completed',
      timestamp: t.clock.now().toISOString(),
      data: { noteId, status: 'Done', errorCode: null },
    })
    // a body changed on the way, or another secret, does not verify
    expect(() => new Webhook(made.secret).verify(body.replace(noteId, 'note_other'), headers)).toThrow()
    expect(() => new Webhook(`whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`).verify(body, headers)).toThrow()

    const log = (await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { token: t.sandbox })).body.data
    expect(log).toEqual([{ id: expect.stringMatching(/^whd_/), messageId: headers['webhook-id'], event: 'note.completed', attempt: 1, attemptedAt: t.clock.now().toISOString(), status: 'delivered', responseCode: 200, error: null, durationMs: expect.any(Number) }])
    expect(await t.deliver()).toBe(0)
  })

  /**
   * A live endpoint and one event for it, queued as the notes module queues it when a live note settles
   * (sandbox endpoints retry sooner: test/modules/sandbox-scenarios; a live upload needs an engine, and
   * the schedule is what these tests look at).
   */
  async function liveEndpointWithEvent(t: T, url: string) {
    const { key, account } = await t.services.accounts.createKey({ email: 'schedule@example.com' })
    const made = (await create(t, key, { url, events: ['note.completed'] })).body
    await t.services.webhooks.noteSettled({ noteId: 'note_live', accountId: account.id, sandbox: false, status: 'Done', errorCode: null })
    return { key, made }
  }

  test('a receiver that fails twice then succeeds gets three attempts, 5 s and 30 s apart, with one webhook-id', async () => {
    const t = await setup()
    const r = receiver([500, 503, 204])
    const { key, made } = await liveEndpointWithEvent(t, r.url)
    expect(await t.deliver()).toBe(1)
    expect(await t.deliver()).toBe(0) // not due before 5 s
    t.clock.advance(4_999)
    expect(await t.deliver()).toBe(0)
    t.clock.advance(1)
    expect(await t.deliver()).toBe(1)
    t.clock.advance(29_999)
    expect(await t.deliver()).toBe(0)
    t.clock.advance(1)
    expect(await t.deliver()).toBe(1)
    t.clock.advance(DAY_MS)
    expect(await t.deliver()).toBe(0)

    expect(r.got).toHaveLength(3)
    expect(new Set(r.got.map(g => g.headers['webhook-id'])).size).toBe(1)
    for (const g of r.got) expect(() => new Webhook(made.secret).verify(g.body, g.headers)).not.toThrow()
    const log = (await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { token: key })).body.data
    expect(log.map((d: any) => [d.attempt, d.status, d.responseCode, d.error])).toEqual([
      [3, 'delivered', 204, null],
      [2, 'failed', 503, 'the endpoint answered 503'],
      [1, 'failed', 500, 'the endpoint answered 500'],
    ])
  })

  test('a receiver that keeps failing is tried on the schedule for a day, then given up', async () => {
    const t = await setup()
    const r = receiver(new Array(100).fill(500))
    const { made } = await liveEndpointWithEvent(t, r.url)
    const times: number[] = []
    for (let i = 0; i < 50; i++) {
      const [row] = await t.services.webhooks.outboxOf(made.id)
      if (row!.status !== 'queued') break
      t.clock.set(row!.run_after) // the moment it is due
      expect(await t.deliver()).toBe(1)
      times.push(t.clock.now().getTime())
    }
    const gaps = times.slice(1).map((at, i) => at - times[i]!)
    expect(gaps).toEqual([...SCHEDULE_MS, 28_800_000])
    expect(times.at(-1)! - times[0]!).toBeLessThanOrEqual(DAY_MS)
    expect(r.got).toHaveLength(11)
    expect((await t.services.webhooks.outboxOf(made.id)).map(o => [o.status, o.attempts])).toEqual([['failed', 11]])
    t.clock.advance(DAY_MS)
    expect(await t.deliver()).toBe(0)
  })

  test('a receiver that answers 410 is disabled and gets nothing more', async () => {
    const t = await setup()
    const gone = receiver([410])
    const other = receiver()
    const made = (await create(t, t.sandbox, { url: gone.url, events: ['note.completed'] })).body
    const kept = (await create(t, t.sandbox, { url: other.url, events: ['note.completed'] })).body
    await sandboxNoteDone(t)
    expect(await t.deliver()).toBe(2)
    const list = (await t.call('GET', '/v1/webhooks', { token: t.sandbox })).body.data
    const byId = new Map(list.map((w: any) => [w.id, w]))
    expect(byId.get(made.id)).toMatchObject({ disabled: true, disabledAt: t.clock.now().toISOString(), disabledReason: 'the endpoint answered 410 Gone' })
    expect(byId.get(kept.id)).toMatchObject({ disabled: false })
    expect((await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { token: t.sandbox })).body.data.map((d: any) => [d.status, d.responseCode])).toEqual([['disabled', 410]])

    await sandboxNoteDone(t)
    t.clock.advance(DAY_MS)
    expect(await t.deliver()).toBe(1) // only the endpoint still enabled
    expect(gone.got).toHaveLength(1)
    expect(other.got).toHaveLength(2)
  })

  test('a redirect is not followed: the attempt fails and is tried again', async () => {
    const t = await setup()
    const target = receiver()
    const redirecting = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null, { status: 307, headers: { location: target.url } }) })
    stopAfterTest(redirecting)
    const made = (await create(t, t.sandbox, { url: `http://127.0.0.1:${redirecting.port}/hook`, events: ['note.completed'] })).body
    await sandboxNoteDone(t)
    expect(await t.deliver()).toBe(1)
    expect(target.got).toHaveLength(0)
    const [attempt] = (await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { token: t.sandbox })).body.data
    expect(attempt).toMatchObject({ status: 'failed', responseCode: 307 })
    expect(attempt.error).toContain('redirects are not followed')
  })

  test('a receiver that does not answer within the timeout fails the attempt', async () => {
    const clock = fixedClock(new Date())
    const store = await open()
    const t = createTestApp({ clock, store, env: DEV })
    const token = await t.key({ sandbox: true })
    const slow = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: async () => { await Bun.sleep(2_000); return new Response('late') } })
    stopAfterTest(slow)
    // the same repository and store, a short timeout: the 10 s of the service is the same code path
    const quick = createWebhooksService({ repo: createWebhooksRepo(store), clock, ids: createIdGenerator(), log: silentLogger, allowPrivateUrls: true, timeoutMs: 200 })
    const made = (await t.call('POST', '/v1/webhooks', { token, body: { url: `http://127.0.0.1:${slow.port}/hook`, events: ['note.completed'] } })).body
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token })
    expect(await quick.deliverDue('quick')).toBe(1)
    const [attempt] = (await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { token })).body.data
    expect(attempt).toMatchObject({ status: 'failed', responseCode: null, error: 'no answer within 0.2 s' })
  })

  test('sandbox notes fire sandbox endpoints only; live notes fire live endpoints only (note.failed with its errorCode)', async () => {
    const clock = fixedClock(new Date())
    const t = createTestApp({ clock, store: await open(), env: { ...DEV, NOTESVC_WORKERS: '1' } })
    const live = await t.key()
    const sandbox = await t.key({ sandbox: true })
    const liveHook = receiver()
    const sandboxHook = receiver()
    const events = ['note.completed', 'note.failed']
    const liveMade = (await t.call('POST', '/v1/webhooks', { token: live, body: { url: liveHook.url, events } })).body
    await t.call('POST', '/v1/webhooks', { token: sandbox, body: { url: sandboxHook.url, events } })
    // each library lists its own endpoints only
    expect((await t.call('GET', '/v1/webhooks', { token: sandbox })).body.data.map((w: any) => w.url)).toEqual([sandboxHook.url])
    expect((await t.call('GET', '/v1/webhooks', { token: live })).body.data.map((w: any) => [w.url, w.sandbox])).toEqual([[liveHook.url, false]])
    expect((await t.call('GET', `/v1/webhooks/${liveMade.id}/deliveries`, { token: sandbox })).status).toBe(404)

    // sandbox: Done at once
    const up = await t.call('POST', '/v1/uploads', { token: sandbox, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: sandbox })
    // live: a recording damaged after its completion (a file that is not audio is refused before it),
    // processed by a real worker, ends in Error (media_unreadable)
    const bad = await t.call('POST', '/v1/uploads', { token: live, body: { fileName: 'broken.wav', contentType: 'audio/wav' } })
    const put = await t.app.handle(new Request(bad.body.uploadUrl, { method: 'PUT', body: makeWav({ seconds: 1 }) as BodyInit }))
    expect(put.status).toBe(200)
    expect((await t.call('POST', `/v1/uploads/${bad.body.noteId}/complete`, { token: live })).status).toBe(202)
    await Bun.write((await t.services.storage.localCopy(`uploads/${bad.body.noteId}`)).path, crypto.getRandomValues(new Uint8Array(4096)))
    await t.services.workers.start()
    try {
      const deadline = Date.now() + 20_000
      while ((liveHook.got.length < 1 || sandboxHook.got.length < 1) && Date.now() < deadline) await Bun.sleep(20)
    } finally {
      await t.services.workers.stop()
    }
    expect(sandboxHook.got.map(g => JSON.parse(g.body))).toEqual([{ type: 'note.completed', timestamp: expect.any(String), data: { noteId: up.body.noteId, status: 'Done', errorCode: null } }])
    expect(liveHook.got.map(g => JSON.parse(g.body))).toEqual([{ type: 'note.failed', timestamp: expect.any(String), data: { noteId: bad.body.noteId, status: 'Error', errorCode: 'media_unreadable' } }])
    expect(() => new Webhook(liveMade.secret).verify(liveHook.got[0]!.body, liveHook.got[0]!.headers)).not.toThrow()
  })

  test("the outbox row and the note's final state commit together: when the event cannot be stored, the note is not Done either", async () => {
    const t = await setup()
    const r = receiver()
    await create(t, t.sandbox, { url: r.url, events: ['note.completed'] })
    const up = await t.call('POST', '/v1/uploads', { token: t.sandbox, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    await t.store.run('ALTER TABLE webhook_outbox RENAME TO webhook_outbox_away')
    const failed = await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: t.sandbox })
    expect(failed.status).toBe(500)
    expect((await t.call('GET', `/v1/notes/${up.body.noteId}/status`, { token: t.sandbox })).body).toMatchObject({ status: 'Summarizing', processingStage: 'awaiting_upload' })
    // once the outbox is back, completing again works, and the event is there
    await t.store.run('ALTER TABLE webhook_outbox_away RENAME TO webhook_outbox')
    expect((await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: t.sandbox })).body).toMatchObject({ status: 'Done', alreadyCompleted: false })
    expect(await t.deliver()).toBe(1)
    expect(JSON.parse(r.got[0]!.body).data.noteId).toBe(up.body.noteId)
  })

  test('an event claimed by a sender that died is sent by another once its 60 s lease runs out; the dead claim can write nothing', async () => {
    const t = await setup()
    const r = receiver()
    const made = (await create(t, t.sandbox, { url: r.url, events: ['note.completed'] })).body
    await sandboxNoteDone(t)
    const repo = createWebhooksRepo(t.store)
    const now = t.clock.now().getTime()
    const [taken] = await repo.outbox.claim('sender-that-dies', new Date(now).toISOString(), new Date(now + 60_000).toISOString(), 8)
    expect(taken!.attempts).toBe(1)
    expect(await t.deliver()).toBe(0) // held by the dead sender
    t.clock.advance(59_999)
    expect(await t.deliver()).toBe(0)
    t.clock.advance(1)
    expect(await t.deliver()).toBe(1)
    expect(r.got).toHaveLength(1)
    // the first claim, had its sender come back, is fenced off: nothing written
    expect(await repo.outbox.retry({ id: taken!.id, owner: 'sender-that-dies', attempt: 1 }, t.clock.now().toISOString(), 'late', t.clock.now().toISOString())).toBe(false)
    expect((await t.services.webhooks.outboxOf(made.id)).map(o => [o.status, o.attempts])).toEqual([['done', 2]])
    expect((await t.call('GET', `/v1/webhooks/${made.id}/deliveries`, { token: t.sandbox })).body.data.map((d: any) => [d.attempt, d.status])).toEqual([[2, 'delivered']])
  })

  test('an endpoint receives only the events it asked for', async () => {
    const t = await setup()
    const r = receiver()
    await create(t, t.sandbox, { url: r.url, events: ['note.failed'] })
    await sandboxNoteDone(t)
    expect(await t.deliver()).toBe(0)
    expect(r.got).toHaveLength(0)
  })

  test("another account's endpoints are never listed, deleted or read (404)", async () => {
    const t = await setup()
    const r = receiver()
    const mine = (await create(t, t.live, { url: r.url, events: ['note.completed'] })).body
    const other = await t.key({ email: 'someone-else@example.com' })
    expect((await t.call('GET', '/v1/webhooks', { token: other })).body).toEqual({ data: [] })
    const del = await t.call('DELETE', `/v1/webhooks/${mine.id}`, { token: other })
    expect(del.status).toBe(404)
    expect(del.body.error.code).toBe('not_found')
    expect((await t.call('GET', `/v1/webhooks/${mine.id}/deliveries`, { token: other })).status).toBe(404)
    // the sandbox library of the same account is another library too
    expect((await t.call('DELETE', `/v1/webhooks/${mine.id}`, { token: t.sandbox })).status).toBe(404)
    expect((await t.call('GET', '/v1/webhooks', { token: t.live })).body.data.map((w: any) => w.id)).toEqual([mine.id])
  })

  test('deleting an endpoint drops the events still waiting for it', async () => {
    const t = await setup()
    const r = receiver()
    const made = (await create(t, t.sandbox, { url: r.url, events: ['note.completed'] })).body
    await sandboxNoteDone(t)
    expect(await t.services.webhooks.outboxOf(made.id)).toHaveLength(1)
    expect((await t.call('DELETE', `/v1/webhooks/${made.id}`, { token: t.sandbox })).status).toBe(204)
    expect(await t.services.webhooks.outboxOf(made.id)).toEqual([])
    expect(await t.deliver()).toBe(0)
    expect(r.got).toHaveLength(0)
  })
})

describe('the address rules with a resolver (a host name that resolves to loopback)', () => {
  async function service(lookup: (host: string) => Promise<{ address: string; family: 4 | 6 }[]>) {
    const store = memoryStore()
    const clock = fixedClock(new Date())
    const ids = createIdGenerator()
    const account = { id: 'acct_1', email: 'a@example.com', plan: 'free', grant_period: '2026-11', grant_used: 0, purchased_credits: 0, created_at: clock.now().toISOString() }
    await store.run('INSERT INTO accounts (id, email, plan, grant_period, grant_used, purchased_credits, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', Object.values(account) as string[])
    const webhooks = createWebhooksService({ repo: createWebhooksRepo(store), clock, ids, log: silentLogger, allowPrivateUrls: false, lookup })
    return { webhooks, lib: { accountId: account.id, sandbox: false } }
  }

  test('a name resolving to 127.0.0.1 is refused at creation, naming url', async () => {
    const { webhooks, lib } = await service(async () => [{ address: '127.0.0.1', family: 4 }])
    const err = (await webhooks.create(lib, { url: 'https://hooks.example.com/notesvc', events: ['note.completed'] }).catch(e => e)) as ApiError
    expect(err.code).toBe('invalid_request')
    expect(err.options.details).toEqual([{ field: 'url', issue: 'https://hooks.example.com/notesvc: hooks.example.com resolves to a loopback address 127.0.0.1; private, loopback, link-local and cloud metadata addresses are refused' }])
  })

  test('a name that resolved to a public address at creation and to loopback at delivery is refused then, and nothing is sent', async () => {
    let answer = '93.184.215.14'
    const { webhooks, lib } = await service(async () => [{ address: answer, family: 4 }])
    const made = await webhooks.create(lib, { url: 'https://hooks.example.com/notesvc', events: ['note.completed'] })
    await webhooks.noteSettled({ noteId: 'note_1', accountId: lib.accountId, sandbox: false, status: 'Done', errorCode: null })
    answer = '127.0.0.1'
    expect(await webhooks.deliverDue('test')).toBe(1)
    const [attempt] = (await webhooks.deliveries(lib, made.id)).data
    expect(attempt).toMatchObject({ attempt: 1, status: 'refused', responseCode: null })
    expect(attempt!.error).toContain('resolves to a loopback address 127.0.0.1')
    // and it stays in the outbox, to be tried again on the schedule
    expect((await webhooks.outboxOf(made.id)).map(o => o.status)).toEqual(['queued'])
  })
})
