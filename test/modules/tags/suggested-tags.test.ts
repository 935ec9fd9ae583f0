/**
 * Suggested tags: drawn from the topics of a note's summary (its structured content's section
 * headings), shown beside the note's tags, never applied until the user adds one. Both back ends.
 */
import { describe, expect, test } from 'bun:test'
import { createBuiltinEngine } from '../../../src/engines/llm/builtin'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

/** A summary in the `note` style as Ollama writes it: sections with headings. */
const STRUCTURED = {
  note: {
    summary: 'The team went over the budget and planned hiring.',
    sections: [
      { heading: 'Budget, hiring and travel', points: ['The budget is approved.'] },
      { heading: 'Office move', points: ['The move is in March.'] },
      { heading: 'Summary', points: ['Nothing else.'] },
    ],
  },
}

for (const b of backEnds) describe.skipIf(b.skip)(`suggested tags on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function noteWith(structuredContent: Record<string, unknown>) {
    const t = createTestApp({ clock: fixedClock('2026-11-01T10:00:00.000Z'), store: await open() })
    const token = await t.key()
    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    await t.services.notes.finish(id, { title: 'Planning', summary: 'S.', transcript: 'words', language: 'en', structuredContent })
    return { t, token, id }
  }

  test('the topics are suggested, not applied; adding one (the accept) applies it and it is no longer suggested', async () => {
    const { t, token, id } = await noteWith(STRUCTURED)
    const before = (await t.call('GET', `/v1/notes/${id}/tags`, { token })).body
    expect(before).toEqual({ data: [], suggestedTags: ['budget', 'hiring', 'travel', 'office move'] })
    expect((await t.call('GET', `/v1/notes/${id}`, { token })).body.tags).toEqual([])
    expect((await t.call('GET', '/v1/tags', { token })).body.data).toEqual([])

    const accepted = (await t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: ['hiring'] } })).body
    expect(accepted.data.map((x: any) => x.name)).toEqual(['hiring'])
    expect(accepted.suggestedTags).toEqual(['budget', 'travel', 'office move'])
    // a tag the user had already, in another case, is not suggested again
    const more = (await t.call('POST', `/v1/notes/${id}/tags`, { token, body: { tags: ['Office Move'] } })).body
    expect(more.suggestedTags).toEqual(['budget', 'travel'])
    expect((await t.call('GET', '/v1/notes?tag=hiring', { token })).body.data.map((n: any) => n.id)).toEqual([id])
  })

  test('a note whose summary has no topics (another style, a note made from text) gets no suggestions', async () => {
    const { t, token, id } = await noteWith({ bulletpoints: { bullets: ['One.', 'Two.'] } })
    expect((await t.call('GET', `/v1/notes/${id}/tags`, { token })).body.suggestedTags).toEqual([])
    const text = (await t.call('POST', '/v1/notes', { token, body: { title: 'x', content: '# Budget\n\nHiring' } })).body.id
    expect((await t.call('GET', `/v1/notes/${text}/tags`, { token })).body.suggestedTags).toEqual([])
  })

  test('the builtin engine\'s summary of a real text gives suggestions made of its topic headings\' words', async () => {
    const text = [
      'The budget for next year grows by ten percent. The budget covers servers, licences and the new office. Finance approves the budget in January.',
      'Hiring starts in February. We hire two engineers and a designer. Hiring interviews run for six weeks.',
      'Travel to the customer site is planned for April. Travel costs are paid from the marketing line.',
    ].join(' ')
    const out = await createBuiltinEngine().summarize({ text, styleId: 'note' })
    const { t, token, id } = await noteWith(out.structuredContent)
    const suggested = (await t.call('GET', `/v1/notes/${id}/tags`, { token })).body.suggestedTags as string[]
    expect(suggested.length).toBeGreaterThan(0)
    expect(suggested.length).toBeLessThanOrEqual(5)
    const headings = ((out.structuredContent as any).note.sections as { heading: string }[]).map(s => s.heading.toLowerCase()).join(' | ')
    for (const s of suggested) expect(headings).toContain(s)
  })
})
