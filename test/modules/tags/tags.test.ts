import { describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

/** Tags through the API on both back ends: the library's tags, a note's tags, the list filtered by them, isolation. */
for (const b of backEnds) describe.skipIf(b.skip)(`tags on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const t = createTestApp({ clock, store: await open() })
    const token = await t.key()
    const note = async (title: string) => {
      clock.advance(1000)
      return (await t.call('POST', '/v1/notes', { token, body: { title, content: `${title} text` } })).body.id as string
    }
    const add = (id: string, tags: string[], tok = token) => t.call('POST', `/v1/notes/${id}/tags`, { token: tok, body: { tags } })
    const titles = async (query: string, tok = token) => {
      const r = await t.call('GET', `/v1/notes${query}`, { token: tok })
      expect(r.status).toBe(200)
      return r.body.data.map((n: any) => n.title)
    }
    return { ...t, clock, token, note, add, titles }
  }

  test('the list filtered by two tags: only the notes carrying both, newest first; by name without regard to case', async () => {
    const t = await setup()
    const a = await t.note('budget and travel')
    const b = await t.note('budget only')
    const c = await t.note('travel only')
    const d = await t.note('all three')
    await t.add(a, ['Budget', 'Travel'])
    await t.add(b, ['budget'])
    await t.add(c, ['travel'])
    await t.add(d, ['travel', 'BUDGET', 'hiring'])
    expect(await t.titles('?tag=budget&tag=travel')).toEqual(['all three', 'budget and travel'])
    expect(await t.titles('?tag=Budget')).toEqual(['all three', 'budget only', 'budget and travel'])
    expect(await t.titles('?tag=travel&tag=hiring')).toEqual(['all three'])
    expect(await t.titles('?tag=nowhere')).toEqual([])
    // one tag made per name: "Budget" first, the later spellings are the same tag
    expect((await t.call('GET', '/v1/tags', { token: t.token })).body.data.map((x: any) => x.name)).toEqual(['Budget', 'hiring', 'Travel'])
    // with a search and the filter together
    expect(await t.titles('?q=budget&tag=travel')).toEqual(['budget and travel'])
  })

  test('a note shows its tags on getNote and in list items; a rename and a deletion show on the notes carrying the tag', async () => {
    const t = await setup()
    const id = await t.note('weekly')
    const added = await t.add(id, ['ops', 'Alpha'])
    expect(added.status).toBe(200)
    expect(added.body.data.map((x: any) => x.name)).toEqual(['Alpha', 'ops'])
    for (const x of added.body.data) expect(x.color).toMatch(/^#[0-9a-f]{6}$/)
    const note = (await t.call('GET', `/v1/notes/${id}`, { token: t.token })).body
    expect(note.tags).toEqual(added.body.data)
    expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data[0].tags).toEqual(added.body.data)
    const ops = added.body.data.find((x: any) => x.name === 'ops')
    const renamed = await t.call('PATCH', `/v1/tags/${ops.id}`, { token: t.token, body: { name: 'Operations', color: '#123abc' } })
    expect(renamed.status).toBe(200)
    expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data[0].tags.map((x: any) => [x.name, x.color])).toContainEqual(['Operations', '#123abc'])
    expect(await t.titles('?tag=operations')).toEqual(['weekly'])
    expect((await t.call('DELETE', `/v1/tags/${ops.id}`, { token: t.token })).status).toBe(204)
    expect((await t.call('GET', `/v1/notes/${id}`, { token: t.token })).body.tags.map((x: any) => x.name)).toEqual(['Alpha'])
    const alpha = added.body.data.find((x: any) => x.name === 'Alpha')
    const removed = await t.call('DELETE', `/v1/notes/${id}/tags/${alpha.id}`, { token: t.token })
    expect(removed.body.data).toEqual([])
    expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data[0].tags).toEqual([])
    // the tag stays in the library
    expect((await t.call('GET', '/v1/tags', { token: t.token })).body.data.map((x: any) => x.name)).toEqual(['Alpha'])
  })

  test('bad names and too many tags get a clear 400; a taken name 409', async () => {
    const t = await setup()
    const id = await t.note('n')
    for (const name of ['a\u0000b', 'x'.repeat(10_000), '   ', 'x'.repeat(51), 'two\nlines']) {
      const r = await t.call('POST', '/v1/tags', { token: t.token, body: { name } })
      expectEnvelope(r, 400, 'invalid_request')
      expectEnvelope(await t.add(id, [name]), 400, 'invalid_request')
    }
    expect((await t.call('POST', '/v1/tags', { token: t.token, body: { name: 'x'.repeat(50) } })).status).toBe(201)
    expectEnvelope(await t.call('POST', '/v1/tags', { token: t.token, body: { name: 'red', color: 'red' } }), 400, 'invalid_request')
    expect((await t.call('POST', '/v1/tags', { token: t.token, body: { name: 'Red', color: '#ff0000' } })).status).toBe(201)
    expectEnvelope(await t.call('POST', '/v1/tags', { token: t.token, body: { name: 'RED' } }), 409, 'conflict')
    const thousand = await t.add(id, Array.from({ length: 1000 }, (_, i) => `tag ${i}`))
    expectEnvelope(thousand, 400, 'invalid_request')
    expect(thousand.body.error.message).toContain('at most 50 tags')
    expect((await t.call('GET', `/v1/notes/${id}`, { token: t.token })).body.tags).toEqual([])
    expect((await t.add(id, Array.from({ length: 50 }, (_, i) => `tag ${i}`))).status).toBe(200)
    expectEnvelope(await t.add(id, ['one more']), 400, 'invalid_request')
    expect((await t.add(id, ['TAG 7'])).status).toBe(200) // one it carries: nothing added
    expect((await t.call('GET', `/v1/notes/${id}`, { token: t.token })).body.tags.length).toBe(50)
    expectEnvelope(await t.call('GET', `/v1/notes?${Array.from({ length: 51 }, (_, i) => `tag=t${i}`).join('&')}`, { token: t.token }), 400, 'invalid_request')
  })

  test("another account's note or tag is 404, and its tags never show or filter", async () => {
    const t = await setup()
    const other = await t.key({ email: 'other@example.com' })
    const mine = await t.note('mine')
    const tag = (await t.add(mine, ['secret'])).body.data[0]
    const theirs = (await t.call('POST', '/v1/notes', { token: other, body: { title: 'theirs', content: 'x' } })).body.id
    expectEnvelope(await t.add(mine, ['x'], other), 404, 'not_found')
    expectEnvelope(await t.call('GET', `/v1/notes/${mine}/tags`, { token: other }), 404, 'not_found')
    expectEnvelope(await t.call('DELETE', `/v1/notes/${theirs}/tags/${tag.id}`, { token: other }), 404, 'not_found')
    expectEnvelope(await t.call('PATCH', `/v1/tags/${tag.id}`, { token: other, body: { name: 'mine now' } }), 404, 'not_found')
    expectEnvelope(await t.call('DELETE', `/v1/tags/${tag.id}`, { token: other }), 404, 'not_found')
    expect((await t.call('GET', '/v1/tags', { token: other })).body.data).toEqual([])
    expect(await t.titles('?tag=secret', other)).toEqual([])
    // the same name in the other library is another tag
    const theirsTag = (await t.add(theirs, ['secret'], other)).body.data[0]
    expect(theirsTag.id).not.toBe(tag.id)
    expect(await t.titles('?tag=secret')).toEqual(['mine'])
    // the sandbox is a library of its own
    const sandbox = await t.key({ sandbox: true })
    expectEnvelope(await t.call('GET', `/v1/notes/${mine}/tags`, { token: sandbox }), 404, 'not_found')
  })
})
