/**
 * The record button's PCM conversion (src/modules/web/assets/library/pcm.js, run by the AudioWorklet
 * in the browser): the page's Float32 samples at the audio graph's rate into the 24 kHz pcm16 the live
 * stream sends, fed in the 128-sample blocks an AudioWorklet gets.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { ROOT } from '../../helpers/process'

// a browser module: imported by path, as the bundle does (its type for library.ts is its text)
const pcm: any = await import(join(ROOT, 'src/modules/web/assets/library/pcm.js'))

/** `seconds` of a sine of `hz` at `rate`, amplitude `a` */
function sine(rate: number, hz: number, seconds: number, a = 0.5): Float32Array {
  return Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => a * Math.sin((2 * Math.PI * hz * i) / rate))
}

/** the encoder fed in blocks of `block` samples, its outputs joined */
function encodeInBlocks(rate: number, input: Float32Array, block = 128): Int16Array {
  const encode = pcm.createPcmEncoder(rate)
  const parts: number[] = []
  for (let i = 0; i < input.length; i += block) parts.push(...encode(input.subarray(i, i + block)))
  return Int16Array.from(parts)
}

test('24 kHz in: the same samples out as 16-bit integers, whatever the blocks', () => {
  const input = Float32Array.from([0, 0.5, -0.5, 1, -1, 1.5, -1.5, 0.25])
  expect([...encodeInBlocks(24000, input, 3)]).toEqual([0, 16384, -16384, 32767, -32768, 32767, -32768, 8192])
})

test('48 kHz and 44.1 kHz in: 24,000 samples a second out, with no drift across blocks, and speech-band tones kept', () => {
  for (const rate of [48000, 44100]) {
    const out = encodeInBlocks(rate, sine(rate, 440, 2))
    // two seconds of input give two seconds of output, within a sample
    expect(Math.abs(out.length - 48000)).toBeLessThanOrEqual(1)
    const expected = sine(24000, 440, 2)
    let worst = 0
    for (let i = 0; i < out.length - 1; i++) worst = Math.max(worst, Math.abs(out[i]! / 32768 - expected[i]!))
    // within 2 % of full scale of the same tone sampled at 24 kHz (the mean over a step shifts it by at most half an input sample)
    expect([rate, worst < 0.02]).toEqual([rate, true])
  }
})

test('the level of a block for the meter: silence 0, full scale 1, -20 dBFS two thirds', () => {
  expect(pcm.levelOf(new Int16Array(2400))).toBe(0)
  expect(pcm.levelOf(new Int16Array(2400).fill(-32768))).toBe(1)
  const quiet = new Int16Array(2400).fill(3277)
  expect(pcm.levelOf(quiet)).toBeCloseTo(2 / 3, 2)
})

test('base64 of the samples\' little-endian bytes, as input_audio_buffer.append takes them', () => {
  expect(pcm.base64Pcm(Int16Array.from([1, -2, 256]))).toBe(Buffer.from([0x01, 0x00, 0xfe, 0xff, 0x00, 0x01]).toString('base64'))
  // a view into a larger buffer: only its own samples
  expect(pcm.base64Pcm(Int16Array.from([7, 1, -2, 9]).subarray(1, 3))).toBe(Buffer.from([0x01, 0x00, 0xfe, 0xff]).toString('base64'))
})
