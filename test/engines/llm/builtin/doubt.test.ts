import { describe, expect, test } from 'bun:test'
import type { TranscriptSegment } from '../../../../src/engines/asr/engine'
import { createBuiltinEngine, type MeetingNotes } from '../../../../src/engines/llm/builtin'
import type { StyleId, SummaryInput } from '../../../../src/engines/llm/engine'
import { summarizeLong } from '../../../../src/engines/llm/summarize'

/**
 * The builtin summarizer on transcripts whose words carry the engine's confidence (PocketSphinx's
 * word posteriors): facts are stated only from sentences heard clearly (fewer than half of their
 * words below 0.7), and the summary says how much was heard with low confidence (docs/decisions.md,
 * "Output that admits doubt"). The transcripts are written here as PocketSphinx gives them: lower
 * case, no punctuation, each word with its times and confidence, a pause of a second between turns.
 */
const engine = createBuiltinEngine()

type Turn = [speaker: string | null, words: string, confidence: number | number[]]

function heard(turns: Turn[]): TranscriptSegment[] {
  let t = 0.5
  return turns.map(([speaker, text, confidence]) => {
    const words = text.split(' ').map((word, i) => {
      const w = { word, start: Math.round(t * 100) / 100, end: Math.round((t + 0.3) * 100) / 100, confidence: typeof confidence === 'number' ? confidence : confidence[i]! }
      t += 0.4
      return w
    })
    t += 1
    return { start: words[0]!.start, end: words.at(-1)!.end, text, words, ...(speaker ? { speaker } : {}) }
  })
}

/** The same transcript as an engine without confidences gives it (whisper.cpp gives none). */
const withoutConfidence = (segments: TranscriptSegment[]) => segments.map(s => ({ ...s, words: s.words!.map(({ word, start, end }) => ({ word, start, end })) }))
const withConfidence = (segments: TranscriptSegment[], confidence: number) => segments.map(s => ({ ...s, words: s.words!.map(w => ({ ...w, confidence })) }))

const summarize = (segments: TranscriptSegment[], styleId: StyleId, extra: Partial<SummaryInput> = {}) =>
  summarizeLong(engine, { text: segments.map(s => s.text).join(' '), styleId, segments, ...extra })

// Maria, Tom and Anna were heard clearly; Lars's turn and Anna's decision were not ("homeless" is
// what the engine made of a word it barely heard): 13 of the 38 words are below 0.7
const MEETING = heard([
  ['Maria', 'good morning everyone this is maria', 0.95],
  ['Maria', 'we decided to move the launch to friday', 0.9],
  ['Tom', 'i will finish the release notes by thursday', 0.92],
  ['Lars', 'homeless will order the servers by monday', [0.31, 0.45, 0.2, 0.8, 0.35, 0.6, 0.15]],
  ['Anna', 'we agreed to buy two new servers in march', [0.4, 0.55, 0.9, 0.3, 0.2, 0.65, 0.5, 0.75, 0.1]],
])

const MEETING_NOTICE = '(2 of 5 sentences were heard unclearly and left out of this summary: 13 of 38 words were heard with low confidence.)'

// 12 of its 14 words below 0.7: no sentence heard clearly
const UNHEARD = heard([
  ['Tom', 'homeless will order the servers by monday', [0.31, 0.45, 0.2, 0.8, 0.35, 0.6, 0.15]],
  ['Anna', 'we agreed to buy new servers soon', [0.4, 0.55, 0.75, 0.3, 0.2, 0.65, 0.5]],
])
const UNHEARD_NOTICE =
  'The transcript is unreliable: 12 of 14 words were heard with low confidence, and no sentence clearly, so this summary states no decision, action item or owner. Listen to the recording or correct the transcript, then summarize again.'

// 16 of 24 words below 0.7, but Maria's sentence heard clearly
const MOSTLY_UNHEARD = heard([
  ['Maria', 'we decided to move the launch to friday', 0.9],
  ['Tom', 'homeless will order the servers by monday', 0.2],
  ['Anna', 'we agreed to buy two new servers in march', 0.3],
])
const MOSTLY_NOTICE =
  'The transcript is unreliable: 16 of 24 words were heard with low confidence. This summary comes only from the 1 of 3 sentences heard clearly; no decision, action item or owner is taken from the others. Listen to the recording or correct the transcript, then summarize again.'

const meetingOf = (out: { structuredContent: Record<string, unknown> }) => out.structuredContent['meeting-notes'] as MeetingNotes & { summary: string }
const noteOf = (out: { structuredContent: Record<string, unknown> }) => out.structuredContent.note as { summary: string; sections: { heading: string; points: string[] }[] }
const bulletsOf = (out: { structuredContent: Record<string, unknown> }) => (out.structuredContent.bulletpoints as { bullets: string[] }).bullets

