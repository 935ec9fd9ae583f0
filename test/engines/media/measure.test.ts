import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { measuredDuration, mediaDuration } from '../../../src/engines/media/decode'
import { findMediaTools } from '../../../src/engines/media/ffmpeg'
import { MediaUnreadableError } from '../../../src/engines/media/errors'
import { makeWav } from '../../fixtures/wav'
import { lyingRecordings, wavClaimingRate, type LyingRecording } from '../../fixtures/lying-media'
import { run, tempDir } from '../../helpers/process'

/**
 * The duration a recording is charged on (issue 29, item 6): measured from the audio it holds, not
 * read from a header that may lie. Each lying file is shown lying to ffprobe first (mediaDuration,
 * the header's reading), then measured.
 */
const tools = findMediaTools({})
const dir = tempDir('notesvc-measure-')
let lying: LyingRecording[] = []
beforeAll(async () => {
  expect(tools.ffmpeg, 'ffmpeg must be installed (apt-get install ffmpeg)').not.toBeNull()
  lying = await lyingRecordings(dir.path, tools.ffmpeg!)
})
afterAll(() => dir.remove())

async function stored(name: string, bytes: Uint8Array): Promise<string> {
  const path = join(dir.path, `stored-${name}`)
  await Bun.write(path, bytes)
  return path
}

describe('a header that lies', () => {
  test('each lying file reads as its lie in its header (ffprobe), and as its audio when measured', async () => {
    expect(lying.length).toBe(5)
    for (const r of lying) {
      const path = await stored(r.fileName, r.bytes)
      expect({ kind: r.kind, header: Math.round((await mediaDuration(path, tools))! * 100) / 100 }).toEqual({ kind: r.kind, header: r.claimedSeconds })
      if (r.trueSeconds === null) {
        const err = await measuredDuration(path, tools).catch(e => e)
        expect(err).toBeInstanceOf(MediaUnreadableError)
        expect(err.message).toMatch(/its header says the audio has \d samples a second, which no recording has \(4000 to 768000\): the file is damaged or its header was altered/)
      } else {
        const seconds = await measuredDuration(path, tools)
        expect({ kind: r.kind, within: Math.abs(seconds! - r.trueSeconds) < 0.1 }).toEqual({ kind: r.kind, within: true })
      }
    }
  })
})

describe('honest files', () => {
  test.each([[8000, 1], [16000, 2], [44100, 2]])('a %i Hz WAV of %i channel(s): its exact length, without ffmpeg too', async (rate, channels) => {
    const path = await stored(`${rate}-${channels}.wav`, makeWav({ seconds: 2.5, sampleRate: rate, channels }))
    expect(await measuredDuration(path, tools)).toBe(2.5)
    expect(await measuredDuration(path, { ffmpeg: null, ffprobe: null })).toBe(2.5)
  })

  test('the lowest and highest rates a recording has are measured; one beyond them is refused', async () => {
    const low = makeWav({ seconds: 1, sampleRate: 4000 })
    expect(await measuredDuration(await stored('4k.wav', low), tools)).toBe(1)
    expect(await measuredDuration(await stored('3999.wav', wavClaimingRate(low, 3999)), tools).catch(e => e.message)).toContain('3999 samples a second')
    expect(await measuredDuration(await stored('768k.wav', wavClaimingRate(low, 768_000)), tools)).toBeCloseTo(4000 / 768_000, 6)
    expect(await measuredDuration(await stored('768001.wav', wavClaimingRate(low, 768_001)), tools).catch(e => e.message)).toContain('768001 samples a second')
  })

  test('a video without sound is refused: it holds no audio stream', async () => {
    const path = join(dir.path, 'silent.mp4')
    expect((await run([tools.ffmpeg!, '-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=64x64:rate=10', '-pix_fmt', 'yuv420p', path])).code).toBe(0)
    const err = await measuredDuration(path, tools).catch(e => e)
    expect(err).toBeInstanceOf(MediaUnreadableError)
    expect(err.message).toBe('the file holds no audio stream')
  })

  test('a file that is not media: refused with what ffmpeg said', async () => {
    const err = await measuredDuration(await stored('notes.mp3', new TextEncoder().encode('Minutes of the meeting.\n'.repeat(100))), tools).catch(e => e)
    expect(err).toBeInstanceOf(MediaUnreadableError)
    expect(err.message).toStartWith('ffmpeg could not decode the file')
  })
})
