/**
 * Engines that stand in for a recording's speech and voices, for the tests of what the pipeline does
 * with remembered voices: two sentences, one per half of any recording, and two speakers (one per
 * half) whose voice prints the test chooses before each upload. The diarization engine reports
 * `builtin`, so the builtin engine's measured threshold (RECOGNITION_THRESHOLDS) applies; the prints
 * themselves are measured by bench/voices.ts and test/engines/diarization.
 */
import { expect } from 'bun:test'
import { SAMPLE_RATE, type AsrEngine, type ChunkTranscription } from '../../src/engines/asr/engine'
import type { DiarizationEngine } from '../../src/engines/diarization/engine'
import { makeWav } from '../fixtures/wav'
import type { createTestApp } from './app'
import { until } from './process'

/** Two sentences, the first in the recording's first half, the second in its second. */
export const twoSentences: AsrEngine = {
  name: 'two-sentences',
  async ready() {},
  async transcribeChunk(samples): Promise<ChunkTranscription> {
    const half = samples.length / SAMPLE_RATE / 2
    return { segments: [{ start: 0, end: half, text: 'The budget is ten thousand.' }, { start: half, end: 2 * half, text: 'We meet on Friday.' }], language: 'en' }
  },
}

/** A unit print `alike` similar (cosine) to [1, 0, 0]. */
export const printAlike = (alike: number) => Float32Array.from([alike, Math.sqrt(1 - alike * alike), 0])

/** A print unlike printAlike(x) for any x (orthogonal to [1, 0, 0] and [0, 1, 0]). */
export const otherVoice = () => Float32Array.from([0, 0, 1])

/** Two speakers, one per half, with the prints in `state.prints` when the recording is diarized. */
export function standInVoices() {
  const state = { prints: [printAlike(1), otherVoice()] }
  const engine: DiarizationEngine = {
    name: 'builtin',
    async ready() {},
    start() {
      let samples = 0
      return {
        feed: (block: Float32Array) => { samples += block.length },
        finish: async () => {
          const half = samples / SAMPLE_RATE / 2
          return { turns: [{ start: 0, end: half, speaker: 0 }, { start: half, end: 2 * half, speaker: 1 }], speakers: 2, embeddings: state.prints, engine: 'builtin' }
        },
      } as ReturnType<DiarizationEngine['start']>
    },
  }
  return { state, engine }
}

/** A 4-s WAV uploaded as `name` and processed (the app's workers started): the note's id once Done. */
export async function uploadSettled(t: ReturnType<typeof createTestApp>, token: string, name: string): Promise<string> {
  const wav = makeWav({ seconds: 4 })
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: name, contentType: 'audio/wav', fileSize: wav.length } })).body
  const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
  const note = await until(`${name} settles`, async () => {
    const n = (await t.call('GET', `/v1/notes/${up.noteId}`, { token })).body
    return n.status === 'Done' || n.status === 'Error' ? n : null
  }, 50_000, 50)
  expect([name, note.status]).toEqual([name, 'Done'])
  return up.noteId
}
