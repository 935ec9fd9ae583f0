import { describe, expect, test } from 'bun:test'
import { FrameFeatures } from '../../../src/engines/diarization/features'
import { pcmOfWav } from '../../fixtures/conversation'
import { meetingWav } from '../../fixtures/meeting-voices'

const TEXT = 'Good morning everyone. The release moves to Friday, and the tickets are in the tracker.'

/** The pitch in Hz of every voiced frame of one espeak-ng voice saying TEXT, sorted. */
function pitches(voice: string, pitch: number): number[] {
  const { wav } = meetingWav([{ speaker: voice, voice, pitch, speed: 160, text: TEXT }])
  const f = new FrameFeatures()
  f.push(pcmOfWav(wav))
  const hz: number[] = []
  for (let t = 0; t < f.frames; t++) if (f.pitch[t]! > 0) hz.push(2 ** f.pitch[t]!)
  return hz.sort((a, b) => a - b)
}

const quantile = (sorted: number[], q: number) => sorted[Math.floor(q * sorted.length)]!

describe('frame pitch', () => {
  test("a woman's voice is heard at her pitch, not an octave down at a man's", () => {
    const hz = pitches('en+f3', 60)
    expect(hz.length).toBeGreaterThan(100)
    // espeak-ng en+f3 at pitch 60 speaks at about 210-250 Hz. Taking the highest autocorrelation peak
    // alone (no preference for the shorter period) put the 10th percentile at 85 Hz
    expect(quantile(hz, 0.1)).toBeGreaterThan(150)
    expect(quantile(hz, 0.5)).toBeGreaterThan(190)
    expect(quantile(hz, 0.5)).toBeLessThan(280)
  })

  test("a man's voice stays low: the preference for shorter periods does not double it", () => {
    // en-gb+m1 at pitch 30 speaks at about 85 Hz; a tolerance far below 1 would take its second harmonic
    const hz = pitches('en-gb+m1', 30)
    expect(hz.length).toBeGreaterThan(100)
    expect(quantile(hz, 0.5)).toBeGreaterThan(70)
    expect(quantile(hz, 0.5)).toBeLessThan(110)
    expect(quantile(hz, 0.9)).toBeLessThan(140)
  })
})
