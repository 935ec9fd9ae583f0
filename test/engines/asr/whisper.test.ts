import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { AsrUnavailableError, SAMPLE_RATE } from '../../../src/engines/asr/engine'
import { createWhisperEngine, toSegments } from '../../../src/engines/asr/whisper'
import { tinyWhisperModel, writeTinyWhisperModel } from '../../fixtures/ggml-model'
import { ROOT, run, tempDir } from '../../helpers/process'

// A generated model with random weights: the words are nonsense, but whisper.cpp really loads it,
// computes the mel spectrogram, runs the encoder and decoder and cuts segments.
const dir = tempDir('notesvc-whisper-')
const multilingual = join(dir.path, 'ggml-tiny-random.bin')
const english = join(dir.path, 'ggml-tiny-random.en.bin')

beforeAll(() => {
  writeTinyWhisperModel(multilingual)
  writeTinyWhisperModel(english, { multilingual: false })
})
afterAll(() => dir.remove())

/** A 220 Hz tone under seeded noise, 16 kHz mono float32. */
function audio(seconds: number, seed = 7): Float32Array {
  const out = new Float32Array(Math.round(seconds * SAMPLE_RATE))
  let x = seed
  for (let i = 0; i < out.length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    out[i] = 0.4 * Math.sin((2 * Math.PI * 220 * i) / SAMPLE_RATE) + 0.1 * (x / 2147483648 - 0.5)
  }
  return out
}

function expectInside(segments: { start: number; end: number; text: string }[], seconds: number) {
  for (const s of segments) {
    expect(s.start).toBeGreaterThanOrEqual(0)
    expect(s.end).toBeGreaterThanOrEqual(s.start)
    expect(s.end).toBeLessThanOrEqual(seconds)
    expect(s.text.length).toBeGreaterThan(0)
  }
}