describe('builtin engine: output that admits doubt', () => {
  test('sentences heard unclearly give no decision, action item or owner; those heard clearly still do; the summary says how much was unclear', async () => {
    const out = await summarize(MEETING, 'meeting-notes')
    const notes = meetingOf(out)
    expect(notes.decisions).toEqual(['We decided to move the launch to Friday.'])
    expect(notes.actionItems).toEqual([{ task: 'Finish the release notes', owner: 'Tom', due: 'Thursday' }])
    // the speakers' labels come from diarization, not from the words: all four attended
    expect(notes.attendees).toEqual(['Maria', 'Tom', 'Lars', 'Anna'])
    expect(out.summary).toEndWith(` ${MEETING_NOTICE}`)
    expect(notes.summary).toBe(out.summary)
    for (const said of [out.summary, out.title, JSON.stringify(notes)]) expect(said).not.toMatch(/homeless|servers/i)
  })

  test('a name heard unclearly is not taken for an attendee or an owner (no speaker labels)', async () => {
    const segments = heard([
      [null, 'homeless will order the servers by monday', [0.31, 0.45, 0.2, 0.8, 0.35, 0.6, 0.15]],
      [null, 'the budget is ten thousand dollars for this quarter', 0.9],
    ])
    const notes = meetingOf(await summarize(segments, 'meeting-notes'))
    expect(notes.attendees).toEqual([])
    expect(notes.actionItems).toEqual([])
    // heard clearly, the same words name an attendee and an owner, as they always did
    const clear = meetingOf(await summarize(withConfidence(segments, 0.9), 'meeting-notes'))
    expect(clear.attendees).toEqual(['Homeless'])
    expect(clear.actionItems).toEqual([{ task: 'Order the servers', owner: 'Homeless', due: 'Monday' }])
  })

  test('no sentence heard clearly: every style states nothing from the words, leads with the warning, and is titled by the file name', async () => {
    const fileName = 'planning-meeting.wav'
    const notes = await summarize(UNHEARD, 'meeting-notes', { fileName })
    expect(notes).toEqual({
      title: 'planning-meeting',
      summary: UNHEARD_NOTICE,
      structuredContent: { 'meeting-notes': { summary: UNHEARD_NOTICE, attendees: ['Tom', 'Anna'], decisions: [], actionItems: [] } },
    })
    expect(await summarize(UNHEARD, 'note', { fileName })).toEqual({ title: 'planning-meeting', summary: UNHEARD_NOTICE, structuredContent: { note: { summary: UNHEARD_NOTICE, sections: [] } } })
    expect(await summarize(UNHEARD, 'bulletpoints', { fileName })).toEqual({ title: 'planning-meeting', summary: UNHEARD_NOTICE, structuredContent: { bulletpoints: { bullets: [] } } })
    // the transcript style keeps every segment: only its title comes from the file name
    const transcript = await summarize(UNHEARD, 'transcript', { fileName })
    expect(transcript.title).toBe('planning-meeting')
    expect((transcript.structuredContent.transcript as { segments: unknown[] }).segments.length).toBe(2)
  })

  test('the title without a file name, or with a folder and dots in it', async () => {
    expect((await summarize(UNHEARD, 'note')).title).toBe('Untitled recording')
    expect((await summarize(UNHEARD, 'note', { fileName: 'C:\\fakepath\\weekly.sync.2026-11-22.m4a' })).title).toBe('weekly.sync.2026-11-22')
    expect((await summarize(UNHEARD, 'note', { fileName: 'recordings/Team call' })).title).toBe('Team call')
    expect((await summarize(UNHEARD, 'note', { fileName: '.wav' })).title).toBe('Untitled recording')
  })

  test('mostly unreliable: the warning leads, the summary, bullets and sections come only from the sentence heard clearly, and the title from the file name (else that sentence)', async () => {
    const decision = 'We decided to move the launch to Friday.'
    const notes = await summarize(MOSTLY_UNHEARD, 'meeting-notes', { fileName: 'planning-meeting.wav' })
    expect(notes.title).toBe('planning-meeting')
    expect((await summarize(MOSTLY_UNHEARD, 'meeting-notes')).title).toBe('We decided to move the launch to Friday')
    expect(notes.summary).toBe(`${MOSTLY_NOTICE} ${decision}`)
    expect(meetingOf(notes)).toEqual({ summary: notes.summary, attendees: ['Maria', 'Tom', 'Anna'], decisions: [decision], actionItems: [] })
    const bullets = await summarize(MOSTLY_UNHEARD, 'bulletpoints')
    expect(bulletsOf(bullets)).toEqual([decision])
    expect(bullets.summary).toBe(`${MOSTLY_NOTICE}\n\n- ${decision}`)
    const note = await summarize(MOSTLY_UNHEARD, 'note')
    expect(note.summary).toBe(`${MOSTLY_NOTICE} ${decision}`)
    expect(noteOf(note).sections.flatMap(s => s.points)).toEqual([decision])
  })

  test('fragments heard clearly ("We.", "Okay.") are not what the summary, the bullets or the title are made of', async () => {
    const decision = 'We decided to move the launch to Friday.'
    const segments = heard([
      ['Maria', 'we', 0.95],
      ['Maria', 'we decided to move the launch to friday', 0.9],
      ['Tom', 'okay', 0.9],
      ['Tom', 'homeless will order the servers by monday', 0.2],
      ['Anna', 'we agreed to buy two new servers in march', 0.3],
    ])
    const bullets = await summarize(segments, 'bulletpoints')
    expect(bulletsOf(bullets)).toEqual([decision])
    expect(bullets.title).toBe('We decided to move the launch to Friday')
    expect((await summarize(segments, 'note')).summary).toEndWith(`heard clearly; no decision, action item or owner is taken from the others. Listen to the recording or correct the transcript, then summarize again. ${decision}`)
  })

  test('a stretch of text whose words carry no confidence does not hide the words heard unclearly after it', async () => {
    const [order, agreed] = heard([
      [null, 'homeless will order the servers by monday', 0.2],
      [null, 'we agreed to buy two new servers in march', 0.2],
    ])
    const typed = 'The budget is ten thousand dollars for this quarter, and the team went through every line of it twice before the meeting. ' +
      'Nobody expects it to change, because the prices of the servers were fixed in the contract that was signed last spring.'
    // a transcript with its own punctuation (an edited one): the middle segment has no word times
    const segments = [
      { ...order!, text: 'Homeless will order the servers by Monday.' },
      { start: 16, end: 30, text: typed },
      { ...agreed!, start: 31, end: 34, words: agreed!.words!.map(w => ({ ...w, start: w.start + 20, end: w.end + 20 })), text: 'We agreed to buy two new servers in March.' },
    ]
    const notes = meetingOf(await summarize(segments, 'meeting-notes'))
    expect(notes.decisions).toEqual([])
    expect(notes.actionItems).toEqual([])
    expect(notes.summary).toStartWith('The transcript is unreliable: 16 of 16 words were heard with low confidence. This summary comes only from the 2 of 4 sentences heard clearly;')
    expect(notes.summary).toContain('The budget is ten thousand dollars')
  })
})

