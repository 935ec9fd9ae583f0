/**
 * Speaker diarization on labelled made-up conversations: a 2-speaker set and a 4-speaker set, each a
 * few recordings of BENCH_SECONDS (default 60) with turns of 1–2 s, pauses of 0.1–0.5 s and 10 % of
 * turns overlapping the previous one, over a steady hiss 30 dB below the voices
 * (test/fixtures/conversation.ts). The voices are real people from
 * Debian's pocketsphinx-testdata (the LibriVox reader, the cards speaker, the commands speaker) and
 * espeak-ng voices of different variants, pitches and speeds.
 *
 * For each engine it prints, per set, the diarization error rate (0.25-s collar, missed speech + false
 * alarm + confusion over the scored reference speech, best one-to-one speaker mapping; bench/lib/der.ts)
 * and the real-time factor (engine seconds per audio second, fed in 10-s blocks as the pipeline does),
 * and the speakers it counted. Baselines measured here too: "one speaker" (builtin told there is one:
 * what a transcript without diarization scores) and the builtin engine told the true count.
 * The sherpa-onnx engine is measured when src/engines/diarization/sherpa.ts exists and is ready.
 *
 *   bun run bench/diarization.ts
 *   BENCH_SECONDS=90 bun run bench/diarization.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createBuiltinDiarizationEngine } from '../src/engines/diarization/builtin'
import { diarizeSamples, type DiarizationEngine, type DiarizeOptions } from '../src/engines/diarization/engine'
import { conversation, pcmOfRaw, realVoices, type Conversation } from '../test/fixtures/conversation'
import { LECTURE } from '../test/fixtures/lecture'
import { diarizationError } from './lib/der'

const seconds = Number(process.env.BENCH_SECONDS ?? 60)
/** RMS of the hiss under each recording (the voices at 0.08: about 30 dB below them); BENCH_NOISE=0 for none */
const NOISE = Number(process.env.BENCH_NOISE ?? 0.0025)

/** espeak-ng voices, each reading the lecture: variant, pitch (-p), speed (-s). */
const SYNTHETIC: Record<string, string[]> = {
  'en-us+m3': ['-v', 'en-us+m3', '-p', '45', '-s', '160'],
  'en+f3': ['-v', 'en+f3', '-p', '60', '-s', '170'],
  'en-gb+m1': ['-v', 'en-gb+m1', '-p', '30', '-s', '145'],
  'en-us+f2': ['-v', 'en-us+f2', '-p', '75', '-s', '155'],
  'en-gb-scotland+m4': ['-v', 'en-gb-scotland+m4', '-p', '50', '-s', '175'],
}

const SETS: { name: string; recordings: string[][] }[] = [
  {
    // one person: a memo or a lecture; every speaker found past the first is an error a reader sees
    name: '1 speaker',
    recordings: [['librivox'], ['cards'], ['commands'], ['en-us+m3'], ['en+f3']],
  },
  {
    name: '2 speakers',
    recordings: [
      ['librivox', 'cards'],
      ['librivox', 'commands'],
      ['cards', 'en-us+m3'],
      ['en-us+m3', 'en+f3'],
      ['en-gb+m1', 'librivox'],
      ['en-us+f2', 'en-gb-scotland+m4'],
    ],
  },
  {
    name: '4 speakers',
    recordings: [
      ['librivox', 'cards', 'commands', 'en-us+m3'],
      ['en-us+m3', 'en+f3', 'en-gb+m1', 'en-us+f2'],
      ['librivox', 'en+f3', 'en-gb+m1', 'en-gb-scotland+m4'],
      ['cards', 'commands', 'en-us+f2', 'en-us+m3'],
    ],
  },
]

function synthesise(dir: string, name: string, args: string[]): Float32Array {
  const wav = join(dir, `${name}.wav`)
  const raw = join(dir, `${name}.raw`)
  const say = Bun.spawnSync(['espeak-ng', ...args, '-w', wav, LECTURE])
  if (say.exitCode !== 0) throw new Error(`espeak-ng failed: ${say.stderr.toString()}`)
  const convert = Bun.spawnSync(['ffmpeg', '-nostdin', '-v', 'error', '-y', '-i', wav, '-ac', '1', '-ar', '16000', '-f', 's16le', raw])
  if (convert.exitCode !== 0) throw new Error(`ffmpeg failed: ${convert.stderr.toString()}`)
  return pcmOfRaw(readFileSync(raw))
}

