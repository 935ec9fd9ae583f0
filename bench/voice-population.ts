/**
 * The population the builtin engine's voice prints are measured against (POPULATION in
 * src/engines/diarization/voice-print.ts): the mean and spread of each number of a print before it is
 * standardised, over 16 espeak-ng voices that are NOT in bench/voices.ts's set (other variants and
 * pitches), each reading two passages of meeting talk of its own, alone, over the two levels of hiss the
 * set has. It prints them as the constant to paste; run it again when features.ts or voice-print.ts
 * change what a print is made of.
 *
 *   bun run bench/voice-population.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FrameFeatures } from '../src/engines/diarization/features'
import { findSpeech } from '../src/engines/diarization/speech-frames'
import { voiceStatistics } from '../src/engines/diarization/voice-print'
import { seededRandom } from '../test/fixtures/random'
import { espeakSamples, NOISE, PASSAGES, VOICES } from './lib/voice-set'

/** variant, pitch, speed: none of them a voice of bench/lib/voice-set.ts */
const POPULATION: [string, number, number][] = [
  ['en-us+m1', 50, 150], ['en+m2', 60, 165], ['en+m4', 35, 140], ['en+m5', 55, 150], ['en+m6', 40, 170],
  ['en+f1', 65, 150], ['en+f4', 80, 140], ['en-gb-x-rp+Alex', 50, 150], ['en+Andrea', 70, 160], ['en+klatt', 50, 150],
  ['en+david', 40, 150], ['en+michel', 45, 150], ['en+steph', 70, 150], ['en+linda', 65, 150], ['en-us-nyc+m1', 30, 150], ['en-gb-x-gbclan+f4', 75, 150],
]

const inSet = new Set(VOICES.map(v => v.name))
const dir = mkdtempSync(join(tmpdir(), 'voice-population-'))
try {
  const random = seededRandom(31)
  const rows: Float64Array[] = []
  POPULATION.forEach(([variant, pitch, speed], i) => {
    if (inSet.has(`${variant} p${pitch}`)) throw new Error(`${variant} p${pitch} is in the measured set; choose another voice`)
    NOISE.forEach((hiss, take) => {
      const clean = espeakSamples(dir, variant, pitch, speed, PASSAGES[PASSAGES.length - 1 - 2 * i - take]!)
      const gain = 0.08 / Math.sqrt(clean.reduce((s, x) => s + x * x, 0) / clean.length)
      const samples = Float32Array.from(clean, x => x * gain + (random() + random() + random() - 1.5) * 2 * hiss)
      const f = new FrameFeatures()
      f.push(samples)
      const speech = findSpeech(f.energy.subarray(0, f.frames))
      rows.push(voiceStatistics(f, t => speech[t] === 2))
    })
  })
  const mean = rows[0]!.map((_, d) => rows.reduce((s, r) => s + r[d]!, 0) / rows.length)
  const spread = mean.map((m, d) => Math.sqrt(rows.reduce((s, r) => s + (r[d]! - m) ** 2, 0) / rows.length))
  const list = (xs: Float64Array) => `[${Array.from(xs, x => Number(x.toPrecision(4))).join(', ')}]`
  console.log(`${POPULATION.length} voices x ${NOISE.length} takes\nconst POPULATION = {\n  mean: ${list(mean)},\n  spread: ${list(spread)},\n}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
