/**
 * Which engine a live stream gets (src/engines/live/engines.ts), from NOTESVC_LIVE_ENGINE and the
 * speech engine in use, and one stream on the real whisper.cpp binding with the generated tiny model
 * (its words are nonsense: what is checked is that partials and a final arrive and nothing fails).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../../src/config'
import { createAsrSelector } from '../../../src/engines/asr'
import { chooseLiveEngine, openLiveEngine, type LiveEngines } from '../../../src/engines/live/engines'
import type { LiveEvent } from '../../../src/engines/live/index'
import { DEFAULT_TURN_DETECTION } from '../../../src/engines/live/turns'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'
import { LIBRIVOX } from '../../fixtures/speech'
import { tempDir } from '../../helpers/process'

const withModel = tempDir('notesvc-live-models-')
const empty = tempDir('notesvc-live-nomodel-')
writeTinyWhisperModel(join(withModel.path, 'ggml-base.en.bin'), { multilingual: false })
afterAll(() => {
  withModel.remove()
  empty.remove()
})

/** The live engines `serve` gives the route for this environment. */
function liveEngines(env: Record<string, string>): LiveEngines {
  const config = loadConfig({ NOTESVC_DATA_DIR: '/tmp/notesvc-unused', ...env })
  const selector = createAsrSelector(config)
  return { setting: config.live.engine, asr: () => selector.current(), speech: config }
}

describe('NOTESVC_LIVE_ENGINE', () => {
  const cases: [string, Record<string, string>, Pick<ReturnType<typeof chooseLiveEngine>, 'kind' | 'detail'>][] = [
    ['auto, whisper.cpp with its model: the sliding window', { NOTESVC_MODELS_DIR: withModel.path },
      { kind: 'whisper', detail: `whisper.cpp, model ${withModel.path}/ggml-base.en.bin, on a sliding window of 15 s decoded every 1 s` }],
    ['NOTESVC_ASR=whisper without its model: PocketSphinx, saying why', { NOTESVC_ASR: 'whisper', NOTESVC_MODELS_DIR: empty.path },
      { kind: 'pocketsphinx', detail: `PocketSphinx's live decoder (the speech engine is whisper, but no Whisper model at ${empty.path}/ggml-base.en.bin)` }],
    ['auto without a model (the speech engine is PocketSphinx)', { NOTESVC_MODELS_DIR: empty.path },
      { kind: 'pocketsphinx', detail: "PocketSphinx's live decoder (the speech engine is pocketsphinx)" }],
    ['NOTESVC_ASR=remote: per turn', { NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: 'http://gpu.internal:8080/v1' },
      { kind: 'remote', detail: 'remote, http://gpu.internal:8080/v1, one request per turn (no partials)' }],
    ['NOTESVC_LIVE_ENGINE=pocketsphinx beside whisper.cpp with its model', { NOTESVC_MODELS_DIR: withModel.path, NOTESVC_LIVE_ENGINE: 'pocketsphinx' },
      { kind: 'pocketsphinx', detail: "PocketSphinx's live decoder (NOTESVC_LIVE_ENGINE=pocketsphinx)" }],
    ['NOTESVC_LIVE_ENGINE=pocketsphinx beside the remote engine', { NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: 'http://gpu.internal:8080/v1', NOTESVC_LIVE_ENGINE: 'pocketsphinx' },
      { kind: 'pocketsphinx', detail: "PocketSphinx's live decoder (NOTESVC_LIVE_ENGINE=pocketsphinx)" }],
  ]

  test.each(cases)('%s', (_name, env, expected) => {
    const choice = chooseLiveEngine(liveEngines(env))
    expect({ kind: choice.kind, detail: choice.detail }).toEqual(expected)
  })

  test('defaults to auto; another value stops start-up naming the ones it takes', () => {
    expect(loadConfig({ NOTESVC_DATA_DIR: '/tmp/notesvc-unused' }).live.engine).toBe('auto')
    expect(() => loadConfig({ NOTESVC_DATA_DIR: '/tmp/notesvc-unused', NOTESVC_LIVE_ENGINE: 'whisper' })).toThrow('NOTESVC_LIVE_ENGINE=whisper is not valid; use one of: auto, pocketsphinx')
  })
})

describe('whisper.cpp live, on the real binding and the generated tiny model', () => {
  test('speech in 20-ms frames: speech started, partials while the turn goes on, the final after it; no error', async () => {
    const engines = liveEngines({ NOTESVC_MODELS_DIR: withModel.path, NOTESVC_ASR_SLOTS: '1' })
    expect(chooseLiveEngine(engines).kind).toBe('whisper')
    const r = openLiveEngine(engines, { turnDetection: DEFAULT_TURN_DETECTION, language: null, prompt: null })
    const events: LiveEvent[] = []
    r.on(e => void events.push(e))
    // one LibriVox clip (about 5 s of speech), then 1 s of silence that ends the turn
    const file = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort()[1]!
    const b = readFileSync(join(LIBRIVOX, file))
    const clip = new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
    const audio = new Int16Array(clip.length + 16_000)
    audio.set(clip)
    for (let at = 0; at < audio.length; at += 320) {
      r.push(audio.subarray(at, at + 320))
      // a second of audio at a time, then whisper.cpp's decode of it has its turn (as a client sending in real time gives it)
      if (at % 16_000 === 0) await Bun.sleep(0)
    }
    await r.close()
    const types = events.map(e => e.type)
    expect(types).not.toContain('error')
    expect(types[0]).toBe('ready')
    expect(types.filter(t => t === 'partial').length).toBeGreaterThanOrEqual(1)
    expect(types.indexOf('speechStarted')).toBeLessThan(types.indexOf('partial'))
    expect(types.indexOf('partial')).toBeLessThan(types.indexOf('final'))
    const final = events.find(e => e.type === 'final') as Extract<LiveEvent, { type: 'final' }>
    expect(final.item).toBe(0)
    expect(final.text.length).toBeGreaterThan(0)
    expect(final.end - final.start).toBeGreaterThan(clip.length / 16_000)
  }, 120_000)
})
