/**
 * The live route's 24 kHz → 16 kHz conversion (src/engines/live/resample.ts): what the engine hears
 * of a client's audio.
 */
import { expect, test } from 'bun:test'
import { createResampler } from '../../../src/engines/live/resample'

const tone = (hz: number, rate: number, n: number, amplitude = 10_000) => Int16Array.from({ length: n }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)))

function pushAll(input: Int16Array, sizes: number[]): Int16Array {
  const r = createResampler(24_000, 16_000)
  const out: number[] = []
  for (let at = 0, k = 0; at < input.length; k++) {
    const size = sizes[k % sizes.length]!
    out.push(...r.push(input.subarray(at, at + size)))
    at += size
  }
  return Int16Array.from(out)
}

test('a 1 kHz tone at 24 kHz comes out a 1 kHz tone at 16 kHz, within 1 % of its amplitude', () => {
  const out = pushAll(tone(1000, 24_000, 24_000), [2400])
  // one second in; the last 12 input samples wait for what follows them
  expect(out.length).toBe(16_000 - 8)
  const expected = tone(1000, 16_000, out.length)
  const worst = Math.max(...Array.from(out.subarray(16), (v, i) => Math.abs(v - expected[i + 16]!)))
  expect(worst).toBeLessThan(100)
})

test('a 10 kHz tone, above the 8 kHz the output can hold, is removed rather than folded into the band the model hears', () => {
  const out = pushAll(tone(10_000, 24_000, 24_000), [2400]).subarray(16)
  const rms = Math.sqrt(out.reduce((s, v) => s + v * v, 0) / out.length)
  expect(rms).toBeLessThan(0.01 * 10_000)
})

test('pushed in pieces of any length, the output is the same as at once', () => {
  const input = Int16Array.from({ length: 9_601 }, (_, i) => Math.round(8000 * Math.sin(i / 7) + 3000 * Math.sin(i / 2.3)))
  const whole = pushAll(input, [input.length])
  expect(pushAll(input, [1, 7, 2400, 3, 480])).toEqual(whole)
  expect(pushAll(input, [2400])).toEqual(whole)
})

test('each output sample is the Blackman-windowed sinc interpolation of the input around its position, cut at 0.9 × 8 kHz, 12 taps a side', () => {
  const input = Int16Array.from({ length: 4_800 }, (_, i) => Math.round(9000 * Math.sin(i / 5.3) + 4000 * Math.cos(i / 1.7)))
  const out = pushAll(input, [480])
  const cutoff = 0.9 * (16_000 / 24_000)
  const h = (x: number) => {
    if (Math.abs(x) >= 12) return 0
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x)
    return cutoff * sinc * (0.42 + 0.5 * Math.cos((Math.PI * x) / 12) + 0.08 * Math.cos((2 * Math.PI * x) / 12))
  }
  const direct = (j: number) => {
    const at = j * 1.5
    let sum = 0
    for (let k = Math.floor(at) - 11; k <= Math.floor(at) + 12; k++) sum += (input[k] ?? 0) * h(at - k)
    return Math.max(-32768, Math.min(32767, Math.round(sum)))
  }
  expect(out).toEqual(Int16Array.from({ length: out.length }, (_, j) => direct(j)))
})

test('16 kHz passes through unchanged', () => {
  const input = tone(440, 16_000, 1600)
  expect(createResampler(16_000, 16_000).push(input)).toBe(input)
})
