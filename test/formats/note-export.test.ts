import { describe, expect, test } from 'bun:test'
import { unzipSync, strFromU8 } from 'fflate'
import mammoth from 'mammoth'
import type { Nodes, RootContent } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { noteToDocx } from '../../src/formats/note-docx'
import { noteToMarkdown } from '../../src/formats/note-markdown'
import type { ExportableNote } from '../../src/formats/note-outline'

// Both exports are read back by readers that are not ours, into one shape: the Markdown by micromark
// (CommonMark with GitHub's tables, the parser of remark), the .docx by mammoth (which unzips it and
// reads Word's headings, numbered-list paragraphs and tables as HTML). Each test states the document a
// person would see once, as data, and checks both files against it.

type Shown = { h1: string } | { h2: string } | { p: string } | { ul: string[] } | { table: string[][] }

function markdownShown(markdown: string): Shown[] {
  const text = (n: Nodes): string => ('value' in n && typeof n.value === 'string' ? n.value : 'children' in n ? n.children.map(text).join('') : '')
  const block = (n: RootContent): Shown => {
    switch (n.type) {
      case 'heading': return n.depth === 1 ? { h1: text(n) } : { h2: text(n) }
      case 'paragraph': return { p: text(n) }
      case 'list': return { ul: n.children.map(text) }
      case 'table': return { table: n.children.map(row => row.children.map(text)) }
      default: throw new Error(`unexpected Markdown block ${n.type}: ${JSON.stringify(n)}`)
    }
  }
  return fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }).children.map(block)
}

/** mammoth's HTML (h1, h2, p, ul/li, table/tr/th/td, strong) in the same shape. */
async function docxShown(docx: Uint8Array): Promise<Shown[]> {
  const { value: html, messages } = await mammoth.convertToHtml({ buffer: Buffer.from(docx) })
  expect(messages).toEqual([])
  const decode = (s: string) => s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&')
  const shown: Shown[] = []
  let text = ''
  let row: string[] = []
  let inTable = false
  for (const [, close, tag, chars] of html.matchAll(/<(\/?)([a-z0-9]+)[^>]*>|([^<]+)/g)) {
    if (chars !== undefined) { text += decode(chars); continue }
    if (!close) {
      if (tag === 'ul') shown.push({ ul: [] })
      if (tag === 'table') { shown.push({ table: [] }); inTable = true }
      if (['h1', 'h2', 'p', 'li', 'th', 'td'].includes(tag!)) text = ''
      continue
    }
    const last = shown.at(-1)
    if (tag === 'table') inTable = false
    else if (tag === 'h1') shown.push({ h1: text })
    else if (tag === 'h2') shown.push({ h2: text })
    else if (tag === 'li') (last as { ul: string[] }).ul.push(text)
    else if (tag === 'th' || tag === 'td') row.push(text)
    else if (tag === 'tr') { (last as { table: string[][] }).table.push(row); row = [] }
    else if (tag === 'p' && !inTable) shown.push({ p: text })
  }
  return shown
}

/** Both files, read back. */
async function exported(note: ExportableNote) {
  const markdown = noteToMarkdown(note)
  const docx = await noteToDocx(note)
  return { markdown, docx, md: markdownShown(markdown), word: await docxShown(docx) }
}

const MEETING: ExportableNote = {
  title: 'Weekly planning',
  fileName: 'planning-meeting.wav',
  dateCreated: '2026-11-22T10:00:00.000Z',
  styleId: 'meeting-notes',
  summary: 'The team set the beta for March third and split the launch work.',
  structuredContent: {
    'meeting-notes': {
      summary: 'The team set the beta for March third and split the launch work.',
      attendees: ['Maria', 'Tom'],
      decisions: ['Ship the beta on March third.', 'Keep the upload limit at five gigabytes.'],
      actionItems: [
        { task: 'Prepare the release notes', owner: 'Maria', due: 'Friday' },
        { task: 'Order two servers', owner: null, due: null },
      ],
    },
  },
  speakers: [{ id: 'A', name: 'Maria' }, { id: 'B', name: 'Tom' }],
  segments: [
    { start: 0.4, end: 2.1, speaker: 'A', text: 'shall we start with the beta' },
    { start: 2.3, end: 4.8, speaker: 'A', text: 'march third works for me' },
    { start: 5.2, end: 7.9, speaker: 'B', text: 'agreed and i will order two servers' },
    { start: 8.1, end: 9, speaker: 'C', text: 'sounds good' },
    { start: 9.5, end: 61, speaker: 'A', text: 'then the release notes are mine by friday' },
    { start: 72.25, end: 75, speaker: 'A', text: 'thank you all' },
  ],
  transcript: 'ignored when there are segments',
}

