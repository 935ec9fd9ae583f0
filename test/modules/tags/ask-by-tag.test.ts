/** askLibrary narrowed by a tag (the notes carrying it, by name without regard to case), on both back ends. */
import { describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

for (const b of backEnds) describe.skipIf(b.skip)(`asking the library by tag on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('with tag, only the notes carrying it are asked; a tag no note carries finds nothing', async () => {
    const t = createTestApp({ store: await open() })
    const token = await t.key({ plan: 'pro' })
    const note = async (title: string, content: string) => (await t.call('POST', '/v1/notes', { token, body: { title, content } })).body.id as string
    const sales = await note('Sales sync', 'Maria interviews the sales candidates on Tuesday. The sales team grows by two.')
    const eng = await note('Engineering sync', 'Karin interviews the engineering candidates on Thursday. The build is green.')
    expect((await t.call('POST', `/v1/notes/${eng}/tags`, { token, body: { tags: ['Engineering'] } })).status).toBe(200)
    const ask = async (extra: Record<string, unknown>) => t.call('POST', '/v1/questions', { token, body: { question: 'Who interviews the candidates?', ...extra } })
    const all = (await ask({})).body
    expect(new Set(all.citations.map((c: any) => c.noteId))).toEqual(new Set([sales, eng]))
    const tagged = (await ask({ tag: 'engineering' })).body
    expect(tagged.citations.map((c: any) => c.noteId)).toEqual([eng])
    expect(tagged.answer).toContain('Karin')
    const none = (await ask({ tag: 'nowhere' })).body
    expect([none.answer, none.citations]).toEqual(['Nothing in the library answers this.', []])
    expectEnvelope(await ask({ tag: '' }), 400, 'invalid_request')
  })
})
