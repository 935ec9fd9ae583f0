/**
 * Streaming conversion of 16-bit PCM to the 16 kHz the live engine decodes (OpenAI's realtime clients
 * send 24 kHz). A windowed-sinc low-pass interpolator: each output sample is the input around its
 * position weighted by a Blackman-windowed sinc cut at 0.9 × the output's Nyquist frequency, so what lies
 * above 8 kHz in a 24 kHz stream is removed rather than folded into the band the model listens to.
 * State (the last input samples and the position of the next output) carries across pushes, so chunks
 * of any length give the same output as the whole at once.
 *
 * Written here rather than taken from a package: the npm resamplers are either for whole buffers
 * (wave-resampler), or WebAssembly builds of libsamplerate whose streaming state would have to be kept
 * across a Worker boundary; this is 50 lines and exact for the 3:2 and 1:1 cases the route needs.
 */

/** taps on each side of an output sample's position, in input samples */
const HALF_WIDTH = 12

export interface Resampler {
  push(input: Int16Array): Int16Array
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))

export function createResampler(fromRate: number, toRate: number): Resampler {
  if (fromRate === toRate) return { push: input => input }
  if (!(fromRate > 0 && toRate > 0) || !Number.isInteger(fromRate) || !Number.isInteger(toRate)) {
    throw new RangeError(`sample rates must be positive whole numbers, not ${fromRate} → ${toRate}`)
  }
  const cutoff = Math.min(1, toRate / fromRate) * 0.9
  /**
   * Output sample j lies at input position j × fromRate / toRate: its fraction takes only
   * toRate / gcd(fromRate, toRate) values (2 for 24 → 16 kHz), so the taps' weights are computed once
   * per fraction (sin and cos per tap per sample cost 1.3 % of a core per 24-kHz stream on the event
   * loop) rather than per sample. The same weights as computed per sample, so the same output.
   */
  const phases = toRate / gcd(fromRate, toRate)
  const weights = new Map<number, Float64Array>()
  const weightsAt = (phase: number): Float64Array => {
    let w = weights.get(phase)
    if (w) return w
    const fraction = phase / phases
    w = new Float64Array(2 * HALF_WIDTH)
    // tap i is input sample centre - HALF_WIDTH + 1 + i, at distance fraction + HALF_WIDTH - 1 - i
    for (let i = 0; i < w.length; i++) w[i] = weight(fraction + HALF_WIDTH - 1 - i, cutoff)
    weights.set(phase, w)
    return w
  }
  /** input not yet fully used, its first sample being input index `bufStart` (zeros before the stream) */
  let buf = new Float64Array(HALF_WIDTH)
  let bufStart = -HALF_WIDTH
  /** the next output sample's index; its position is produced × fromRate / toRate input samples */
  let produced = 0

  return {
    push(input) {
      const all = new Float64Array(buf.length + input.length)
      all.set(buf)
      all.set(input, buf.length)
      const end = bufStart + all.length
      const out: number[] = []
      for (;;) {
        const scaled = produced * fromRate
        const centre = Math.floor(scaled / toRate)
        if (centre + HALF_WIDTH >= end) break
        const w = weightsAt(((scaled % toRate) * phases) / toRate)
        const first = centre - HALF_WIDTH + 1 - bufStart
        let sum = 0
        for (let i = 0; i < w.length; i++) sum += all[first + i]! * w[i]!
        out.push(Math.max(-32768, Math.min(32767, Math.round(sum))))
        produced++
      }
      const next = Math.floor((produced * fromRate) / toRate)
      const keepFrom = Math.max(0, next - HALF_WIDTH + 1 - bufStart)
      buf = all.slice(keepFrom)
      bufStart += keepFrom
      return Int16Array.from(out)
    },
  }
}

/** The low-pass interpolator's weight at distance `x` input samples: a Blackman-windowed sinc. */
function weight(x: number, cutoff: number): number {
  if (Math.abs(x) >= HALF_WIDTH) return 0
  const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x)
  const window = 0.42 + 0.5 * Math.cos((Math.PI * x) / HALF_WIDTH) + 0.08 * Math.cos((2 * Math.PI * x) / HALF_WIDTH)
  return cutoff * sinc * window
}
