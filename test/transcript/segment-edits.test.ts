/**
 * Split, merge, reassign a word range, find and replace: pure functions of src/transcript/ (issue 31).
 * Expected times are the word boundaries written here as data.
 */
import { describe, expect, test } from 'bun:test'
import { mergeSegments, reassignWords, segmentWords, splitSegment } from '../../src/transcript/edits'
import { paragraphReplacements, segmentReplacements } from '../../src/transcript/replace'
import { spokenBy, type Transcript, type TranscriptSpeaker } from '../../src/transcript/transcript'

const w = (word: string, start: number, end: number, confidence?: number) => ({ word, start, end, ...(confidence === undefined ? {} : { confidence }) })

const T: Transcript = {
  text: 'the budget is ready order the servers',
  segments: [
    { start: 0, end: 2, text: 'the budget is ready', speaker: 'A', avgLogprob: -0.5, words: [w('the', 0.1, 0.3, 0.9), w('budget', 0.3, 0.9, 0.5), w('is', 1.0, 1.2, 1), w('ready', 1.3, 1.9, 0.8)] },
    { start: 2, end: 4, text: 'order the servers', speaker: 'B' },
  ],
  speakers: [{ label: 'A', name: 'Maria' }, { label: 'B', name: null }],
}
const blank = (label: string): TranscriptSpeaker => ({ label, name: null })
const frozen = JSON.stringify(T)

describe('split', () => {
  test('at word 2: the first ends where word 1 ends, the second starts where word 2 starts; both keep the speaker and their words', () => {
    const next = splitSegment(T, 0, 2)
    expect(next.segments!.map(s => [s.start, s.end, s.text, s.speaker])).toEqual([[0, 0.9, 'the budget', 'A'], [1.0, 2, 'is ready', 'A'], [2, 4, 'order the servers', 'B']])
    expect(next.segments![1]!.words!.map(x => x.word)).toEqual(['is', 'ready'])
    // the mean log of the words' confidences, for each half: ln(0.9)+ln(0.5) over 2; ln(1)+ln(0.8) over 2
    expect(next.segments![0]!.avgLogprob).toBe(-0.3993)
    expect(next.segments![1]!.avgLogprob).toBe(-0.1116)
    expect(next.text).toBe(T.text)
    expect(JSON.stringify(T)).toBe(frozen)
  })

  test('a segment without word times is split in proportion to its letters and says so', () => {
    const next = splitSegment(T, 1, 1) // "order" 5 letters of 5+3+7 = 15, over 2 s
    expect(next.segments!.slice(1).map(s => [s.start, s.end, s.text, s.timing])).toEqual([[2, 2.667, 'order', 'proportional'], [2.667, 4, 'the servers', 'proportional']])
    expect(next.segments![1]!.words).toBeUndefined()
  })
})

describe('merge', () => {
  test('texts joined with one space, start of the first, end of the second, speaker of the first; words only when both had them', () => {
    const next = mergeSegments(T, 0, undefined, blank)
    expect(next.segments).toHaveLength(1)
    expect(next.segments![0]).toMatchObject({ start: 0, end: 4, text: 'the budget is ready order the servers', speaker: 'A' })
    expect(next.segments![0]!.words).toBeUndefined()
    expect(spokenBy(next.segments, 'B')).toBe('')
    expect(next.speakers).toEqual(T.speakers)
  })

  test('split then merged again gives the segment back, words and all', () => {
    const back = mergeSegments(splitSegment(T, 0, 1), 0, undefined, blank)
    expect(back.segments![0]).toEqual({ ...T.segments![0]!, avgLogprob: -0.2554 }) // ln(0.9·0.5·1·0.8) over 4
  })

  test('with a speaker, said by that speaker; a new label becomes an unnamed speaker in label order', () => {
    const next = mergeSegments(T, 0, 'C', blank)
    expect(next.segments![0]!.speaker).toBe('C')
    expect(next.speakers).toEqual([{ label: 'A', name: 'Maria' }, { label: 'B', name: null }, { label: 'C', name: null }])
  })
})

