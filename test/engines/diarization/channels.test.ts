import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { diarizationError } from '../../../bench/lib/der'
import { ChannelSplitter, diarizeChannels } from '../../../src/engines/diarization/channels'
import { findMediaTools } from '../../../src/engines/media/ffmpeg'
import { conversation, realVoices } from '../../fixtures/conversation'
import { wavFromPcm } from '../../fixtures/wav'

const voices = realVoices()
// a call: the LibriVox reader on the left, the cards speaker on the right, each heard faintly (-30 dB) on the other's line
const call = conversation([voices.librivox, voices.cards], { seconds: 30, seed: 5, overlap: 0.1 })
const [left, right] = call.tracks.map((t, i, all) => Float32Array.from(t, (x, j) => x + 0.03 * all[1 - i]![j]!))

function interleave(l: Float32Array, r: Float32Array): Float32Array {
  const out = new Float32Array(l.length * 2)
  for (let i = 0; i < l.length; i++) {
    out[2 * i] = l[i]!
    out[2 * i + 1] = r[i]!
  }
  return out
}

function stereoWav(l: Float32Array, r: Float32Array): Uint8Array {
  const pcm = Int16Array.from(interleave(l, r), x => Math.round(Math.max(-1, Math.min(1, x)) * 32767))
  const wav = Buffer.from(wavFromPcm(pcm, 16_000))
  // wavFromPcm writes mono: make the header say two channels at the same sample rate
  wav.writeUInt16LE(2, 22)
  wav.writeUInt32LE(16_000 * 4, 28)
  wav.writeUInt16LE(4, 32)
  return wav
}

const dir = mkdtempSync(join(tmpdir(), 'channels-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('channel splitter', () => {
  test('a call with one person per channel: a speaker per channel, turns where the truth has them', () => {
    const splitter = new ChannelSplitter()
    const samples = interleave(left!, right!)
    for (let at = 0; at < samples.length; at += 12_345) splitter.feed(samples.subarray(at, at + 12_345))
    const d = splitter.finish()
    expect(d).not.toBeNull()
    expect(d!.engine).toBe('channels')
    expect(d!.speakers).toBe(2)
    expect(d!.turns[0]!.speaker).toBe(0)
    expect(diarizationError(call.truth, d!.turns).der).toBeLessThan(0.1)
  })

  test('the same sound on both channels (mono copied to stereo) is not split', () => {
    const splitter = new ChannelSplitter()
    splitter.feed(interleave(call.samples, call.samples))
    expect(splitter.finish()).toBeNull()
  })

  test('one silent channel is not two speakers', () => {
    const splitter = new ChannelSplitter()
    splitter.feed(interleave(call.samples, new Float32Array(call.samples.length)))
    expect(splitter.finish()).toBeNull()
  })

  test('from a file: a stereo call WAV is split, a mono WAV and a duplicated stereo WAV are not', async () => {
    const tools = findMediaTools({})
    const callWav = join(dir, 'call.wav')
    const dupWav = join(dir, 'dup.wav')
    const monoWav = join(dir, 'mono.wav')
    writeFileSync(callWav, stereoWav(left!, right!))
    writeFileSync(dupWav, stereoWav(call.samples, call.samples))
    writeFileSync(monoWav, wavFromPcm(Int16Array.from(call.samples, x => Math.round(x * 32767)), 16_000))
    const split = await diarizeChannels(callWav, tools)
    expect(split?.speakers).toBe(2)
    expect(diarizationError(call.truth, split!.turns).der).toBeLessThan(0.1)
    expect(await diarizeChannels(dupWav, tools)).toBeNull()
    expect(await diarizeChannels(monoWav, tools)).toBeNull()
  })
})
