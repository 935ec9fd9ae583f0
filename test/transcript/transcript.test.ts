import { describe, expect, test } from 'bun:test'
import { mergeSpeaker, nameSpeaker, reassignSegment } from '../../src/transcript/edits'
import { displayName, namedSegments, speakerNames, speakingTime, spokenBy, transcriptText, unnamedLabelIn, wordsOf, type Transcript, type TranscriptSpeaker } from '../../src/transcript/transcript'

/** A speaker with what the notes module keeps beside the label and name (a voice print). */
type Voiced = TranscriptSpeaker & { embedding: string | null }

const TRANSCRIPT: Transcript<Voiced> = {
  text: 'The budget is ready. Order the servers. Friday then. Agreed.',
  segments: [
    { start: 0, end: 2, text: 'The budget is ready.', speaker: 'A', words: [{ word: 'The', start: 0, end: 0.3 }, { word: 'budget', start: 0.3, end: 1 }] },
    { start: 2, end: 4, text: 'Order the servers.', speaker: 'B' },
    { start: 4, end: 5.5, text: 'Friday then.', speaker: 'A', words: [{ word: 'Friday', start: 4, end: 4.8 }] },
    { start: 5.5, end: 6, text: 'Agreed.', speaker: 'C' },
  ],
  speakers: [
    { label: 'A', name: 'Maria', embedding: '[1,0]' },
    { label: 'B', name: null, embedding: '[0,1]' },
    { label: 'C', name: null, embedding: null },
  ],
}

describe('what a speaker is shown as', () => {
  test('the name given, else "Speaker" and the label (the interface\'s "Speaker A")', () => {
    expect(displayName('A', 'Maria')).toBe('Maria')
    expect(displayName('B', null)).toBe('Speaker B')
    expect(displayName('AA', undefined)).toBe('Speaker AA')
    expect(speakerNames(TRANSCRIPT.speakers)).toEqual([{ id: 'A', name: 'Maria' }, { id: 'B', name: 'Speaker B' }, { id: 'C', name: 'Speaker C' }])
  })

  test('read backwards for a search by speaker: the label of an unnamed speaker, in any case, or null', () => {
    expect(unnamedLabelIn('Speaker B')).toBe('B')
    expect(unnamedLabelIn('speaker b')).toBe('b')
    expect(unnamedLabelIn('SPEAKER AA')).toBe('AA')
    expect(unnamedLabelIn('Maria')).toBeNull()
    expect(unnamedLabelIn('Speakers B')).toBeNull()
    expect(unnamedLabelIn('Speaker')).toBeNull()
  })
})

describe('text derived from the segments', () => {
  test('the transcript, each speaker\'s part, their time and the words', () => {
    expect(transcriptText(TRANSCRIPT.segments!)).toBe('The budget is ready. Order the servers. Friday then. Agreed.')
    expect(spokenBy(TRANSCRIPT.segments, 'A')).toBe('The budget is ready. Friday then.')
    expect(spokenBy(TRANSCRIPT.segments, 'D')).toBe('')
    expect(spokenBy(null, 'A')).toBe('')
    expect(speakingTime(TRANSCRIPT.segments, 'A')).toEqual({ segments: 2, seconds: 3.5 })
    expect(wordsOf(TRANSCRIPT.segments).map(w => w.word)).toEqual(['The', 'budget', 'Friday'])
  })

  test('cue input: each segment by the name shown, the label kept only when asked; a label the speakers lack is "Speaker X"', () => {
    const named = namedSegments({ ...TRANSCRIPT, segments: [...TRANSCRIPT.segments!, { start: 6, end: 7, text: 'Hello.', speaker: 'X' }, { start: 7, end: 8, text: 'Nobody.' }] })!
    expect(named.map(s => s.speaker)).toEqual(['Maria', 'Speaker B', 'Maria', 'Speaker C', 'Speaker X', undefined])
    expect(named.some(s => 'speakerId' in s)).toBe(false)
    expect(namedSegments(TRANSCRIPT, { keepLabel: true })!.map(s => [s.speakerId, s.speaker])).toEqual([['A', 'Maria'], ['B', 'Speaker B'], ['A', 'Maria'], ['C', 'Speaker C']])
    expect(namedSegments({ segments: null, speakers: [] })).toBeNull()
  })
})

describe('edits are pure: a new transcript, the one given unchanged', () => {
  const before = structuredClone(TRANSCRIPT)

  test('naming a speaker keeps what else the speaker carries, and adds what the caller gives', () => {
    const t = nameSpeaker(TRANSCRIPT, 'B', 'Tom', { embedding: '[0.5,0.5]' })
    expect(t.speakers).toEqual([{ label: 'A', name: 'Maria', embedding: '[1,0]' }, { label: 'B', name: 'Tom', embedding: '[0.5,0.5]' }, { label: 'C', name: null, embedding: null }])
    expect(nameSpeaker(t, 'B', null).speakers[1]).toEqual({ label: 'B', name: null, embedding: '[0.5,0.5]' })
    expect(t.segments).toBe(TRANSCRIPT.segments)
    expect(TRANSCRIPT).toEqual(before)
  })

  test('merging gives every segment of one speaker to another and drops the first; the text stays', () => {
    const t = mergeSpeaker(TRANSCRIPT, 'A', 'C')
    expect(t.segments!.map(s => s.speaker)).toEqual(['C', 'B', 'C', 'C'])
    expect(t.speakers.map(s => s.label)).toEqual(['B', 'C'])
    expect(t.text).toBe(TRANSCRIPT.text)
    expect(spokenBy(t.segments, 'C')).toBe('The budget is ready. Friday then. Agreed.')
    expect(t.segments![0]!.words).toEqual(TRANSCRIPT.segments![0]!.words!)
    expect(TRANSCRIPT).toEqual(before)
  })

  test('reassigning one segment changes only its speaker', () => {
    const t = reassignSegment(TRANSCRIPT, 1, 'A')
    expect(t.segments!.map(s => s.speaker)).toEqual(['A', 'A', 'A', 'C'])
    expect(t.segments!.map(s => s.text)).toEqual(TRANSCRIPT.segments!.map(s => s.text))
    expect(t.speakers).toBe(TRANSCRIPT.speakers)
    expect(TRANSCRIPT).toEqual(before)
  })

  test('a transcript without times has no segments to move', () => {
    const untimed: Transcript = { text: 'Notes typed in.', segments: null, speakers: [] }
    expect(reassignSegment(untimed, 0, 'A')).toEqual(untimed)
    expect(mergeSpeaker(untimed, 'A', 'B')).toEqual(untimed)
  })
})