describe('whisper engine (whisper.cpp in-process)', () => {
  test('transcribes a chunk into timed segments inside the chunk and names the language it detected', async () => {
    const engine = createWhisperEngine({ modelPath: multilingual, threads: 2 })
    expect(engine.name).toBe('whisper')
    await engine.ready()
    const result = await engine.transcribeChunk(audio(4), { language: null })
    expect(result.segments.length).toBeGreaterThan(0)
    expectInside(result.segments, 4)
    expect(result.language).toMatch(/^[a-z]{2,3}$/)
  })

  test('a language the caller names is used instead of detection', async () => {
    const engine = createWhisperEngine({ modelPath: multilingual, threads: 2 })
    const result = await engine.transcribeChunk(audio(3), { language: 'de' })
    expect(result.language).toBe('de')
    expectInside(result.segments, 3)
  })

  test('an English-only model answers English', async () => {
    const engine = createWhisperEngine({ modelPath: english, threads: 2 })
    const result = await engine.transcribeChunk(audio(3), { language: null })
    expect(result.language).toBe('en')
    expectInside(result.segments, 3)
  })

  test('says which models hear English only, and that it translates; segments carry their decoding temperature', async () => {
    const en = createWhisperEngine({ modelPath: english, threads: 2 })
    const multi = createWhisperEngine({ modelPath: multilingual, threads: 2 })
    expect(en.englishOnly!()).toBe(true)
    expect(multi.englishOnly!()).toBe(false)
    expect(multi.translates).toBe(true)
    // not there yet: not called English-only (ready() says what is missing)
    expect(createWhisperEngine({ modelPath: join(dir.path, 'ggml-none.bin') }).englishOnly!()).toBe(false)
    const greedy = await multi.transcribeChunk(audio(3), { language: 'de', prompt: 'Marianne Dashwood', translate: true })
    expectInside(greedy.segments, 3)
    expect(greedy.segments.length).toBeGreaterThan(0)
    expect(greedy.segments.map(s => s.temperature)).toEqual(greedy.segments.map(() => 0))
    const again = await multi.transcribeChunk(audio(3), { language: 'de', fallback: true })
    expect(again.segments.length).toBeGreaterThan(0)
    expect(again.segments.map(s => s.temperature)).toEqual(again.segments.map(() => 0.4))
  })

  test('the model is loaded lazily and once: the engine keeps it after the file is gone', async () => {
    const path = join(dir.path, 'ggml-later.bin')
    const engine = createWhisperEngine({ modelPath: path, threads: 2 })
    await expect(engine.ready()).rejects.toBeInstanceOf(AsrUnavailableError)
    writeTinyWhisperModel(path)
    await engine.ready()
    await engine.transcribeChunk(audio(2), { language: 'en' })
    rmSync(path)
    const again = await engine.transcribeChunk(audio(2), { language: 'en' })
    expect(again.language).toBe('en')
  })

  test('a missing model is AsrUnavailableError naming the command that fetches it', async () => {
    const engine = createWhisperEngine({ modelPath: join(dir.path, 'ggml-base.en.bin') })
    const ready = await engine.ready().catch((e: unknown) => e)
    expect(ready).toBeInstanceOf(AsrUnavailableError)
    expect((ready as Error).message).toContain('bun run cli models pull base.en')
    const transcribe = await engine.transcribeChunk(audio(1), { language: null }).catch((e: unknown) => e)
    expect(transcribe).toBeInstanceOf(AsrUnavailableError)
    expect((transcribe as Error).message).toContain('bun run cli models pull base.en')
  })

  test('a file that is not a ggml model is AsrUnavailableError too', async () => {
    const path = join(dir.path, 'ggml-small.bin')
    writeFileSync(path, '<html>not found</html>')
    const error = await createWhisperEngine({ modelPath: path }).ready().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AsrUnavailableError)
    expect((error as Error).message).toContain('bun run cli models pull small')
  })

  test('a truncated download fails to load with whisper.cpp\'s reason and the pull command', async () => {
    const path = join(dir.path, 'ggml-medium.bin')
    const model = tinyWhisperModel()
    writeFileSync(path, model.subarray(0, model.length - 1000))
    const engine = createWhisperEngine({ modelPath: path, threads: 2 })
    await engine.ready() // the header is fine; the loader finds the missing tensors
    const error = await engine.transcribeChunk(audio(1), { language: null }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AsrUnavailableError)
    expect((error as Error).message).toContain('not all tensors loaded')
    expect((error as Error).message).toContain('bun run cli models pull medium')
  })

  test('an abort rejects with the signal reason, and the engine keeps working', async () => {
    const engine = createWhisperEngine({ modelPath: multilingual, threads: 2 })
    const reason = new Error('job cancelled')
    await expect(engine.transcribeChunk(audio(1), { language: null, signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    const controller = new AbortController()
    const pending = engine.transcribeChunk(audio(3), { language: null, signal: controller.signal })
    setTimeout(() => controller.abort(reason), 20)
    await expect(pending).rejects.toBe(reason)
    const after = await engine.transcribeChunk(audio(2), { language: 'en' })
    expectInside(after.segments, 2)
  })
})

describe('toSegments', () => {
  test.each([
    ['milliseconds become seconds', [{ text: ' Hello.', t0: 760, t1: 2120 }], [{ start: 0.76, end: 2.12, text: 'Hello.' }]],
    ['an end in the padding past the chunk is clamped', [{ text: ' a', t0: 1000, t1: 28100 }], [{ start: 1, end: 5, text: 'a' }]],
    ['a segment that starts past the chunk is dropped', [{ text: ' ghost', t0: 6000, t1: 9000 }], []],
    ['an empty segment is dropped', [{ text: '  ', t0: 0, t1: 500 }], []],
    ['an end before the start becomes the start', [{ text: 'x', t0: 2000, t1: 1500 }], [{ start: 2, end: 2, text: 'x' }]],
  ])('%s', (_, native, expected) => {
    expect(toSegments(native, 5)).toEqual(expected)
  })
})

describe('inside a compiled binary', () => {
  const build = tempDir('notesvc-whisper-bin-')
  const work = tempDir('notesvc-whisper-run-')
  const binary = join(build.path, 'transcribe')
  afterAll(() => { build.remove(); work.remove() })

  test('the addon is embedded and transcribes from an empty folder', async () => {
    const entry = join(build.path, 'entry.ts')
    writeFileSync(entry, `
      import { AsrUnavailableError } from ${JSON.stringify(join(ROOT, 'src/engines/asr/engine.ts'))}
      import { createWhisperEngine } from ${JSON.stringify(join(ROOT, 'src/engines/asr/whisper.ts'))}
      // in a function: a binary built with --bytecode (scripts/build.ts) cannot have top-level await
      void (async () => {
        const engine = createWhisperEngine({ modelPath: process.argv[2]!, threads: 2 })
        try {
          await engine.ready()
          const samples = new Float32Array(3 * 16000).map((_, i) => 0.5 * Math.sin((2 * Math.PI * 220 * i) / 16000))
          console.log(JSON.stringify(await engine.transcribeChunk(samples, { language: null })))
        } catch (err) {
          console.log(JSON.stringify({ unavailable: err instanceof AsrUnavailableError, message: (err as Error).message }))
        }
      })()
    `)
    // the flags of scripts/build.ts
    const built = await run(['bun', 'build', '--compile', '--bytecode', '--minify-whitespace', '--minify-syntax', '--sourcemap=none', entry, '--outfile', binary])
    expect(built.code).toBe(0)
    // the addon travels inside the binary, not as a path into this checkout's node_modules
    const bytes = readFileSync(binary)
    expect(bytes.includes(join(ROOT, 'node_modules/@fugood'))).toBe(false)
    expect(bytes.includes('$bunfs/root/index-')).toBe(true)

    const ok = await run([binary, multilingual], { cwd: work.path })
    expect(ok.code).toBe(0)
    const result = JSON.parse(ok.stdout)
    expect(result.segments.length).toBeGreaterThan(0)
    expectInside(result.segments, 3)
    expect(result.language).toMatch(/^[a-z]{2,3}$/)
    expect(ok.stderr).not.toContain('whisper_') // whisper.cpp's chatter goes to the logger, not stderr

    const missing = await run([binary, join(work.path, 'ggml-tiny.en.bin')], { cwd: work.path })
    expect(JSON.parse(missing.stdout)).toEqual({
      unavailable: true,
      // a compiled program names itself, as started, in the command that fixes this
      message: expect.stringContaining(`${binary} models pull tiny.en`),
    })
  }, 60_000)
})
