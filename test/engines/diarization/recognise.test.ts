import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { foundSpeakers, type FoundSpeaker } from '../../../bench/lib/voice-pairs'
import { VOICES, voiceSet } from '../../../bench/lib/voice-set'
import { createBuiltinDiarizationEngine } from '../../../src/engines/diarization/builtin'
import { diarizeSamples } from '../../../src/engines/diarization/engine'
import { recognise, RECOGNITION_THRESHOLDS } from '../../../src/engines/diarization/recognise'
import { tempDir } from '../../helpers/process'

// Three recordings of bench/voices.ts's set, 40 s each as the bench makes them, diarized by the
// builtin engine without a count: 6 (session 1: en-us+m3 at pitch 20 and en-029+m2), 2 (session 1:
// the commands speaker and en-us+m3 at pitch 45, the same synthetic voice as the first, 6 % higher)
// and 12 (session 2, more hiss, other words: en-029+m2 again and the LibriVox reader).
const dir = tempDir('notesvc-voices-')
const speakers = new Map<number, FoundSpeaker[]>()

beforeAll(async () => {
  const engine = createBuiltinDiarizationEngine()
  const numbers = [2, 6, 12]
  for (const [i, r] of voiceSet(dir.path, { seconds: 40, only: numbers }).entries()) {
    speakers.set(numbers[i]!, foundSpeakers(numbers[i]!, await diarizeSamples(engine, r.samples), r.truth, r.voices))
  }
}, 60_000)
afterAll(() => dir.remove())

/** Who each voice of a recording is taken for, given the remembered voices. */
function named(recording: number, profiles: { id: string; name: string; embedding: number[] }[]): Record<string, string | null> {
  const found = speakers.get(recording)!
  const known = recognise(found.map(s => ({ label: String(s.speaker), embedding: s.print })), profiles, RECOGNITION_THRESHOLDS.builtin!)
  return Object.fromEntries(found.map(s => [VOICES[s.voice]!.name, known.get(String(s.speaker))?.name ?? null]))
}

describe('remembered voices with the builtin engine', () => {
  test('named in one recording: the same voice is recognised in another, a different voice is not', () => {
    // recording 6's speakers named, as a person renaming them would
    const names: Record<string, string> = { 'en-029+m2 p40': 'Clara', 'en-us+m3 p20': 'Tom' }
    const profiles = speakers.get(6)!.map(s => ({ id: `spk_${s.speaker}`, name: names[VOICES[s.voice]!.name]!, embedding: s.print }))
    expect(profiles.map(p => p.name).sort()).toEqual(['Clara', 'Tom'])
    expect({ 2: named(2, profiles), 12: named(12, profiles) }).toEqual({
      // with the prints and the 0.97 of before issue 31, en-us+m3 at pitch 45 was taken for Tom
      2: { 'commands speaker': null, 'en-us+m3 p45': null },
      12: { 'en-029+m2 p40': 'Clara', 'librivox reader': null },
    })
  })
})
