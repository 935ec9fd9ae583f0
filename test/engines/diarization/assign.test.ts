import { describe, expect, test } from 'bun:test'
import { labelSpeakers, speakerLabel } from '../../../src/engines/diarization/assign'
import type { Diarization } from '../../../src/engines/diarization/engine'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'

const w = (word: string, start: number, end: number) => ({ word, start, end })
const diarization = (turns: [number, number, number][]): Diarization => ({ engine: 'test', speakers: new Set(turns.map(t => t[2])).size, turns: turns.map(([start, end, speaker]) => ({ start, end, speaker })) })

describe('labels', () => {
  test('A to Z, then AA, AB, as spreadsheet columns', () => {
    expect([0, 1, 25, 26, 27, 51, 52].map(speakerLabel)).toEqual(['A', 'B', 'Z', 'AA', 'AB', 'AZ', 'BA'])
  })
})

describe('speakers put on a transcript', () => {
  test('a segment whose words two people said is cut where the speaker changes, each part its words', () => {
    const seg: TranscriptSegment = { start: 0, end: 4, text: 'hello there hi maria', words: [w('hello', 0, 0.5), w('there', 0.6, 1), w('hi', 2.1, 2.4), w('maria', 2.5, 3)] }
    const { segments, labels } = labelSpeakers([seg], diarization([[0, 1.5, 1], [1.8, 4, 0]]))
    expect(segments.map(s => [s.speaker, s.text, s.start, s.end])).toEqual([['A', 'hello there', 0, 1], ['B', 'hi maria', 2.1, 3]])
    // the engine's speaker 1 spoke first: it is A
    expect([...labels]).toEqual([[1, 'A'], [0, 'B']])
  })

  test('one speaker throughout: the segment stays as the engine gave it, punctuation included', () => {
    const seg: TranscriptSegment = { start: 0, end: 2, text: 'Hello, there.', words: [w('hello', 0, 0.5), w('there', 0.6, 1)] }
    expect(labelSpeakers([seg], diarization([[0, 3, 0]])).segments).toEqual([{ ...seg, speaker: 'A' }])
  })

  test('without word times a segment goes to whoever covers most of it', () => {
    const segs: TranscriptSegment[] = [{ start: 0, end: 5, text: 'first' }, { start: 5, end: 9, text: 'second' }]
    const out = labelSpeakers(segs, diarization([[0, 1, 0], [1, 6, 1], [6, 9, 0]])).segments
    expect(out.map(s => s.speaker)).toEqual(['A', 'B'])
  })

  test('a single word between two runs of another speaker is not a turn of its own', () => {
    const seg: TranscriptSegment = { start: 0, end: 3, text: 'a b c d e', words: [w('a', 0, 0.4), w('b', 0.5, 0.9), w('c', 1, 1.2), w('d', 1.3, 1.7), w('e', 1.8, 2.2)] }
    // the engine put the boundary wrongly around "c"
    const out = labelSpeakers([seg], diarization([[0, 0.95, 0], [0.95, 1.25, 1], [1.25, 3, 0]])).segments
    expect(out).toHaveLength(1)
    expect(out[0]!.speaker).toBe('A')
  })

  test('a word in a pause the engine took for silence goes to the nearest turn', () => {
    const segs: TranscriptSegment[] = [{ start: 5, end: 6, text: 'late', words: [w('late', 5, 6)] }]
    expect(labelSpeakers(segs, diarization([[0, 2, 0], [6.5, 8, 1]])).segments[0]!.speaker).toBe('A')
  })

  test('no turns: the transcript is left without speakers', () => {
    const segs: TranscriptSegment[] = [{ start: 0, end: 1, text: 'x' }]
    expect(labelSpeakers(segs, { engine: 'test', speakers: 0, turns: [] }).segments).toEqual(segs)
  })
})
