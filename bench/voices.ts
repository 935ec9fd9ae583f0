/**
 * Recognising a person across recordings: how alike the voice prints of the same voice in two
 * recordings are, against those of different voices, and the match threshold that takes no stranger
 * for someone remembered.
 *
 * The set (bench/lib/voice-set.ts): 12 voices (3 real people, 9 espeak-ng voices), each in two
 * recordings in which it talks with a different partner, other words, over a different hiss; the
 * recordings are made at each length of BENCH_SECONDS (default 40 and 60 s: how much of a voice there
 * is, and how the engine splits it, moves the scores), and pairs are scored within one length. Every recording is diarized by the builtin engine without a count, as an
 * upload is; each speaker found is the voice they share the most time with. For every pair of speakers
 * from two different recordings, the cosine similarity of their prints (what recognise.ts compares) —
 * the same voice is a true accept when at the threshold or above, different voices a false accept.
 *
 * It prints the speakers found, the highest different-voice and lowest same-voice scores, the table of
 * false and true accepts per threshold, the threshold with no false accept on this set and the share of
 * same-voice pairs it keeps, and the one recognise.ts exports (RECOGNITION_THRESHOLDS). The same for
 * sherpa-onnx when its model files are in NOTESVC_MODELS_DIR (or ./models); otherwise it says it cannot
 * be measured here. The population prints are standardised by: bench/voice-population.ts.
 *
 *   bun run bench/voices.ts
 *   BENCH_SECONDS=20,40 bun run bench/voices.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createBuiltinDiarizationEngine } from '../src/engines/diarization/builtin'
import { diarizeSamples, type DiarizationEngine } from '../src/engines/diarization/engine'
import { sherpaModelsPresent } from '../src/engines/diarization/models'
import { RECOGNITION_THRESHOLDS } from '../src/engines/diarization/recognise'
import { acceptTable, foundSpeakers, scoredPairs, zeroFalseAcceptThreshold, type FoundSpeaker, type ScoredPair } from './lib/voice-pairs'
import { NOISE, VOICES, voiceSet, type SetRecording } from './lib/voice-set'

/** Each recording of the set is made at each of these lengths; pairs are scored within one length. */
const LENGTHS = (process.env.BENCH_SECONDS ?? '40,60').split(',').map(Number)
const modelsDir = resolve(process.env.NOTESVC_MODELS_DIR || 'models')
const GRID = [0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995]

type Pair = ScoredPair & { seconds: number }

/** The speakers the engine finds in each recording, and every pair of them from two recordings of one length. */
async function scorePairs(engine: DiarizationEngine, sets: { seconds: number; recordings: SetRecording[] }[]): Promise<Pair[]> {
  const pairs: Pair[] = []
  let engineSeconds = 0
  let audio = 0
  for (const { seconds, recordings } of sets) {
    console.log(`  recordings of ${seconds} s: speakers found (the voice, the share of the speaker's speech that is that voice)`)
    const speakers: FoundSpeaker[] = []
    for (const [i, r] of recordings.entries()) {
      const started = performance.now()
      const d = await diarizeSamples(engine, r.samples)
      engineSeconds += (performance.now() - started) / 1000
      audio += r.samples.length / 16_000
      const found = foundSpeakers(i, d, r.truth, r.voices)
      speakers.push(...found)
      const heard = found.map(s => `${VOICES[s.voice]!.name} ${(s.purity * 100).toFixed(0)}%`).join(', ')
      console.log(`  ${String(i + 1).padStart(4)}. session ${r.session}, ${r.voices.map(v => VOICES[v]!.name).join(' + ')}: ${heard}`)
    }
    pairs.push(...scoredPairs(speakers).map(p => ({ ...p, seconds })))
  }
  console.log(`  RTF ${(engineSeconds / audio).toFixed(4)}`)
  return pairs
}

