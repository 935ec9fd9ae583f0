/**
 * A two-person recording like the one of issue 31 (49 s, "a LibriVox reader and an espeak voice"):
 * a host's lines (Nora) said by espeak-ng between the five LibriVox clips of pocketsphinx-testdata,
 * read by their reader (Owen), 0.5 s of silence between turns. The host's fourth line is an action
 * item with an owner, so a summary has something true to find, and misheard words something false.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pcmOfWav } from '../../test/fixtures/conversation'
import { LIBRIVOX } from '../../test/fixtures/speech'
import { espeakSamples } from './voice-set'

const RATE = 16_000
const PAUSE = 0.5

const HOST_LINES = [
  'Welcome back to the reading group. Today we hear the first chapter.',
  'That was the brother. He made a promise to his father.',
  'The question is what he will really do for his sisters.',
  'Anna will send the next chapter to the group by Friday.',
  'Thank you all for listening. See you next week.',
]

export interface SpokenTurn {
  start: number
  end: number
  /** a name, or '' when the recording has one voice */
  speaker: string
  text: string
}

export const HOST = 'Nora'
export const READER = 'Owen'

/** The LibriVox clips with what their reader says (pocketsphinx-testdata's `transcription`). */
export function librivoxClips(): { name: string; samples: Float32Array; text: string }[] {
  const lines = readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').split('\n').filter(l => l.trim())
  return readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map((f, i) => ({
    name: f.replace(/^sense_and_sensibility_01_austen_64kb-/, 'librivox ').replace('.wav', ''),
    samples: pcmOfWav(readFileSync(join(LIBRIVOX, f))),
    text: lines[i]!.replace(/<\/?s>|\([^)]*\)\s*$/g, '').trim(),
  }))
}

/** The recording (16 kHz mono samples) and who says what when. */
export function twoPersonRecording(dir: string): { samples: Float32Array; turns: SpokenTurn[] } {
  const clips = librivoxClips()
  const parts: { samples: Float32Array; speaker: string; text: string }[] = []
  HOST_LINES.forEach((line, i) => {
    parts.push({ samples: espeakSamples(dir, 'en-us+f3', 60, 150, line), speaker: HOST, text: line })
    if (clips[i]) parts.push({ samples: clips[i]!.samples, speaker: READER, text: clips[i]!.text })
  })
  const pause = Math.round(PAUSE * RATE)
  const total = parts.reduce((n, p) => n + p.samples.length + pause, pause)
  const samples = new Float32Array(total)
  const turns: SpokenTurn[] = []
  let at = pause
  for (const p of parts) {
    samples.set(p.samples, at)
    turns.push({ start: at / RATE, end: (at + p.samples.length) / RATE, speaker: p.speaker, text: p.text })
    at += p.samples.length + pause
  }
  return { samples, turns }
}