describe('builtin engine: input without doubt is summarized as before', () => {
  // what the builtin engine gave this transcript before word confidences were read (main at 4e0b860)
  const TODAY = {
    'meeting-notes': {
      title: 'We decided to move the launch to Friday',
      summary: 'We decided to move the launch to Friday. Homeless will order the servers by Monday. We agreed to buy two new servers in march.',
      structuredContent: {
        'meeting-notes': {
          summary: 'We decided to move the launch to Friday. Homeless will order the servers by Monday. We agreed to buy two new servers in march.',
          attendees: ['Maria', 'Tom', 'Lars', 'Anna'],
          decisions: ['We decided to move the launch to Friday.', 'We agreed to buy two new servers in march.'],
          actionItems: [{ task: 'Finish the release notes', owner: 'Tom', due: 'Thursday' }, { task: 'Order the servers', owner: 'Homeless', due: 'Monday' }],
        },
      },
    },
    bulletpoints: {
      title: 'We decided to move the launch to Friday',
      summary: '- Good morning everyone this is Maria.\n- We decided to move the launch to Friday.\n- I will finish the release notes by Thursday.\n- Homeless will order the servers by Monday.\n- We agreed to buy two new servers in march.',
      structuredContent: {
        bulletpoints: {
          bullets: ['Good morning everyone this is Maria.', 'We decided to move the launch to Friday.', 'I will finish the release notes by Thursday.', 'Homeless will order the servers by Monday.', 'We agreed to buy two new servers in march.'],
        },
      },
    },
    note: {
      title: 'We decided to move the launch to Friday',
      summary: 'We decided to move the launch to Friday. Homeless will order the servers by Monday. We agreed to buy two new servers in march.',
      structuredContent: {
        note: {
          summary: 'We decided to move the launch to Friday. Homeless will order the servers by Monday. We agreed to buy two new servers in march.',
          sections: [{ heading: 'Servers, buy and finish', points: ['We agreed to buy two new servers in march.'] }],
        },
      },
    },
  }

  for (const styleId of ['meeting-notes', 'bulletpoints', 'note'] as const) {
    test(`${styleId}: words without confidences (whisper.cpp), or all heard clearly (an edited transcript), give today's summary; a file name changes nothing`, async () => {
      expect(await summarize(withoutConfidence(MEETING), styleId, { fileName: 'planning-meeting.wav' })).toEqual(TODAY[styleId])
      expect(await summarize(withConfidence(MEETING, 1), styleId)).toEqual(TODAY[styleId])
    })
  }

  test('typed text (POST /v1/summaries) is summarized as before, with or without a file name', async () => {
    const text = 'Maria: We decided to move the launch to Friday.\nTom: I will finish the release notes by Thursday.'
    const plain = await engine.summarize({ text, styleId: 'meeting-notes' })
    expect(await engine.summarize({ text, styleId: 'meeting-notes', fileName: 'typed.txt' })).toEqual(plain)
    expect(meetingOf(plain).actionItems).toEqual([{ task: 'Finish the release notes', owner: 'Tom', due: 'Thursday' }])
    expect(plain.summary).not.toMatch(/confidence|unreliable/)
  })
})
