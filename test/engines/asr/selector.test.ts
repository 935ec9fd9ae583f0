import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { loadConfig, type Config } from '../../../src/config'
import { AsrUnavailableError } from '../../../src/engines/asr/engine'
import { createAsrSelector, missingSpeechEngine } from '../../../src/engines/asr'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'
import { tempDir } from '../../helpers/process'

/**
 * NOTESVC_ASR (DECISIONS.md "Beyond the interface", speech engine): `auto` by default, whisper.cpp
 * when its model file is present, else PocketSphinx when installed (the Debian packages the test
 * machine has), else none; `whisper` and `pocketsphinx` force one.
 */
const dirs: ReturnType<typeof tempDir>[] = []
afterAll(() => dirs.forEach(d => d.remove()))

/** A models folder, with base.en in it when asked. */
function modelsDir(withModel: boolean): string {
  const d = tempDir('notesvc-asr-models-')
  dirs.push(d)
  if (withModel) writeTinyWhisperModel(join(d.path, 'ggml-base.en.bin'), { multilingual: false })
  return d.path
}

const NOT_INSTALLED = { program: '/nonexistent/bin/pocketsphinx_continuous' }

function config(env: Record<string, string>, pocketsphinx?: Config['pocketsphinx']): Config {
  const c = loadConfig({ NOTESVC_DATA_DIR: '/tmp/notesvc-unused', ...env })
  return pocketsphinx ? { ...c, pocketsphinx } : c
}

describe('NOTESVC_ASR', () => {
  test('defaults to auto', () => {
    expect(loadConfig({}).asr).toBe('auto')
    expect(() => loadConfig({ NOTESVC_ASR: 'vosk' })).toThrow('NOTESVC_ASR=vosk is not valid; use one of: auto, whisper, pocketsphinx')
  })

  test('auto picks whisper.cpp when its model file is present, even with PocketSphinx missing', () => {
    const s = createAsrSelector(config({ NOTESVC_MODELS_DIR: modelsDir(true) }, NOT_INSTALLED))
    expect(s.current().name).toBe('whisper')
    expect(s.describe().engine).toBe('whisper')
  })

  test('auto picks PocketSphinx when there is no Whisper model and the Debian packages are installed', async () => {
    const s = createAsrSelector(config({ NOTESVC_MODELS_DIR: modelsDir(false) }))
    expect(s.current().name).toBe('pocketsphinx')
    await s.current().ready()
    expect(s.describe().detail).toContain('no Whisper model at')
  })

  test('auto with neither gives none, which says how to install either one', async () => {
    const s = createAsrSelector(config({ NOTESVC_MODELS_DIR: modelsDir(false) }, NOT_INSTALLED))
    const engine = s.current()
    expect(engine.name).toBe('none')
    const message = missingSpeechEngine(engine)
    expect(message).toContain('`bun run cli models pull base.en`')
    expect(message).toContain('`apt-get install pocketsphinx pocketsphinx-en-us`')
    await expect(engine.ready()).rejects.toBeInstanceOf(AsrUnavailableError)
    expect(s.describe()).toMatchObject({ engine: 'none' })
    expect(s.describe().detail).toContain('/nonexistent/bin/pocketsphinx_continuous')
  })

  test('auto looks again on each use: a model pulled while the server runs is used at once', () => {
    const dir = modelsDir(false)
    const s = createAsrSelector(config({ NOTESVC_MODELS_DIR: dir }, NOT_INSTALLED))
    expect(s.current().name).toBe('none')
    writeTinyWhisperModel(join(dir, 'ggml-base.en.bin'), { multilingual: false })
    expect(s.current().name).toBe('whisper')
  })

  test('whisper and pocketsphinx force one engine, installed or not (its own error then says what is missing)', async () => {
    const empty = modelsDir(false)
    const whisper = createAsrSelector(config({ NOTESVC_ASR: 'whisper', NOTESVC_MODELS_DIR: empty }))
    expect(whisper.current().name).toBe('whisper')
    expect(missingSpeechEngine(whisper.current())).toBeNull()
    await expect(whisper.current().ready()).rejects.toThrow('bun run cli models pull base.en')
    const pocketsphinx = createAsrSelector(config({ NOTESVC_ASR: 'pocketsphinx', NOTESVC_MODELS_DIR: modelsDir(true) }, NOT_INSTALLED))
    expect(pocketsphinx.current().name).toBe('pocketsphinx')
    await expect(pocketsphinx.current().ready()).rejects.toThrow('apt-get install pocketsphinx pocketsphinx-en-us')
  })
})