describe('Markdown and DOCX export of a note', () => {
  test('meeting notes: title, date and file, summary, attendees, decisions, a table of action items, the transcript with names and times', async () => {
    const expected: Shown[] = [
      { h1: 'Weekly planning' },
      { p: 'Date: 2026-11-22 10:00 UTC · File: planning-meeting.wav · Speakers: Maria, Tom, Speaker C' },
      { h2: 'Summary' },
      { p: 'The team set the beta for March third and split the launch work.' },
      { h2: 'Attendees' },
      { ul: ['Maria', 'Tom'] },
      { h2: 'Decisions' },
      { ul: ['Ship the beta on March third.', 'Keep the upload limit at five gigabytes.'] },
      { h2: 'Action items' },
      { table: [['Task', 'Owner', 'Due'], ['Prepare the release notes', 'Maria', 'Friday'], ['Order two servers', '—', '—']] },
      { h2: 'Transcript' },
      { p: '00:00:00 Maria: shall we start with the beta march third works for me' },
      { p: '00:00:05 Tom: agreed and i will order two servers' },
      { p: '00:00:08 Speaker C: sounds good' }, // a label without a name shown as the API names it
      { p: '00:00:09 Maria: then the release notes are mine by friday' },
      { p: '00:01:12 Maria: thank you all' }, // the same speaker, but a minute after the paragraph began
    ]
    const { md, word, markdown } = await exported(MEETING)
    expect(md).toEqual(expected)
    expect(word).toEqual(expected)
    expect(markdown).toContain('| Task ')
    expect(markdown.endsWith('\n')).toBe(true)
  })

  test('the other styles: a note\'s sections of points, bullet points, and a transcript-style note (no summary part) without speakers', async () => {
    const base = { ...MEETING, speakers: [], segments: null, transcript: 'we agreed on the beta', summary: 'The beta ships in March.' }
    const note = { ...base, styleId: 'note', structuredContent: { note: { summary: 'The beta ships in March.', sections: [{ heading: 'Decisions', points: ['Beta on March third.'] }, { heading: 'Next steps', points: ['Maria: release notes.', 'Tom: servers.'] }] } } }
    const notes: Shown[] = [{ h2: 'Summary' }, { p: 'The beta ships in March.' }, { h2: 'Decisions' }, { ul: ['Beta on March third.'] }, { h2: 'Next steps' }, { ul: ['Maria: release notes.', 'Tom: servers.'] }, { h2: 'Transcript' }, { p: 'we agreed on the beta' }]
    const bullets = { ...base, styleId: 'bulletpoints', summary: '- Beta in March.\n- Two servers.', structuredContent: { bulletpoints: { bullets: ['Beta in March.', 'Two servers.'] } } }
    const transcript = {
      ...base, styleId: 'transcript', summary: 'ignored', structuredContent: { transcript: { segments: [] } },
      segments: [{ start: 0, end: 30, text: 'first part' }, { start: 30, end: 59, text: 'still the first minute' }, { start: 60, end: 64, text: 'the second minute' }],
    }
    const head: Shown[] = [{ h1: 'Weekly planning' }, { p: 'Date: 2026-11-22 10:00 UTC · File: planning-meeting.wav' }]
    for (const [n, expected] of [
      [note, [...head, ...notes]],
      [bullets, [...head, { h2: 'Summary' }, { ul: ['Beta in March.', 'Two servers.'] }, { h2: 'Transcript' }, { p: 'we agreed on the beta' }]],
      [transcript, [...head, { h2: 'Transcript' }, { p: '00:00:00 first part still the first minute' }, { p: '00:01:00 the second minute' }]],
    ] as [ExportableNote, Shown[]][]) {
      const { md, word } = await exported(n)
      expect(md).toEqual(expected)
      expect(word).toEqual(expected)
    }
  })

  test('text that looks like markup stays text: a title with #, *, |, <, [ ], a list marker or a heading in an item, a | in a table cell', async () => {
    const hostile = {
      ...MEETING,
      title: '# Q3 #1 *draft* | _final_ <b>x</b> [link](http://a) `code` ~~old~~',
      structuredContent: { 'meeting-notes': {
        summary: '1. not a list\n- nor this\n> nor a quote',
        attendees: ['Maria *the lead*'],
        decisions: ['# not a heading', '| not | a table |'],
        actionItems: [{ task: 'Split | the\nwork', owner: 'Tom & Co', due: '<tomorrow>' }],
      } },
      segments: [{ start: 0, end: 1, speaker: 'A', text: '**bold?** no' }],
    }
    const expected: Shown[] = [
      { h1: '# Q3 #1 *draft* | _final_ <b>x</b> [link](http://a) `code` ~~old~~' },
      { p: 'Date: 2026-11-22 10:00 UTC · File: planning-meeting.wav · Speakers: Maria' },
      { h2: 'Summary' },
      { p: '1. not a list' }, { p: '- nor this' }, { p: '> nor a quote' },
      { h2: 'Attendees' }, { ul: ['Maria *the lead*'] },
      { h2: 'Decisions' }, { ul: ['# not a heading', '| not | a table |'] },
      { h2: 'Action items' }, { table: [['Task', 'Owner', 'Due'], ['Split | the work', 'Tom & Co', '<tomorrow>']] },
      { h2: 'Transcript' }, { p: '00:00:00 Maria: **bold?** no' },
    ]
    const { md, word } = await exported(hostile)
    expect(md).toEqual(expected)
    expect(word).toEqual(expected)
  })

  test('NUL and the other characters XML forbids are taken out of both files; the .docx parts hold none and Word\'s reader opens it', async () => {
    const bad = '\u0000\u0001\u0008\u000B\u001F\uFFFE\uFFFF\uD800'
    const note = { ...MEETING, title: `Plan${bad} A`, fileName: `rec${bad}.wav`, speakers: [{ id: 'A', name: `Ma${bad}ria` }], segments: [{ start: 0, end: 1, speaker: 'A', text: `hel${bad}lo` }] }
    const { markdown, docx, md, word } = await exported(note)
    expect(markdown).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDFFF]/)
    for (const [name, bytes] of Object.entries(unzipSync(docx))) {
      if (name.endsWith('.xml') || name.endsWith('.rels')) expect(strFromU8(bytes), name).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDFFF]/)
    }
    expect(strFromU8(unzipSync(docx)['docProps/core.xml']!)).toContain('<dc:title>Plan A</dc:title>')
    for (const shown of [md, word]) {
      expect(shown[0]).toEqual({ h1: 'Plan A' })
      expect(shown[1]).toEqual({ p: 'Date: 2026-11-22 10:00 UTC · File: rec.wav · Speakers: Maria' })
      expect(shown.at(-1)).toEqual({ p: '00:00:00 Maria: hello' })
    }
  })

  test('a note created from Markdown keeps its Markdown (its text once, no transcript part); in DOCX its lines are text', async () => {
    const body = '## Agenda\n\n- budget\n- *hiring*'
    const note: ExportableNote = { title: 'Imported', dateCreated: '2026-11-22T10:00:00.000Z', styleId: 'note', summary: body, transcript: body, structuredContent: { markdown: body }, segments: null }
    const { md, word, markdown } = await exported(note)
    expect(markdown).toContain(body)
    expect(md).toEqual([{ h1: 'Imported' }, { p: 'Date: 2026-11-22 10:00 UTC' }, { h2: 'Agenda' }, { ul: ['budget', 'hiring'] }])
    expect(word).toEqual([{ h1: 'Imported' }, { p: 'Date: 2026-11-22 10:00 UTC' }, { p: '## Agenda' }, { p: '- budget' }, { p: '- *hiring*' }])
  })

  test('structured content of another shape is not guessed at: the summary is shown, lists that are not lists say None; no title falls back to the file name', async () => {
    const note = { ...MEETING, title: '  ', segments: null, transcript: '', structuredContent: { 'meeting-notes': { summary: 42, attendees: 'Maria', decisions: [7, null, 'Keep it.'], actionItems: [{ task: 5 }, 'x', { task: 'Call Tom', owner: ['x'], due: 3 }] } } }
    const expected: Shown[] = [
      { h1: 'planning-meeting' },
      { p: 'Date: 2026-11-22 10:00 UTC · File: planning-meeting.wav' },
      { h2: 'Summary' }, { p: MEETING.summary },
      { h2: 'Attendees' }, { p: 'None.' },
      { h2: 'Decisions' }, { ul: ['Keep it.'] },
      { h2: 'Action items' }, { table: [['Task', 'Owner', 'Due'], ['Call Tom', '—', '—']] },
    ]
    const { md, word } = await exported(note)
    expect(md).toEqual(expected)
    expect(word).toEqual(expected)
  })
})
