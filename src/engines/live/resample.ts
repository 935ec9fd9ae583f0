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

export function createResampler(fromRate: number, toRate: number): Resampler {
  if (fromRate === toRate) return { push: input => input }
  if (!(fromRate > 0 && toRate > 0)) throw new RangeError(`sample rates must be positive, not ${fromRate} → ${toRate}`)
  const step = fromRate / toRate
  const cutoff = Math.min(1, toRate / fromRate) * 0.9
  /** input not yet fully used, its first sample being input index `bufStart` (zeros before the stream) */
  let buf = new Float64Array(HALF_WIDTH)
  let bufStart = -HALF_WIDTH
  /** the position, in input samples, of the next output sample */
  let next = 0

  const weight = (x: number): number => {
    if (Math.abs(x) >= HALF_WIDTH) return 0
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x)
    const window = 0.42 + 0.5 * Math.cos((Math.PI * x) / HALF_WIDTH) + 0.08 * Math.cos((2 * Math.PI * x) / HALF_WIDTH)
    return cutoff * sinc * window
  }

  return {
    push(input) {
      const all = new Float64Array(buf.length + input.length)
      all.set(buf)
      all.set(input, buf.length)
      const end = bufStart + all.length
      const out: number[] = []
      while (Math.floor(next) + HALF_WIDTH < end) {
        const centre = Math.floor(next)
        let sum = 0
        for (let k = centre - HALF_WIDTH + 1; k <= centre + HALF_WIDTH; k++) sum += all[k - bufStart]! * weight(next - k)
        out.push(Math.max(-32768, Math.min(32767, Math.round(sum))))
        next += step
      }
      const keepFrom = Math.max(0, Math.floor(next) - HALF_WIDTH + 1 - bufStart)
      buf = all.slice(keepFrom)
      bufStart += keepFrom
      return Int16Array.from(out)
    },
  }
}