async function measure(name: string, engine: DiarizationEngine, sets: { seconds: number; recordings: SetRecording[] }[]): Promise<void> {
  console.log(`\n${name}:`)
  const pairs = await scorePairs(engine, sets)
  const same = pairs.filter(p => p.same)
  const different = pairs.filter(p => !p.same)
  const top = [...different].sort((a, b) => b.score - a.score).slice(0, 3)
  const low = [...same].sort((a, b) => a.score - b.score).slice(0, 3)
  const label = (p: Pair) => `${VOICES[p.a.voice]!.name} (rec ${p.a.recording + 1}) ~ ${VOICES[p.b.voice]!.name} (rec ${p.b.recording + 1}) at ${p.seconds} s`
  console.log(`  ${same.length} same-voice pairs, ${different.length} different-voice pairs`)
  console.log(`  highest different-voice scores: ${top.map(p => `${p.score.toFixed(4)} ${label(p)}`).join('; ')}`)
  console.log(`  lowest same-voice scores: ${low.map(p => `${p.score.toFixed(4)} ${label(p)}`).join('; ')}`)
  for (const seconds of LENGTHS) {
    const each = same.filter(p => p.seconds === seconds).sort((a, b) => b.score - a.score)
    console.log(`  every same-voice score at ${seconds} s: ${each.map(p => `${VOICES[p.a.voice]!.name} ${p.score.toFixed(3)}`).join(', ')}`)
  }
  const chosen = zeroFalseAcceptThreshold(pairs)
  const exported = RECOGNITION_THRESHOLDS[engine.name]
  const thresholds = [...new Set([...GRID, chosen, ...(exported === undefined ? [] : [exported])])].sort((a, b) => a - b)
  console.log('  threshold  false accepts        true accepts')
  for (const row of acceptTable(pairs, thresholds)) {
    const mark = [row.threshold === chosen ? 'chosen' : '', row.threshold === exported ? 'exported' : ''].filter(Boolean).join(', ')
    console.log(`  ${row.threshold.toFixed(3).padStart(9)}  ${fraction(row.falseAccepts, different.length)}  ${fraction(row.trueAccepts, same.length)}${mark ? `  <- ${mark}` : ''}`)
  }
  const kept = acceptTable(pairs, [chosen])[0]!
  console.log(`  zero false accepts on this set from ${chosen.toFixed(2)}: it keeps ${fraction(kept.trueAccepts, same.length).trim()} of the same-voice pairs` +
    (exported === undefined ? '' : `; recognise.ts exports ${exported} for ${engine.name}`))
}

const fraction = (n: number, of: number) => `${String(n).padStart(4)} of ${String(of).padEnd(4)} (${((n / Math.max(1, of)) * 100).toFixed(1).padStart(5)} %)`

const dir = mkdtempSync(join(tmpdir(), 'voices-bench-'))
try {
  console.log(`${navigator.hardwareConcurrency} cores, bun ${Bun.version}; ${VOICES.length} voices, each in 2 recordings (2 voices each, turns of 1.5-3 s, hiss of RMS ${NOISE.join(' then ')}), made at ${LENGTHS.join(' and ')} s`)
  const sets = LENGTHS.map(seconds => ({ seconds, recordings: voiceSet(dir, { seconds }) }))
  await measure('builtin', createBuiltinDiarizationEngine(), sets)
  const models = sherpaModelsPresent(modelsDir)
  if (!models.ready) {
    console.log(`\nsherpa-onnx: cannot be measured here, it needs its real model weights (${models.message}).`)
    console.log('  The project can only generate models with random weights (test/fixtures/onnx-model.ts), whose prints mean nothing;')
    console.log(`  its threshold (${RECOGNITION_THRESHOLDS['sherpa-onnx']}) stays a guess until it is measured with them.`)
  } else {
    const { createSherpaDiarizationEngine } = await import('../src/engines/diarization/sherpa')
    const engine = createSherpaDiarizationEngine({ modelsDir })
    await engine.ready()
    await measure('sherpa-onnx', engine, sets)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
