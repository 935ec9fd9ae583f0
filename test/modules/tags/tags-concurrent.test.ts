/**
 * Tags changed at once by several clients: renames, adds and removals of the same notes' tags sent
 * together. Whatever order the database runs them in, each note's tags as the list shows them
 * (notes.tags) are the tags it carries (note_tags). Both back ends; on PostgreSQL the requests run in
 * transactions of their own, side by side.
 */
import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

for (const b of backEnds) describe.skipIf(b.skip)(`tags changed at once on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('concurrent renames, adds and removals leave every note showing exactly the tags it carries', async () => {
    const t = createTestApp({ store: await open(), env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    const token = await t.key()
    const notes: string[] = []
    for (let i = 0; i < 6; i++) notes.push((await t.call('POST', '/v1/notes', { token, body: { title: `n${i}`, content: 'x' } })).body.id)
    // notes given the shared tag, by its current name, while it is renamed
    const others: string[] = []
    for (let i = 0; i < 4; i++) others.push((await t.call('POST', '/v1/notes', { token, body: { title: `o${i}`, content: 'x' } })).body.id)
    for (const id of notes) expect((await t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: ['shared'] } })).status).toBe(200)
    const shared = (await t.call('GET', '/v1/tags', { token })).body.data[0].id
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all([
        t.call('PATCH', `/v1/tags/${shared}`, { token, body: { name: `shared ${round}` } }),
        ...notes.map((id, i) => t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: [`r${round} n${i}`] } })),
        ...notes.slice(0, 3).map(id => t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: [`common ${round}`] } })),
        ...others.map(id => t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: [round === 0 ? 'shared' : `shared ${round - 1}`] } })),
      ])
      expect(answers.map(a => a.status)).toEqual(answers.map(() => 200))
    }
    // the tag deleted while it is added to notes by its name
    const deleting = await Promise.all([t.call('DELETE', `/v1/tags/${shared}`, { token }), ...others.map(id => t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: ['shared 7'] } }))])
    expect(deleting.map(a => a.status)).toEqual([204, ...others.map(() => 200)])
    const carried = async (id: string) => (await t.call('GET', `/v1/notes/${id}/tags`, { token })).body.data.map((x: any) => x.name)
    const listed = new Map(((await t.call('GET', '/v1/notes?limit=100', { token })).body.data as any[]).map(n => [n.id, n.tags.map((x: any) => x.name)]))
    for (const id of [...notes, ...others]) {
      const has = await carried(id)
      expect(listed.get(id)).toEqual(has)
      expect((await t.call('GET', `/v1/notes/${id}`, { token })).body.tags.map((x: any) => x.name)).toEqual(has)
    }
  })
})