describe('reassign a word range', () => {
  test('words 1..2 to B: three segments timed at the word boundaries, what each speaker said follows', () => {
    const { transcript, segments } = reassignWords(T, 0, 1, 2, 'B', blank)
    expect(segments).toEqual([0, 1, 2])
    expect(transcript.segments!.map(s => [s.start, s.end, s.text, s.speaker])).toEqual([
      [0, 0.3, 'the', 'A'], [0.3, 1.2, 'budget is', 'B'], [1.3, 2, 'ready', 'A'], [2, 4, 'order the servers', 'B'],
    ])
    expect(spokenBy(transcript.segments, 'A')).toBe('the ready')
    expect(spokenBy(transcript.segments, 'B')).toBe('budget is order the servers')
  })

  test('from the first word: two segments; every word: the speaker changes, nothing is split', () => {
    expect(reassignWords(T, 0, 0, 1, 'B', blank).transcript.segments!.map(s => [s.start, s.end, s.speaker])).toEqual([[0, 0.9, 'B'], [1.0, 2, 'A'], [2, 4, 'B']])
    const all = reassignWords(T, 0, 0, 3, 'B', blank)
    expect(all.segments).toEqual([0])
    expect(all.transcript.segments![0]).toEqual({ ...T.segments![0]!, speaker: 'B' })
  })

  test('to a new speaker C: C joins the speakers, unnamed', () => {
    const { transcript } = reassignWords(T, 0, 3, 3, 'C', blank)
    expect(transcript.speakers.map(s => s.label)).toEqual(['A', 'B', 'C'])
    expect(spokenBy(transcript.segments, 'C')).toBe('ready')
  })
})

describe('the words of a segment', () => {
  test('its tokens; the timed words when one per token, else proportional', () => {
    expect(segmentWords(T.segments![0]!).measured).toBe(true)
    const other = segmentWords({ start: 0, end: 1, text: 'a  b', words: [w('a', 0, 1)] })
    expect([other.tokens, other.measured, other.words.map(x => [x.start, x.end])]).toEqual([['a', 'b'], false, [[0, 0.5], [0.5, 1]]])
  })
})

describe('find and replace', () => {
  const texts = ['Ill disposed young man', 'he was ill', 'still willing', 'Straße and STRASSE', 'cafe\u0301 au lait']
  const o = { find: 'ill', replace: 'not ill', matchCase: false, wholeWord: true }

  test('whole words, any case: "Ill" and "ill" but not "still" or "willing"', () => {
    expect(segmentReplacements(texts, o)).toEqual([
      { segment: 0, before: 'Ill disposed young man', after: 'not ill disposed young man', count: 1 },
      { segment: 1, before: 'he was ill', after: 'he was not ill', count: 1 },
    ])
  })

  test('matchCase: only "ill"; not whole words: inside other words too', () => {
    expect(segmentReplacements(texts, { ...o, matchCase: true }).map(r => r.segment)).toEqual([1])
    expect(segmentReplacements(texts, { ...o, find: 'ill', replace: 'ILL', wholeWord: false }).map(r => [r.segment, r.after, r.count])).toEqual([
      [0, 'ILL disposed young man', 1], [1, 'he was ILL', 1], [2, 'stILL wILLing', 2],
    ])
  })

  test('Unicode: a composed é matches a decomposed one; ß folds by simple case only; replace is literal ($&)', () => {
    expect(segmentReplacements(texts, { ...o, find: 'café', replace: '$& crème' }).map(r => r.after)).toEqual(['$& crème au lait'])
    expect(segmentReplacements(texts, { ...o, find: 'straße', replace: 'road' }).map(r => r.after)).toEqual(['road and STRASSE'])
    expect(segmentReplacements(['Ärger ärger'], { ...o, find: 'ÄRGER', replace: 'x' })[0]!.count).toBe(2)
  })

  test('every character of find is literal, regular-expression syntax included (the standing fuzz found "- " refused by the u flag)', () => {
    const odd = ['a - b', 'x+-N1\\ y', 'cost (usd) $5.00 [sic] {ok} a|b ^up* /slash/']
    const segmentsOf: [string, number[]][] = [['-', [0, 1]], ['+-N1\\', [1]], ['(usd)', [2]], ['$5.00', [2]], ['[sic]', [2]], ['{ok}', [2]], ['a|b', [2]], ['^up*', [2]], ['/slash/', [2]]]
    for (const [find, segments] of segmentsOf) {
      expect(segmentReplacements(odd, { find, replace: 'Z', matchCase: true, wholeWord: false }).map(r => r.segment), find).toEqual(segments)
    }
  })

  test('removing a word leaves one space; `only` limits it to those segments', () => {
    expect(segmentReplacements(['he was ill today'], { ...o, replace: '' })[0]!.after).toBe('he was today')
    expect(segmentReplacements(texts, o, new Set([1])).map(r => r.segment)).toEqual([1])
  })

  test('an untimed transcript: paragraphs numbered as verbose_json numbers them, the rest kept byte for byte', () => {
    const text = '# Plan\n\nThe ill wind.\n  \n\nNothing here\r\n\r\n- ill again\n'
    const r = paragraphReplacements(text, o)
    expect(r.changes.map(c => [c.segment, c.after])).toEqual([[1, 'The not ill wind.'], [3, '- not ill again']])
    expect(r.text).toBe('# Plan\n\nThe not ill wind.\n  \n\nNothing here\r\n\r\n- not ill again\n')
    expect(paragraphReplacements(text, o, new Set([3])).text).toBe('# Plan\n\nThe ill wind.\n  \n\nNothing here\r\n\r\n- not ill again\n')
  })
})
