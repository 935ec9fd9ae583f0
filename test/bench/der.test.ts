import { describe, expect, test } from 'bun:test'
import { diarizationError } from '../../bench/lib/der'
import type { SpeakerTurn } from '../../src/engines/diarization/engine'

const turn = (start: number, end: number, speaker: number): SpeakerTurn => ({ start, end, speaker })
// A speaks 0-10 s, B 10-20 s
const truth = [turn(0, 10, 0), turn(10, 20, 1)]

describe('diarization error rate', () => {
  const cases: { name: string; hypothesis: SpeakerTurn[]; collar?: number; der: number; missed?: number; falseAlarm?: number; confusion?: number }[] = [
    { name: 'the truth itself', hypothesis: truth, der: 0 },
    { name: 'the truth with the speaker numbers swapped', hypothesis: [turn(0, 10, 1), turn(10, 20, 0)], der: 0 },
    { name: 'nothing found: all missed', hypothesis: [], collar: 0, der: 1, missed: 20 },
    { name: 'one speaker throughout: half confused', hypothesis: [turn(0, 20, 0)], collar: 0, der: 0.5, confusion: 10 },
    { name: 'a change 0.2 s late, inside the collar', hypothesis: [turn(0, 10.2, 0), turn(10.2, 20, 1)], der: 0 },
    { name: 'a change 1 s late, without collar', hypothesis: [turn(0, 11, 0), turn(11, 20, 1)], collar: 0, der: 0.05, confusion: 1 },
    { name: 'speech found 2 s beyond the end', hypothesis: [turn(0, 10, 0), turn(10, 22, 1)], collar: 0, der: 0.1, falseAlarm: 2 },
    { name: 'a third speaker for 4 s, mapped to no one', hypothesis: [turn(0, 10, 0), turn(10, 16, 1), turn(16, 20, 2)], collar: 0, der: 0.2, confusion: 4 },
  ]
  for (const c of cases) {
    test(c.name, () => {
      const r = diarizationError(truth, c.hypothesis, c.collar)
      expect(r.der).toBeCloseTo(c.der, 3)
      if (c.missed !== undefined) expect(r.missed).toBeCloseTo(c.missed, 2)
      if (c.falseAlarm !== undefined) expect(r.falseAlarm).toBeCloseTo(c.falseAlarm, 2)
      if (c.confusion !== undefined) expect(r.confusion).toBeCloseTo(c.confusion, 2)
    })
  }

  test('two reference speakers at once and one found: the other is missed', () => {
    const overlap = [turn(0, 10, 0), turn(8, 20, 1)]
    const r = diarizationError(overlap, [turn(0, 10, 0), turn(10, 20, 1)], 0)
    expect(r.scored).toBeCloseTo(22, 2)
    expect(r.missed).toBeCloseTo(2, 2)
    expect(r.der).toBeCloseTo(2 / 22, 3)
  })

  test('the collar leaves out 0.25 s either side of every reference boundary', () => {
    // 0.25 s after 0, 0.5 s about 10 (where A ends and B starts), 0.25 s before 20
    expect(diarizationError(truth, truth).scored).toBeCloseTo(19, 2)
  })
})
