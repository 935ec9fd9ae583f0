import { CEPSTRA, type FrameFeatures } from './features'

/**
 * The builtin engine's voice prints, compared across recordings by cosine (recognise.ts). A print is a
 * voice's average spectral shape and pitch, measured as they differ from an average voice's:
 *
 * - the mean of the speaker's print cepstra over their loud frames (features.ts: bands up to 4.2 kHz,
 *   each floored 20 dB under the frame's strongest, so hiss changes them little);
 * - the mean and the spread of the speaker's log2 pitch over their voiced frames;
 *
 * each less POPULATION's mean and divided by its spread, then unit length. Prints before issue 31 were
 * the mean and spread of the raw cepstra: every voice's print pointed the same way (the average speech
 * spectrum), so most pairs of different voices scored 0.8-0.998 and no threshold kept strangers out
 * (bench/voices.ts).
 * Those had 24 numbers, these have VOICE_PRINT_LENGTH: recognise.ts never matches prints of different
 * lengths, so voices remembered before are not matched until named again.
 */
const VOICE_PRINT_LENGTH = CEPSTRA + 2

/**
 * The mean and spread, over a population of voices, of each number of a print before standardising,
 * printed by `bun run bench/voice-population.ts`: 16 espeak-ng voices that are not in bench/voices.ts's
 * set, each reading two passages over two levels of hiss. Synthetic voices only (the real ones on
 * this machine are all in the set); real people sit a little to one side of this centre.
 */
const POPULATION = {
  mean: [-1.978, 1.203, -0.8939, -0.521, -0.9131, -0.5364, -0.1043, -0.1594, -0.1535, -0.08977, -0.1538, -0.2751, 7.111, 0.3339],
  spread: [1.112, 0.5872, 0.6199, 0.3379, 0.2071, 0.2975, 0.296, 0.3093, 0.2368, 0.3326, 0.2527, 0.3331, 0.6156, 0.1948],
}

/** Fewer voiced frames than this say nothing of the pitch: the print takes the population's. */
const MIN_VOICED = 20

/**
 * A voice's numbers before standardising, over the frames `use` picks: the mean of its print cepstra,
 * then the mean and spread of its log2 pitch. Zeros when no frame is picked.
 */
export function voiceStatistics(f: FrameFeatures, use: (frame: number) => boolean): Float64Array {
  const out = new Float64Array(VOICE_PRINT_LENGTH)
  let frames = 0
  let voiced = 0
  let pitch = 0
  let pitchSquares = 0
  for (let t = 0; t < f.frames; t++) {
    if (!use(t)) continue
    frames++
    for (let c = 0; c < CEPSTRA; c++) out[c]! += f.printCepstra[t * CEPSTRA + c]!
    const p = f.pitch[t]!
    if (p > 0) {
      voiced++
      pitch += p
      pitchSquares += p * p
    }
  }
  if (!frames) return out
  for (let c = 0; c < CEPSTRA; c++) out[c]! /= frames
  if (voiced < MIN_VOICED) {
    out[CEPSTRA] = POPULATION.mean[CEPSTRA]!
    out[CEPSTRA + 1] = POPULATION.mean[CEPSTRA + 1]!
  } else {
    out[CEPSTRA] = pitch / voiced
    out[CEPSTRA + 1] = Math.sqrt(Math.max(0, pitchSquares / voiced - (pitch / voiced) ** 2))
  }
  return out
}

/** The print of a voice's statistics: standardised by the population, unit length (zeros stay zeros). */
function voicePrint(statistics: Float64Array): Float32Array {
  if (statistics.every(x => x === 0)) return new Float32Array(VOICE_PRINT_LENGTH)
  const print = Float32Array.from(statistics, (x, d) => (x - POPULATION.mean[d]!) / POPULATION.spread[d]!)
  const norm = Math.hypot(...print)
  return norm > 0 ? print.map(x => x / norm) : print
}

/** Each speaker's print over their loud frames (`speech`), `order` mapping the labels to speaker numbers. */
export function voicePrints(f: FrameFeatures, labels: Int32Array, speech: Uint8Array, order: Map<number, number>): Float32Array[] {
  return [...order].sort((a, b) => a[1] - b[1]).map(([label]) => voicePrint(voiceStatistics(f, t => speech[t] !== 0 && labels[t] === label)))
}
