import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { decodeMedia, mediaDuration } from '../../../src/engines/media/decode'
import { findMediaTools } from '../../../src/engines/media/ffmpeg'
import { MediaToolMissingError, MediaUnreadableError } from '../../../src/engines/media/errors'
import { readWavInfo } from '../../../src/engines/media/wav'
import { makeWav } from '../../fixtures/wav'
import { run, tempDir } from '../../helpers/process'

const tools = findMediaTools({})
const noTools = { ffmpeg: null, ffprobe: null }

async function collect(it: AsyncIterable<Float32Array>): Promise<Float32Array> {
  const parts: Float32Array[] = []
  for await (const p of it) parts.push(p)
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

/** The dominant frequency of a signal, by counting upward zero crossings. */
function frequency(samples: Float32Array, rate: number): number {
  let crossings = 0
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 && samples[i]! >= 0) crossings++
  return crossings / (samples.length / rate)
}

async function inTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const d = tempDir()
  try {
    return await fn(d.path)
  } finally {
    d.remove()
  }
}

describe('WAV without ffmpeg', () => {
  test.each([
    [8000, 1], [16000, 1], [44100, 2], [48000, 2], [22050, 6],
  ])('%i Hz, %i channel(s): duration from the header, decoded to 16 kHz mono with the tone intact', (rate, channels) => inTemp(async dir => {
    const path = join(dir, 'a.wav')
    await Bun.write(path, makeWav({ seconds: 2.5, sampleRate: rate, channels, frequency: 440 }))
    expect(await mediaDuration(path, noTools)).toBeCloseTo(2.5, 3)
    const samples = await collect(decodeMedia(path, 16000, noTools))
    expect(samples.length).toBe(40_000)
    expect(Math.abs(frequency(samples, 16000) - 440)).toBeLessThan(3)
  }))

  test('a file that is not WAV needs ffmpeg, and says how to install it', () => inTemp(async dir => {
    const path = join(dir, 'a.mp3')
    await Bun.write(path, 'ID3 not really an mp3')
    expect(await mediaDuration(path, noTools)).toBeNull()
    const err = await collect(decodeMedia(path, 16000, noTools)).catch(e => e)
    expect(err).toBeInstanceOf(MediaToolMissingError)
    expect(err.message).toContain('apt-get install ffmpeg')
  }))

  test('a WAV with no data chunk is unreadable', () => inTemp(async dir => {
    const path = join(dir, 'a.wav')
    await Bun.write(path, makeWav({ seconds: 1 }).slice(0, 36))
    expect(await readWavInfo(path).catch(e => e)).toBeInstanceOf(MediaUnreadableError)
  }))
})

describe('with ffmpeg', () => {
  test('an MP3 made by ffmpeg: duration from ffprobe, decoded to 16 kHz mono', () => inTemp(async dir => {
    expect(tools.ffmpeg, 'ffmpeg must be installed (apt-get install ffmpeg)').not.toBeNull()
    const wav = join(dir, 'a.wav')
    const mp3 = join(dir, 'a.mp3')
    await Bun.write(wav, makeWav({ seconds: 3, sampleRate: 44100, channels: 2, frequency: 300 }))
    expect((await run([tools.ffmpeg!, '-v', 'error', '-i', wav, mp3])).code).toBe(0)
    expect(Math.abs((await mediaDuration(mp3, tools))! - 3)).toBeLessThan(0.1)
    const samples = await collect(decodeMedia(mp3, 16000, tools))
    expect(Math.abs(samples.length - 48_000)).toBeLessThan(2000)
    expect(Math.abs(frequency(samples, 16000) - 300)).toBeLessThan(5)
  }))

  test('random bytes are unreadable media', () => inTemp(async dir => {
    const path = join(dir, 'noise.mp4')
    await Bun.write(path, crypto.getRandomValues(new Uint8Array(8192)))
    expect(await collect(decodeMedia(path, 16000, tools)).catch(e => e)).toBeInstanceOf(MediaUnreadableError)
  }))
})