interface Engine {
  name: string
  engine: DiarizationEngine
  /** the options for a recording of `speakers` true speakers */
  options: (speakers: number) => DiarizeOptions
}

/** The sherpa-onnx engine, loaded only if its file is there (written beside this one), with the models of NOTESVC_MODELS_DIR or ./models. */
async function sherpa(): Promise<DiarizationEngine | string> {
  const path = '../src/engines/diarization/sherpa.ts'
  try {
    const mod = await import(path)
    if (typeof mod.createSherpaDiarizationEngine !== 'function') return 'sherpa.ts exports no createSherpaDiarizationEngine'
    const engine: DiarizationEngine = mod.createSherpaDiarizationEngine({ modelsDir: resolve(process.env.NOTESVC_MODELS_DIR || 'models') })
    await engine.ready()
    return engine
  } catch (err) {
    return (err as Error).message.split('\n')[0]!
  }
}

const dir = mkdtempSync(join(tmpdir(), 'diar-bench-'))
try {
  const voices: Record<string, Float32Array> = { ...realVoices() }
  for (const [name, args] of Object.entries(SYNTHETIC)) voices[name] = synthesise(dir, name, args)

  const builtin = createBuiltinDiarizationEngine()
  const engines: Engine[] = [
    { name: 'one speaker (baseline)', engine: builtin, options: () => ({ speakers: { exact: 1 } }) },
    { name: 'builtin', engine: builtin, options: () => ({}) },
    { name: 'builtin, told the count', engine: builtin, options: n => ({ speakers: { exact: n } }) },
  ]
  const other = await sherpa()
  if (typeof other === 'string') console.log(`sherpa-onnx: not available (${other})`)
  else engines.push({ name: 'sherpa-onnx', engine: other, options: () => ({}) }, { name: 'sherpa-onnx, told the count', engine: other, options: n => ({ speakers: { exact: n } }) })

  console.log(`${navigator.hardwareConcurrency} cores, bun ${Bun.version}; recordings of ${seconds} s, turns of 1-2 s, 10 % overlapping, hiss of RMS ${NOISE}`)
  for (const set of SETS) {
    const recordings: (Conversation & { voices: string[] })[] = set.recordings.map((names, i) => ({
      voices: names,
      ...conversation(names.map(n => voices[n]!), { seconds, seed: 100 + i, overlap: 0.1, noise: NOISE }),
    }))
    const audio = recordings.reduce((s, r) => s + r.samples.length / 16_000, 0)
    console.log(`\n${set.name}: ${recordings.length} recordings, ${audio.toFixed(0)} s`)
    for (const e of engines) {
      let scored = 0
      let missed = 0
      let falseAlarm = 0
      let confusion = 0
      let engineSeconds = 0
      const counts: number[] = []
      const each: string[] = []
      for (const r of recordings) {
        const started = performance.now()
        const d = await diarizeSamples(e.engine, r.samples, e.options(r.voices.length))
        engineSeconds += (performance.now() - started) / 1000
        const err = diarizationError(r.truth, d.turns)
        scored += err.scored
        missed += err.missed
        falseAlarm += err.falseAlarm
        confusion += err.confusion
        counts.push(d.speakers)
        each.push((err.der * 100).toFixed(0))
      }
      const pct = (x: number) => `${((x / scored) * 100).toFixed(1)}%`
      console.log(
        `  ${e.name.padEnd(28)} DER ${pct(missed + falseAlarm + confusion).padStart(6)}  (missed ${pct(missed)}, false alarm ${pct(falseAlarm)}, confusion ${pct(confusion)})` +
          `  RTF ${(engineSeconds / audio).toFixed(4)}  speakers found ${counts.join(' ')}  DER each ${each.join(' ')}%`,
      )
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
