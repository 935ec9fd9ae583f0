/**
 * A note exported through the API (`GET /v1/notes/{id}/export?format=md|docx`, exportNote), on both
 * back ends: the Markdown read back by micromark and the .docx by mammoth (readers that are not ours),
 * each against the document a person would see, written here as data; the content types and file
 * names; and the refusals a transcript read has (400, 403, 404, 409), the sandbox's own library, and
 * the audit log's record of the export.
 */
import { describe, expect, test } from 'bun:test'
import mammoth from 'mammoth'
import type { Nodes } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

const SEGMENTS: TranscriptSegment[] = [
  { start: 0, end: 4, text: 'We agreed to move the launch to March.', speaker: 'A' },
  { start: 4.5, end: 8, text: 'I will update the budget by Friday.', speaker: 'B' },
  { start: 65, end: 70, text: 'Tom owns the slides.', speaker: 'A' },
]
const MEETING = {
  'meeting-notes': {
    summary: 'The launch moves to March.',
    attendees: ['Speaker A', 'Speaker B'],
    decisions: ['Move the launch to March'],
    actionItems: [{ task: 'Update the budget', owner: 'Speaker B', due: 'Friday' }, { task: 'Prepare the slides', owner: null, due: null }],
  },
}

/** What a person sees of the export once speaker B is named Maria: the text of each block, in order. */
const SHOWN = [
  'Q3 planning / budget',
  'FACTS',
  'Summary', 'The launch moves to March.',
  'Attendees', ['Speaker A', 'Maria'],
  'Decisions', ['Move the launch to March'],
  'Action items', [['Task', 'Owner', 'Due'], ['Update the budget', 'Maria', 'Friday'], ['Prepare the slides', '—', '—']],
  'Transcript',
  '00:00:00 Speaker A: We agreed to move the launch to March.',
  '00:00:04 Maria: I will update the budget by Friday.',
  '00:01:05 Speaker A: Tom owns the slides.',
]
const FACTS = /^Date: \d{4}-\d\d-\d\d \d\d:\d\d UTC · File: planning-meeting\.wav · Speakers: Speaker A, Maria$/
const STALE = 'The transcript changed after this summary was made; summarize the note again to bring it up to date.'

type Block = string | string[] | string[][]

/** The Markdown's blocks as text: headings and paragraphs as strings, lists as arrays, tables as rows. */
function markdownBlocks(md: string): Block[] {
  const toString = (n: Nodes): string => ('value' in n && typeof n.value === 'string' ? n.value : 'children' in n ? n.children.map(toString).join('') : '')
  return fromMarkdown(md, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }).children.map(n =>
    n.type === 'list' ? n.children.map(i => toString(i)) : n.type === 'table' ? n.children.map(r => r.children.map(c => toString(c))) : toString(n))
}

/** The .docx's blocks as mammoth reads them (h1, h2, p, ul, table), in the same shape. */
async function docxBlocks(bytes: Uint8Array): Promise<Block[]> {
  const { value: html, messages } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })
  expect(messages).toEqual([])
  const text = (s: string) => s.replace(/<[^>]+>/g, '').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"')
  const blocks: Block[] = []
  for (const [, tag, inner] of html.matchAll(/<(h1|h2|p|ul|table)>(.*?)<\/\1>/g)) {
    if (tag === 'ul') blocks.push([...inner!.matchAll(/<li>(.*?)<\/li>/g)].map(m => text(m[1]!)))
    else if (tag === 'table') blocks.push([...inner!.matchAll(/<tr>(.*?)<\/tr>/g)].map(r => [...r[1]!.matchAll(/<t[hd]>(.*?)<\/t[hd]>/g)].map(c => text(c[1]!))))
    else blocks.push(text(inner!))
  }
  return blocks
}

/** The blocks with the facts line (its date is the note's creation) checked and named. */
function withFacts(blocks: Block[]): Block[] {
  expect(blocks[1]).toMatch(FACTS)
  return blocks.map((b, i) => (i === 1 ? 'FACTS' : b))
}

