/**
 * `note.updated` (issue 31): every change of a transcript (its words, split, merge, reassign, replace,
 * restore, a speaker named, merged or given a segment) sends one event, signed as Standard Webhooks
 * defines, to a real receiver on loopback, only to endpoints that asked for it, and none for an edit
 * refused (412). Both back ends.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

const DEV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' }

const SEGMENTS = [
  { start: 0, end: 2, text: 'the budget is ready', speaker: 'A' },
  { start: 2, end: 4, text: 'order the servers', speaker: 'B' },
  { start: 4, end: 5, text: 'agreed', speaker: 'C' },
]

const servers: { stop(force?: boolean): void }[] = []
afterEach(() => { for (const s of servers.splice(0)) s.stop(true) })

/** A receiver on loopback that keeps what it is sent. */
function receiver() {
  const got: { headers: Record<string, string>; body: string }[] = []
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, async fetch(req) {
    got.push({ headers: Object.fromEntries(req.headers), body: await req.text() })
    return new Response('ok')
  } })
  servers.push(server)
  return { url: `http://127.0.0.1:${server.port}/hooks`, got }
}

for (const b of backEnds) describe.skipIf(b.skip)(`note.updated on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('one signed event per transcript change, naming the change and its segments, to the endpoints that want it; none for a refused edit', async () => {
    const t = createTestApp({ clock: fixedClock(new Date()), store: await open(), env: DEV })
    const token = await t.key()
    const updates = receiver()
    const completions = receiver()
    const made = (await t.call('POST', '/v1/webhooks', { token, body: { url: updates.url, events: ['note.updated'] } })).body
    expect(made.events).toEqual(['note.updated'])
    expect((await t.call('POST', '/v1/webhooks', { token, body: { url: completions.url, events: ['note.completed'] } })).status).toBe(201)

    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    await t.services.notes.saveTranscript(id, { transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS, speakers: ['A', 'B', 'C'].map(label => ({ label, name: null, engine: null, embedding: null, profileId: null })) })
    await t.services.notes.finish(id, { title: 'Budget', summary: 'The budget.', language: 'en', segments: SEGMENTS, structuredContent: null })
    const edit = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await t.call(method, `/v1/notes/${id}${path}`, { token, body, headers })
      return r.status
    }

    expect(await edit('PATCH', '/segments/0', { text: 'the budget is final' })).toBe(200) // v1
    expect(await edit('POST', '/segments/0/split', { word: 2 })).toBe(200) // v2: "the budget" | "is final"
    expect(await edit('POST', '/segments/0/merge', {})).toBe(200) // v3
    expect(await edit('POST', '/segments/1/reassign', { fromWord: 1, toWord: 2, speaker: 'A' })).toBe(200) // v4: "order" | "the servers"
    expect(await edit('POST', '/replacements', { find: 'servers', replace: 'machines' })).toBe(200) // v5
    expect(await edit('PATCH', '/speakers/A', { name: 'Maria' })).toBe(200) // v6
    expect(await edit('PATCH', '/speakers/C', { mergeInto: 'B' })).toBe(200) // v7
    expect(await edit('PATCH', '/segments/3', { speaker: 'A' })).toBe(200) // v8
    expect(await edit('POST', '/segments/0/split', { word: 1 }, { 'if-match': '"2"' })).toBe(412) // refused: no event
    expect(await edit('POST', '/revisions/0/restore')).toBe(200) // v9

    let sent = 0
    for (let n; (n = await t.services.webhooks.deliverDue('test-sender')) > 0;) sent += n
    // nine edits (the one refused sends nothing) to the endpoint of note.updated; the other endpoint
    // got only the note's completion (finish above), none of the edits
    expect(sent).toBe(10)
    expect(updates.got).toHaveLength(9)
    expect(completions.got.map(g => JSON.parse(g.body).type)).toEqual(['note.completed'])
    const hook = new Webhook(made.secret)
    const events = updates.got.map(g => hook.verify(g.body, g.headers) as { type: string; data: { id: string; version: number; change: string; segments: number[] } })
    expect(updates.got.every(g => g.headers['webhook-id']!.length > 0)).toBe(true)
    expect(events.every(e => e.type === 'note.updated' && e.data.id === id)).toBe(true)
    expect(events.map(e => [e.data.version, e.data.change, e.data.segments]).sort((x, y) => (x[0] as number) - (y[0] as number))).toEqual([
      [1, 'text', [0]],
      [2, 'split', [0, 1]],
      [3, 'merge', [0]],
      [4, 'reassign', [1, 2]],
      [5, 'replace', [2]],
      [6, 'speaker', [0, 2]],
      [7, 'speaker', [3]],
      [8, 'reassign', [3]],
      [9, 'restore', [0, 1, 2]],
    ])
    // a changed body fails the signature
    expect(() => hook.verify(updates.got[0]!.body.replace(id, 'note_other'), updates.got[0]!.headers)).toThrow()
  })
})
