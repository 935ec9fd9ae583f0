import { describe, expect, test } from 'bun:test'
import { createBuiltinEngine, NO_ANSWER, UNTITLED } from '../../../../src/engines/llm/builtin'
import type { MeetingNotes } from '../../../../src/engines/llm/builtin'
import { retrievePassages } from '../../../../src/engines/llm/retrieval'
import { sentencesText, timedSentences, type TimedSentence } from '../../../../src/engines/llm/sentences'
import { summarizeLong } from '../../../../src/engines/llm/summarize'
import { MEETING_FAST, MEETING_SCRIPT, MEETING_SPOKEN, transcriptOf } from '../../../fixtures/spoken-meeting'

/**
 * The builtin engine on what PocketSphinx makes of a spoken meeting (test/fixtures/spoken-meeting.ts:
 * real word times, no punctuation): issue 23's meeting got a three-keyword title, the whole
 * transcript as its summary, one 150-word decision, and the whole transcript as an answer.
 */
const engine = createBuiltinEngine()
const transcript = transcriptOf(MEETING_SPOKEN)
const sentences = timedSentences(transcript, MEETING_SPOKEN)!
const THREE_KEYWORDS = /^[\p{L}' ]+, [\p{L}' ]+ and [\p{L}' ]+$/u
const STAMP = /\[\d+:\d{2}–\d+:\d{2}\] /g

async function ask(question: string, timed: TimedSentence[] = sentences) {
  const text = sentencesText(timed)
  return (await engine.answer({ question, passages: retrievePassages(text, question, 5), sentences: timed })).answer
}

describe('builtin engine on a PocketSphinx transcript', () => {
  test('meeting notes: a title that is a sentence, a summary shorter than the transcript, the decisions, Tom and his action item', async () => {
    const out = await summarizeLong(engine, { text: transcript, styleId: 'meeting-notes', segments: MEETING_SPOKEN })
    const notes = out.structuredContent['meeting-notes'] as MeetingNotes
    expect(out.title).not.toMatch(THREE_KEYWORDS)
    expect(out.title).not.toBe(UNTITLED)
    expect(sentences.some(s => s.text.startsWith(out.title.replace(/…$/, '')))).toBe(true)
    expect(out.summary.length).toBeLessThan(0.7 * transcript.length)
    expect(out.summary.split('. ').length).toBeGreaterThanOrEqual(3)
    expect(notes.attendees).toContain('Tom')
    expect(notes.decisions).toContain('We decided to build on it to a Friday because the tests are not alone.')
    for (const d of notes.decisions) expect(d.split(' ').length).toBeLessThanOrEqual(25)
    expect(notes.actionItems).toContainEqual({ task: 'Feed if the release notes like the big', owner: 'Tom', due: null })
  })

  test('the faster meeting (shorter pauses, like issue 23\'s): several sentences, no 100-word decision', async () => {
    const out = await summarizeLong(engine, { text: transcriptOf(MEETING_FAST), styleId: 'meeting-notes', segments: MEETING_FAST })
    const notes = out.structuredContent['meeting-notes'] as MeetingNotes
    expect(out.title).not.toMatch(THREE_KEYWORDS)
    expect(out.summary.length).toBeLessThan(0.75 * transcriptOf(MEETING_FAST).length)
    expect(notes.decisions[0]).toBe('We decided to do a lot to Friday because tests are gone.')
    for (const d of notes.decisions) expect(d.split(' ').length).toBeLessThanOrEqual(25)
  })

  test('without word times the one unpunctuated run gets no summary, said plainly, instead of itself', async () => {
    for (const styleId of ['note', 'bulletpoints', 'meeting-notes'] as const) {
      const out = await summarizeLong(engine, { text: transcript, styleId })
      expect(out.title).toBe(UNTITLED)
      expect(out.summary).toMatch(/^No summary: the transcript is one run of 131 words without punctuation or word times, so it cannot be cut into sentences/)
    }
    const notes = (await engine.summarize({ text: transcript, styleId: 'meeting-notes' })).structuredContent['meeting-notes'] as MeetingNotes
    expect(notes.decisions).toEqual([])
  })

  test('the same meeting typed with punctuation is summarized the same with or without the word times', async () => {
    for (const styleId of ['note', 'meeting-notes'] as const) {
      expect(await summarizeLong(engine, { text: MEETING_SCRIPT, styleId, segments: MEETING_SPOKEN })).toEqual(await summarizeLong(engine, { text: MEETING_SCRIPT, styleId }))
    }
    const notes = (await engine.summarize({ text: MEETING_SCRIPT, styleId: 'meeting-notes' })).structuredContent['meeting-notes'] as MeetingNotes
    expect(notes.attendees).toEqual(expect.arrayContaining(['Maria', 'Tom', 'Lars']))
  })
})

describe('builtin answers on a PocketSphinx transcript', () => {
  test('at most three sentences, each with when it was said, that contain the fact', async () => {
    for (const [question, fact] of [
      ['What did we decide?', 'We decided to build on it to a Friday'],
      ['Who will write the plan?', 'write a plan'],
      ['What was the budget in dollars?', 'ten thousand dollars'],
    ] as const) {
      const answer = await ask(question)
      expect(answer).toContain(fact)
      const said = answer.split(STAMP).filter(Boolean)
      expect(answer.match(STAMP)!.length).toBe(said.length)
      expect(said.length).toBeLessThanOrEqual(3)
      expect(answer.length).toBeLessThan(transcript.length / 3)
    }
    expect(await ask('What did we decide?')).toStartWith('[0:12–0:17] We decided to build on it to a Friday because the tests are not alone.')
  })

  test('a question about something the meeting never mentions gets the "does not answer" reply', async () => {
    expect(await ask('What is the weather in Paris?')).toBe(NO_ANSWER)
  })

  test('a question about the unpunctuated run without times is answered by a part of it, never the whole', async () => {
    const q = 'Who will write the plan?'
    const { answer } = await engine.answer({ question: q, passages: retrievePassages(transcript, q, 5) })
    expect(answer).toContain('write a plan')
    expect(answer.length).toBeLessThan(transcript.length / 2)
  })
})
