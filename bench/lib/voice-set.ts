/**
 * A measured set of repeat speakers for calibrating voice recognition (bench/voices.ts, and the test
 * of the chosen threshold): different voices, each heard in TWO recordings that share nothing but the
 * voice — other sentences, another partner in the conversation, another level of hiss.
 *
 * The voices: the three real people of Debian's pocketsphinx-testdata (the LibriVox reader, the
 * speaker of the playing cards, the speaker of the commands), each recording from different clips of
 * theirs, and espeak-ng voices of different variants and pitches, each reading a passage of meeting
 * talk of its own in each recording (no two takes share a sentence, as no two people in a meeting say
 * the same). Two of the synthetic voices share a variant at different pitches (en-us+m3), and two share
 * a pitch in different variants (p45): the pairs most alike.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { conversation, pcmOfRaw, pcmOfWav, type Conversation } from '../../test/fixtures/conversation'
import { longMeetingTranscript } from '../../test/fixtures/long-text'
import { LIBRIVOX } from '../../test/fixtures/speech'

const TESTDATA = '/usr/share/pocketsphinx/test/data'
const LIBRIVOX_CLIP = (n: string) => join(LIBRIVOX, `sense_and_sensibility_01_austen_64kb-${n}.wav`)

export interface Voice {
  name: string
  /** the voice's speech in recording 1 and in recording 2: different words */
  takes: (dir: string) => [Float32Array, Float32Array]
}

/**
 * Passages of about 700 characters (40-45 s of speech, more than a voice says in a recording of the
 * set) of a made-up meeting's talk, without the speakers' names. The set's voices read the first
 * ones; other voices read from the end (bench/voice-population.ts).
 */
export const PASSAGES = (() => {
  const lines = longMeetingTranscript(40_000).split('\n').filter(l => l.includes(': ')).map(l => l.slice(l.indexOf(': ') + 2))
  const out: string[] = []
  let passage = ''
  for (const line of lines) {
    passage += (passage ? ' ' : '') + line
    if (passage.length >= 700) [out[out.length], passage] = [passage, '']
  }
  return out
})()

function real(name: string, first: string[], second: string[]): Voice {
  const load = (path: string) => (path.endsWith('.wav') ? pcmOfWav(readFileSync(path)) : pcmOfRaw(readFileSync(path)))
  return { name, takes: () => [joined(first.map(load)), joined(second.map(load))] }
}

let passagesTaken = 0
/** An espeak-ng voice: variant, pitch (0-99), speed (words a minute); each take its own passage. */
function synthetic(variant: string, pitch: number, speed: number): Voice {
  const name = `${variant} p${pitch}`
  const [first, second] = [PASSAGES[passagesTaken++]!, PASSAGES[passagesTaken++]!]
  return { name, takes: dir => [espeakSamples(dir, variant, pitch, speed, first), espeakSamples(dir, variant, pitch, speed, second)] }
}

export const VOICES: Voice[] = [
  real('librivox reader', ['0870', '0880', '0890'].map(LIBRIVOX_CLIP), ['0920', '0930'].map(LIBRIVOX_CLIP)),
  real('cards speaker', ['001', '002', '003'].map(n => join(TESTDATA, 'cards', `${n}.wav`)), ['004', '005'].map(n => join(TESTDATA, 'cards', `${n}.wav`))),
  real('commands speaker', [join(TESTDATA, 'goforward.raw'), join(TESTDATA, 'something.raw')], [join(TESTDATA, 'numbers.raw')]),
  synthetic('en-us+m3', 45, 160),
  synthetic('en+f3', 60, 170),
  synthetic('en-gb+m1', 30, 145),
  synthetic('en-us+f2', 75, 155),
  synthetic('en-gb-scotland+m4', 50, 175),
  synthetic('en-us+f5', 85, 130),
  synthetic('en-gb+m7', 45, 140),
  synthetic('en-us+m3', 20, 125),
  synthetic('en-029+m2', 40, 150),
]

/** Hiss under each session's recordings (RMS; the voices at 0.08): about 30 dB, then about 20 dB below them. */
export const NOISE: [number, number] = [0.0025, 0.008]

export interface SetRecording extends Conversation {
  /** 1 or 2 */
  session: number
  /** the indexes into VOICES of the voices in it, in the order of `truth`'s speakers */
  voices: number[]
}

/**
 * The set's recordings, numbered from 1 as bench/voices.ts prints them: in session 1 the voices talk in
 * pairs (0 with 1, 2 with 3, …) from their first takes; in session 2 each with the next voice's partner
 * (1 with 2, …, the last with 0) from their second takes, over more hiss.
 */
const RECORDINGS: { session: 1 | 2; voices: [number, number]; seed: number }[] = ([1, 2] as const).flatMap(session =>
  Array.from({ length: Math.floor(VOICES.length / 2) }, (_, k) => ({
    session,
    voices: [(2 * k + session - 1) % VOICES.length, (2 * k + session) % VOICES.length] as [number, number],
    seed: 300 + 10 * session + 2 * k,
  })),
)

/**
 * The set's recordings of `seconds` each (all, or the numbers in `only`); a voice's takes are made only
 * when a recording needs them.
 */
export function voiceSet(dir: string, o: { seconds: number; only?: number[] }): SetRecording[] {
  const takes = new Map<number, [Float32Array, Float32Array]>()
  const takesOf = (v: number) => takes.get(v) ?? takes.set(v, VOICES[v]!.takes(dir)).get(v)!
  return RECORDINGS.flatMap((r, i) => {
    if (o.only && !o.only.includes(i + 1)) return []
    const talk = conversation(r.voices.map(v => takesOf(v)[r.session - 1]!), { seconds: o.seconds, seed: r.seed, turn: [1.5, 3], noise: NOISE[r.session - 1] })
    return [{ ...talk, session: r.session, voices: r.voices }]
  })
}

/** `text` said by espeak-ng (variant, pitch 0-99, words a minute), as 16 kHz samples (ffmpeg resamples it). */
export function espeakSamples(dir: string, variant: string, pitch: number, speed: number, text: string): Float32Array {
  const wav = join(dir, `${variant}-${pitch}-${text.length}.wav`)
  const say = Bun.spawnSync(['espeak-ng', '-v', variant, '-p', String(pitch), '-s', String(speed), '-w', wav, text])
  if (say.exitCode !== 0) throw new Error(`espeak-ng failed (install it with: apt-get install espeak-ng): ${say.stderr.toString()}`)
  const convert = Bun.spawnSync(['ffmpeg', '-nostdin', '-v', 'error', '-i', wav, '-ac', '1', '-ar', '16000', '-f', 's16le', '-'])
  if (convert.exitCode !== 0) throw new Error(`ffmpeg failed: ${convert.stderr.toString()}`)
  return pcmOfRaw(convert.stdout)
}

function joined(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
