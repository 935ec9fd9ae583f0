/**
 * A note's tags where the note goes beyond its own page: webhook events (note.completed, note.updated,
 * to a real receiver on loopback), the Markdown export, and search results. Both back ends.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

const DEV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_METERING: 'off' }
const SEGMENTS = [{ start: 0, end: 2, text: 'the budget is ready', speaker: 'A' }, { start: 2, end: 4, text: 'order the servers', speaker: 'B' }]

const servers: { stop(force?: boolean): void }[] = []
afterEach(() => { for (const s of servers.splice(0)) s.stop(true) })

function receiver() {
  const got: string[] = []
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, async fetch(req) {
    got.push(await req.text())
    return new Response('ok')
  } })
  servers.push(server)
  return { url: `http://127.0.0.1:${server.port}/hooks`, got }
}

for (const b of backEnds) describe.skipIf(b.skip)(`tags carried on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('webhook events, the Markdown export and search results carry the note\'s tags', async () => {
    const t = createTestApp({ clock: fixedClock(new Date()), store: await open(), env: DEV })
    const token = await t.key()
    const hooks = receiver()
    expect((await t.call('POST', '/v1/webhooks', { token, body: { url: hooks.url, events: ['note.completed', 'note.updated'] } })).status).toBe(201)
    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    const tags = (await t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: ['Budget', 'ops'] } })).body.data
    expect(tags.map((x: any) => x.name)).toEqual(['Budget', 'ops'])
    await t.services.notes.saveTranscript(id, { transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS, speakers: ['A', 'B'].map(label => ({ label, name: null, engine: null, embedding: null, profileId: null })) })
    await t.services.notes.finish(id, { title: 'Budget', summary: 'The budget.', language: 'en', segments: SEGMENTS, structuredContent: null })
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/0`, { token, body: { text: 'the budget is final' } })).status).toBe(200)
    while ((await t.services.webhooks.deliverDue('test-sender')) > 0);
    const events = hooks.got.map(g => JSON.parse(g) as { type: string; data: { tags?: unknown } })
    expect(events.map(e => e.type).sort()).toEqual(['note.completed', 'note.updated'])
    for (const e of events) expect(e.data.tags).toEqual(tags)

    const md = await t.call('GET', `/v1/notes/${id}/export?format=md`, { token })
    expect(md.status).toBe(200)
    expect(md.text).toContain('**Tags:** Budget, ops')

    const found = await t.call('GET', '/v1/notes?q=budget', { token })
    expect(found.body.data.map((n: any) => [n.id, n.tags])).toEqual([[id, tags]])
    expect(found.body.data[0].snippet).toMatch(/«budget»/i)
  })

  test('a note without tags sends events without the field, as before', async () => {
    const t = createTestApp({ clock: fixedClock(new Date()), store: await open(), env: DEV })
    const token = await t.key()
    const hooks = receiver()
    await t.call('POST', '/v1/webhooks', { token, body: { url: hooks.url, events: ['note.completed'] } })
    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    await t.services.notes.finish(id, { title: 'T', summary: 'S.', transcript: 'words', language: 'en', structuredContent: null })
    while ((await t.services.webhooks.deliverDue('test-sender')) > 0);
    expect(hooks.got.map(g => Object.keys(JSON.parse(g).data).includes('tags'))).toEqual([false])
  })
})
