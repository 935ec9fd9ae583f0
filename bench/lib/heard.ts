/**
 * Recordings whose words are known, for measuring how PocketSphinx's word confidence tells right words
 * from wrong ones (bench/doubt-thresholds.ts): the four-voice espeak-ng meeting, the spoken meeting of
 * test/fixtures/spoken-meeting.ts at both speeds, the five LibriVox clips, the five card-game commands
 * of pocketsphinx-testdata (another real voice, heard well) and the two-person recording.
 */

const CARDS = '/usr/share/pocketsphinx/test/data/cards'

/** The card-game commands, 1 s apart, and what is said in them (`cards.transcription`). */
function cards(): KnownRecording {
  const lines = readFileSync(join(CARDS, 'cards.transcription'), 'utf8').split('\n').filter(l => l.trim())
  const clips = lines.map((_, i) => pcmOfWav(readFileSync(join(CARDS, `00${i + 1}.wav`))))
  return { name: 'cards (5 commands)', samples: joined(clips, 1), reference: lines.map(l => l.replace(/<\/?s>|\([^)]*\)\s*$/g, '').trim()).join(' ') }
}
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MEETING_VOICES, meetingWav } from '../../test/fixtures/meeting-voices'
import { pcmOfWav } from '../../test/fixtures/conversation'
import { MEETING_SCRIPT } from '../../test/fixtures/spoken-meeting'
import { librivoxClips, twoPersonRecording, type SpokenTurn } from './two-person'
import { espeakSamples } from './voice-set'

export interface KnownRecording {
  name: string
  /** 16 kHz mono */
  samples: Float32Array
  /** what was said */
  reference: string
}

function joined(parts: Float32Array[], pauseSeconds: number): Float32Array {
  const pause = Math.round(pauseSeconds * 16_000)
  const out = new Float32Array(parts.reduce((n, p) => n + p.length + pause, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length + pause
  }
  return out
}

/**
 * The spoken meeting of test/fixtures/spoken-meeting.ts as it says it was made: one voice at 120
 * words a minute, 700 ms after each sentence; each sentence a turn of no one in particular.
 */
export function spokenMeeting(dir: string): { samples: Float32Array; turns: SpokenTurn[] } {
  const sentences = MEETING_SCRIPT.match(/[^.?!]+[.?!]/g)!.map(s => s.trim())
  const said = sentences.map(s => espeakSamples(dir, 'en-us+m3', 50, 120, s))
  const turns: SpokenTurn[] = []
  let at = 0
  said.forEach((x, i) => {
    turns.push({ start: at / 16_000, end: (at + x.length) / 16_000, speaker: '', text: sentences[i]! })
    at += x.length + 0.7 * 16_000
  })
  return { samples: joined(said, 0.7), turns }
}

export function knownRecordings(dir: string): KnownRecording[] {
  return [
    { name: 'espeak meeting (4 voices)', samples: pcmOfWav(meetingWav().wav), reference: MEETING_VOICES.map(l => l.text).join(' ') },
    // the fast one as test/fixtures/spoken-meeting.ts says: 150 words a minute, no breaks
    { name: 'spoken meeting, slow', samples: spokenMeeting(dir).samples, reference: MEETING_SCRIPT },
    { name: 'spoken meeting, fast', samples: espeakSamples(dir, 'en-us+m3', 50, 150, MEETING_SCRIPT), reference: MEETING_SCRIPT },
    ...librivoxClips().map(c => ({ name: c.name, samples: c.samples, reference: c.text })),
    cards(),
    (() => {
      const { samples, turns } = twoPersonRecording(dir)
      return { name: 'two-person (LibriVox + espeak)', samples, reference: turns.map(t => t.text).join(' ') }
    })(),
  ]
}

/** For each heard word, whether the word-level edit alignment with the reference keeps it as a match. */
export function heardRight(reference: readonly string[], heard: readonly string[]): boolean[] {
  const d = Array.from({ length: reference.length + 1 }, (_, i) => Array.from({ length: heard.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= reference.length; i++) {
    for (let j = 1; j <= heard.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j - 1]! + (reference[i - 1] === heard[j - 1] ? 0 : 1), d[i - 1]![j]! + 1, d[i]![j - 1]! + 1)
    }
  }
  const right = heard.map(() => false)
  for (let i = reference.length, j = heard.length; i > 0 && j > 0; ) {
    if (reference[i - 1] === heard[j - 1] && d[i]![j] === d[i - 1]![j - 1]) {
      right[j - 1] = true
      i--
      j--
    } else if (d[i]![j] === d[i - 1]![j - 1]! + 1) {
      i--
      j--
    } else if (d[i]![j] === d[i - 1]![j]! + 1) i--
    else j--
  }
  return right
}