for (const b of backEnds) describe.skipIf(b.skip)(`a note exported as Markdown and DOCX, on ${b.name}`, () => {
  const open = closingAfterEach(b)

  /** A recording's note as the pipeline leaves it (transcript with speakers, a meeting-notes summary), speaker B named Maria. */
  async function meetingNote() {
    const t = createTestApp({ store: await open() })
    const token = await t.key()
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'planning-meeting.wav', contentType: 'audio/wav' } })
    const id = up.body.noteId as string
    await t.services.notes.saveTranscript(id, {
      transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS,
      speakers: ['A', 'B'].map(label => ({ label, name: null, engine: 'builtin', embedding: null, profileId: null })),
    })
    await t.services.notes.finish(id, { title: 'Q3 planning / budget', summary: 'The launch moves to March.', structuredContent: MEETING, styleId: 'meeting-notes', language: 'en', segments: SEGMENTS })
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Maria' } })).status).toBe(200)
    return { t, token, id }
  }

  async function exported(t: ReturnType<typeof createTestApp>, token: string, id: string, format: string) {
    const res = await t.app.handle(new Request(`http://localhost/v1/notes/${id}/export?format=${format}`, { headers: { authorization: `Bearer ${token}` } }))
    return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
  }

  test('Markdown and DOCX show the same document: title, facts, the meeting notes with names given, the transcript by turns; content types and a file name from the title', async () => {
    const { t, token, id } = await meetingNote()
    const md = await exported(t, token, id, 'md')
    expect(md.status).toBe(200)
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect(md.headers.get('content-disposition')).toBe('attachment; filename="Q3 planning budget.md"')
    expect(withFacts(markdownBlocks(new TextDecoder().decode(md.bytes)))).toEqual(SHOWN)

    const docx = await exported(t, token, id, 'docx')
    expect(docx.status).toBe(200)
    expect(docx.headers.get('content-type')).toBe(DOCX)
    expect(docx.headers.get('content-disposition')).toBe('attachment; filename="Q3 planning budget.docx"')
    expect(withFacts(await docxBlocks(docx.bytes))).toEqual(SHOWN)

    // each export is in the audit log as a read of the transcript, by its format
    const events = (await t.call('GET', '/v1/audit-events?action=note.transcript_exported', { token })).body.data
    expect(events.map((e: { target: { id: string }; details: { format: string } }) => [e.target.id, e.details.format])).toEqual([[id, 'md']])
  })

  test('after a segment is given to another speaker, both files say the summary predates the transcript', async () => {
    const { t, token, id } = await meetingNote()
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/2`, { token, body: { speaker: 'B' } })).status).toBe(200)
    const md = markdownBlocks(new TextDecoder().decode((await exported(t, token, id, 'md')).bytes))
    const docx = await docxBlocks((await exported(t, token, id, 'docx')).bytes)
    for (const blocks of [md, docx]) {
      expect(blocks[2]).toBe(STALE)
      expect(blocks.at(-1)).toBe('00:01:05 Maria: Tom owns the slides.')
    }
  })

  test('a note from text: its Markdown as written, the title as the file name, accents kept in filename*', async () => {
    const t = createTestApp({ store: await open() })
    const token = await t.key()
    const id = (await t.call('POST', '/v1/notes', { token, body: { title: 'Réunion', content: '# Agenda\n\n- budget\n- slides' } })).body.id
    const md = await exported(t, token, id, 'md')
    expect(md.headers.get('content-disposition')).toBe('attachment; filename=Reunion.md; filename*=UTF-8\'\'R%C3%A9union.md')
    expect(markdownBlocks(new TextDecoder().decode(md.bytes)).filter((_, i) => i !== 1)).toEqual(['Réunion', 'Agenda', ['budget', 'slides']])
    expect((await docxBlocks((await exported(t, token, id, 'docx')).bytes)).filter((_, i) => i !== 1)).toEqual(['Réunion', '# Agenda', '- budget', '- slides'])
  })

  test('400 for a format outside md and docx or none, 404 for another account\'s note or a live note to a sandbox key, 409 while processing, 403 without notes:read', async () => {
    const { t, token, id } = await meetingNote()
    for (const query of ['format=pdf', '']) {
      const r = await t.call('GET', `/v1/notes/${id}/export?${query}`, { token })
      expectEnvelope(r, 400, 'invalid_request')
      expect(r.body.error.details.map((d: { field: string }) => d.field)).toEqual(['format'])
    }
    expectEnvelope(await t.call('GET', `/v1/notes/${id}/export?format=md`, { token: await t.key({ email: 'other@example.com' }) }), 404, 'not_found')
    const sandbox = await t.key({ sandbox: true })
    expectEnvelope(await t.call('GET', `/v1/notes/${id}/export?format=md`, { token: sandbox }), 404, 'not_found')
    const own = (await t.call('POST', '/v1/notes', { token: sandbox, body: { title: 'Sample', content: 'Sandbox text.' } })).body.id
    expect((await exported(t, sandbox, own, 'docx')).status).toBe(200)

    const pending = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'later.wav', contentType: 'audio/wav' } })).body.noteId
    const busy = await t.call('GET', `/v1/notes/${pending}/export?format=docx`, { token })
    expectEnvelope(busy, 409, 'conflict')
    expect(busy.body.error.message).toContain(`GET /v1/notes/${pending}/status`)
    expectEnvelope(await t.call('GET', `/v1/notes/${id}/export?format=md`, { token: await t.key({ scopes: ['summaries:write'] }) }), 403, 'insufficient_scope')
    // the sandbox note's export is the account's one export: none of the refusals was recorded
    const events = (await t.call('GET', '/v1/audit-events?action=note.transcript_exported', { token })).body.data
    expect(events.map((e: { target: { id: string }; details: unknown }) => [e.target.id, e.details])).toEqual([[own, { format: 'docx', sandbox: true }]])
  })
})
