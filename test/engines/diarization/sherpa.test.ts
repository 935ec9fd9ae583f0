import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DiarizationUnavailableError, diarizeSamples, SAMPLE_RATE, type Diarization } from '../../../src/engines/diarization/engine'
import { diarizationModelPaths, sherpaModelsPresent } from '../../../src/engines/diarization/models'
import { DiarizationPullError, importDiarizationModel, pullDiarizationModels } from '../../../src/engines/diarization/pull'
import { createSherpaDiarizationEngine } from '../../../src/engines/diarization/sherpa'
import { numberedByFirstSpeech, withoutOverlaps } from '../../../src/engines/diarization/turns'
import { tinyEmbeddingModel, tinySegmentationModel, writeTinyDiarizationModels } from '../../fixtures/onnx-model'
import { speechSamples } from '../../fixtures/speech-samples'
import { ROOT, run, tempDir } from '../../helpers/process'

// Generated models with random weights: the speakers they find mean nothing, but the real addon loads
// them, runs onnxruntime over real speech, embeds and clusters, and our code shapes the result.
const dir = tempDir('notesvc-sherpa-')
const modelsDir = join(dir.path, 'models')
const speech = speechSamples(60)

beforeAll(() => {
  mkdirSync(join(modelsDir, 'diarization'), { recursive: true })
  writeTinyDiarizationModels(diarizationModelPaths(modelsDir))
})
afterAll(() => dir.remove())

/** What every diarization must be, whatever the model heard. */
function expectWellFormed(d: Diarization, seconds: number) {
  expect(d.engine).toBe('sherpa-onnx')
  let end = 0
  let next = 0
  for (const t of d.turns) {
    expect(t.start).toBeGreaterThanOrEqual(end) // in time order, no overlaps
    expect(t.end).toBeGreaterThan(t.start)
    expect(t.end).toBeLessThanOrEqual(seconds)
    expect(t.speaker).toBeLessThanOrEqual(next) // numbered in the order they are first heard
    if (t.speaker === next) next++
    end = t.end
  }
  expect(d.speakers).toBe(next)
  expect(d.embeddings).toHaveLength(d.speakers)
  for (const e of d.embeddings ?? []) expect(Math.hypot(...e)).toBeCloseTo(1, 4)
}

describe('the sherpa-onnx engine on generated models', () => {
  const engine = createSherpaDiarizationEngine({ modelsDir, threads: 1 })

  test('ready() passes when both models are there', async () => {
    expect(sherpaModelsPresent(modelsDir).ready).toBe(true)
    await engine.ready()
  })

  test('60 s of speech: turns in order, inside the recording, one voice print per speaker', async () => {
    const d = await diarizeSamples(engine, speech)
    expectWellFormed(d, 60)
    expect(d.turns.length).toBeGreaterThan(0)
    // the speech is heard: turns cover a good part of a minute of reading
    expect(d.turns.reduce((s, t) => s + t.end - t.start, 0)).toBeGreaterThan(30)
  })

  test.each([1, 2, 3, 4])('an exact count of %i speakers is honoured on 60 s', async exact => {
    const d = await diarizeSamples(engine, speech, { speakers: { exact } })
    expectWellFormed(d, 60)
    expect(d.speakers).toBe(exact)
  })

  test.each([1, 2])('an exact count of %i is honoured on 8 s (one window, which sherpa-onnx does not cluster)', async exact => {
    const d = await diarizeSamples(engine, speech.subarray(0, 8 * SAMPLE_RATE), { speakers: { exact } })
    expectWellFormed(d, 8)
    expect(d.speakers).toBe(exact)
  })

  test('a maximum is honoured where sherpa-onnx finds more (8 s: its 3 local speakers)', async () => {
    const eight = speech.subarray(0, 8 * SAMPLE_RATE)
    expect((await diarizeSamples(engine, eight)).speakers).toBe(3)
    const d = await diarizeSamples(engine, eight, { speakers: { max: 2 } })
    expectWellFormed(d, 8)
    expect(d.speakers).toBe(2)
  })

  test('a count above what sherpa-onnx can cluster (20 in 12 s) gives what it finds without a count, not everyone as one', async () => {
    // a threshold this low makes the generated model's voice prints several speakers
    const fine = createSherpaDiarizationEngine({ modelsDir, threads: 1, threshold: 0.001 })
    const twelve = speech.subarray(0, 12 * SAMPLE_RATE)
    const free = await diarizeSamples(fine, twelve)
    expect(free.speakers).toBeGreaterThan(1)
    const d = await diarizeSamples(fine, twelve, { speakers: { exact: 20 } })
    expectWellFormed(d, 12)
    expect(d.speakers).toBe(free.speakers)
  })

  test('two sessions finishing at once each get their own count (runs are one at a time: the clustering setting is shared)', async () => {
    const [two, three, free] = await Promise.all([
      diarizeSamples(engine, speech, { speakers: { exact: 2 } }),
      diarizeSamples(engine, speech, { speakers: { exact: 3 } }),
      diarizeSamples(engine, speech),
    ])
    expect([two.speakers, three.speakers]).toEqual([2, 3])
    expect(free).toEqual(await diarizeSamples(engine, speech))
  })

  test('samples fed in small pieces give what the whole recording gives', async () => {
    const session = engine.start()
    for (let i = 0; i < 20 * SAMPLE_RATE; i += 1234) session.feed(speech.subarray(i, Math.min(i + 1234, 20 * SAMPLE_RATE)))
    const pieces = await session.finish({ speakers: { exact: 2 } })
    const whole = await diarizeSamples(engine, speech.subarray(0, 20 * SAMPLE_RATE), { speakers: { exact: 2 } })
    expect(pieces.turns).toEqual(whole.turns)
  })

  test('silence and an empty recording have no speakers', async () => {
    for (const samples of [new Float32Array(30 * SAMPLE_RATE), new Float32Array(0)]) {
      const d = await diarizeSamples(engine, samples)
      expect(d.turns).toEqual([])
      expect(d.speakers).toBe(0)
    }
  })

  test('an aborted diarization rejects with the reason', async () => {
    const controller = new AbortController()
    const pending = diarizeSamples(engine, speech, { signal: controller.signal })
    controller.abort(new Error('job cancelled'))
    await expect(pending).rejects.toThrow('job cancelled')
    // the engine still works afterwards
    expectWellFormed(await diarizeSamples(engine, speech.subarray(0, 15 * SAMPLE_RATE)), 15)
  })
})

describe('when the engine cannot run', () => {
  test('missing models: DiarizationUnavailableError naming the files and the command', async () => {
    const empty = join(dir.path, 'empty-models')
    const state = sherpaModelsPresent(empty)
    expect(state.ready).toBe(false)
    expect(state.missing).toEqual(Object.values(diarizationModelPaths(empty)))
    const engine = createSherpaDiarizationEngine({ modelsDir: empty })
    const err = await engine.ready().catch(e => e)
    expect(err).toBeInstanceOf(DiarizationUnavailableError)
    expect(err.message).toContain(join(empty, 'diarization', 'segmentation.onnx'))
    expect(err.message).toContain(join(empty, 'diarization', 'embedding.onnx'))
    expect(err.message).toContain('bun run cli models pull diarization')
    expect(err.message).toContain('models import FILE')
    // and a session says the same instead of running
    await expect(diarizeSamples(engine, speech.subarray(0, SAMPLE_RATE))).rejects.toBeInstanceOf(DiarizationUnavailableError)
  })

  // sherpa-onnx would end this process on each of these (tested: abort() on a non-ONNX file, _Exit on a missing key)
  test.each([
    ['a file that is not ONNX', 'segmentation', new TextEncoder().encode('<html>not found</html>'), 'is not an ONNX model'],
    ['a segmentation model without num_classes', 'segmentation', tinySegmentationModel({ omit: ['num_classes'] }), 'no "num_classes"'],
    ['an embedding model of an unknown framework', 'embedding', tinyEmbeddingModel({ framework: 'nemo-x' }), 'framework is "nemo-x"'],
  ] as const)('%s: refused before sherpa-onnx sees it', async (_, role, bytes, message) => {
    const models = join(dir.path, `bad-${role}-${message.length}`)
    mkdirSync(join(models, 'diarization'), { recursive: true })
    writeTinyDiarizationModels(diarizationModelPaths(models))
    writeFileSync(diarizationModelPaths(models)[role], bytes)
    const err = await createSherpaDiarizationEngine({ modelsDir: models }).ready().catch(e => e)
    expect(err).toBeInstanceOf(DiarizationUnavailableError)
    expect(err.message).toContain(message)
    expect(err.message).toContain('models pull diarization')
  })
})

describe('turns from sherpa-onnx segments', () => {
  test.each([
    ['no overlap: kept, in order', 20, [{ start: 2, end: 3, speaker: 1 }, { start: 0, end: 1, speaker: 0 }], [{ start: 0, end: 1, speaker: 0 }, { start: 2, end: 3, speaker: 1 }]],
    ['an overlap goes to the longer segment', 20, [{ start: 0, end: 10, speaker: 0 }, { start: 4, end: 6, speaker: 1 }], [{ start: 0, end: 10, speaker: 0 }]],
    ['a longer segment takes the overlap from a shorter one', 20, [{ start: 0, end: 3, speaker: 0 }, { start: 2, end: 9, speaker: 1 }], [{ start: 0, end: 2, speaker: 0 }, { start: 2, end: 9, speaker: 1 }]],
    ['clamped to the recording, float32 noise rounded', 5, [{ start: -0.2, end: 0.45000001788139343, speaker: 0 }, { start: 4, end: 7, speaker: 1 }], [{ start: 0, end: 0.45, speaker: 0 }, { start: 4, end: 5, speaker: 1 }]],
    ['past the end: dropped', 5, [{ start: 6, end: 7, speaker: 0 }], []],
  ])('%s', (_, duration, raw, expected) => {
    expect(withoutOverlaps(raw, duration)).toEqual(expected)
  })

  test('speakers are numbered in the order they are first heard', () => {
    const { turns, original } = numberedByFirstSpeech([{ start: 5, end: 6, speaker: 0 }, { start: 0, end: 1, speaker: 2 }, { start: 2, end: 3, speaker: 0 }])
    expect(turns).toEqual([{ start: 0, end: 1, speaker: 0 }, { start: 2, end: 3, speaker: 1 }, { start: 5, end: 6, speaker: 1 }])
    expect(original).toEqual([2, 0])
  })
})

describe('model files', () => {
  const source = join(dir.path, 'from-another-machine')
  beforeAll(() => {
    mkdirSync(source, { recursive: true })
    writeTinyDiarizationModels({ segmentation: join(source, 'model.onnx'), embedding: join(source, 'voice.onnx') })
    writeFileSync(join(source, 'notes.txt'), 'meeting notes, not a model\n')
  })

  test('models import copies a file in under the role its metadata names, or the one given', async () => {
    const models = join(dir.path, 'import-models')
    const seg = await importDiarizationModel({ file: join(source, 'model.onnx'), modelsDir: models })
    expect(seg.role).toBe('segmentation')
    expect(readFileSync(diarizationModelPaths(models).segmentation)).toEqual(readFileSync(join(source, 'model.onnx')))
    const emb = await importDiarizationModel({ file: join(source, 'voice.onnx'), modelsDir: models, as: 'embedding' })
    expect(emb.path).toBe(diarizationModelPaths(models).embedding)
    expect(emb.sha256).toBe(new Bun.CryptoHasher('sha256').update(readFileSync(join(source, 'voice.onnx'))).digest('hex'))
    expect(sherpaModelsPresent(models).ready).toBe(true)
    await createSherpaDiarizationEngine({ modelsDir: models }).ready()
  })

  test('models import refuses a file that is not ONNX, or not of the role given, and leaves nothing behind', async () => {
    const models = join(dir.path, 'refused-models')
    await expect(importDiarizationModel({ file: join(source, 'notes.txt'), modelsDir: models })).rejects.toThrow(`${join(source, 'notes.txt')} is not an ONNX model`)
    await expect(importDiarizationModel({ file: join(source, 'voice.onnx'), modelsDir: models, as: 'segmentation' })).rejects.toThrow('is not a segmentation model sherpa-onnx can load: no "window_size"')
    await expect(importDiarizationModel({ file: join(source, 'missing.onnx'), modelsDir: models })).rejects.toBeInstanceOf(DiarizationPullError)
    expect(existsSync(join(models, 'diarization')) ? readdirSync(join(models, 'diarization')) : []).toEqual([])
  })

  test('the CLI: import copies (exit 0) and refuses a non-ONNX file with exit 2 and a clear message', async () => {
    const models = join(dir.path, 'cli-models')
    const env = { NOTESVC_MODELS_DIR: models }
    const ok = await run(['bun', 'run', 'src/cli.ts', 'models', 'import', join(source, 'model.onnx')], { env })
    expect(ok.code).toBe(0)
    expect(ok.stdout).toBe(`${diarizationModelPaths(models).segmentation}\n`)
    const refused = await run(['bun', 'run', 'src/cli.ts', 'models', 'import', join(source, 'notes.txt'), '--name', 'embedding'], { env })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe(`notesvc: ${join(source, 'notes.txt')} is not an ONNX model (it has a field of wire type 6, which ONNX does not use)\n`)
    const wrongRole = await run(['bun', 'run', 'src/cli.ts', 'models', 'import', join(source, 'model.onnx'), '--name', 'voice'], { env })
    expect(wrongRole.code).toBe(2)
    expect(wrongRole.stderr).toContain('--name must be segmentation or embedding')
    const list = await run(['bun', 'run', 'src/cli.ts', 'models', 'list'], { env })
    expect(list.stdout).toContain(`diarization/segmentation\t`)
  })

  test('models pull diarization offline: exit 1 (not 2), and the message says to copy the files and import them', async () => {
    const models = join(dir.path, 'offline-models')
    const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'pull', 'diarization'], {
      env: { NOTESVC_MODELS_DIR: models, HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' },
    })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('could not reach https://github.com/k2-fsa/sherpa-onnx/releases/download/')
    expect(r.stderr).toContain('bun run cli models import model.onnx --name segmentation')
    expect(r.stderr).toContain('--name embedding')
    expect(sherpaModelsPresent(models).ready).toBe(false)
  })

  test('models pull diarization from a release server: the archive is unpacked, both files checked and installed', async () => {
    const release = join(dir.path, 'release')
    mkdirSync(join(release, 'sherpa-onnx-pyannote-segmentation-3-0'), { recursive: true })
    writeFileSync(join(release, 'sherpa-onnx-pyannote-segmentation-3-0', 'model.onnx'), tinySegmentationModel())
    const tar = await run(['tar', '-cjf', join(release, 'seg.tar.bz2'), '-C', release, 'sherpa-onnx-pyannote-segmentation-3-0'])
    expect(tar.code).toBe(0)
    const served: string[] = []
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const path = new URL(req.url).pathname
        served.push(path)
        if (path.endsWith('.tar.bz2')) return new Response(Bun.file(join(release, 'seg.tar.bz2')))
        if (path.endsWith('.onnx')) return new Response(Buffer.from(tinyEmbeddingModel()))
        return new Response('no', { status: 404 })
      },
    })
    try {
      const models = join(dir.path, 'pulled-models')
      const got = await pullDiarizationModels({ modelsDir: models, baseUrl: `http://127.0.0.1:${server.port}/dl` })
      expect(got.map(g => [g.role, g.kept])).toEqual([['segmentation', false], ['embedding', false]])
      expect(served).toEqual([
        '/dl/speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2',
        '/dl/speaker-recongition-models/3dspeaker_speech_eres2net_base_sv_zh-cn_3dspeaker_16k.onnx',
      ])
      await createSherpaDiarizationEngine({ modelsDir: models }).ready()
      // a second pull keeps what is there
      expect((await pullDiarizationModels({ modelsDir: models, baseUrl: `http://127.0.0.1:${server.port}/dl` })).map(g => g.kept)).toEqual([true, true])
      expect(served).toHaveLength(2)
    } finally {
      server.stop(true)
    }
  })
})

describe('inside a compiled binary', () => {
  const build = tempDir('notesvc-sherpa-bin-')
  const work = tempDir('notesvc-sherpa-run-')
  afterAll(() => { build.remove(); work.remove() })

  test('the addon and its libraries travel inside and diarize from an empty folder', async () => {
    const entry = join(build.path, 'entry.ts')
    const binary = join(build.path, 'diarize')
    writeFileSync(entry, `
      import { diarizeSamples } from ${JSON.stringify(join(ROOT, 'src/engines/diarization/engine.ts'))}
      import { createSherpaDiarizationEngine } from ${JSON.stringify(join(ROOT, 'src/engines/diarization/sherpa.ts'))}
      import { MODEL_TRIAL_COMMAND, runModelTrial } from ${JSON.stringify(join(ROOT, 'src/engines/diarization/model-trial-child.ts'))}
      // the binary is also the child process that tries model files before they are loaded, as cli.ts is
      if (process.argv[2] === MODEL_TRIAL_COMMAND) void runModelTrial(process.argv.slice(3)).then(code => process.exit(code))
      // in a function: a binary built with --bytecode (scripts/build.ts) cannot have top-level await
      else void (async () => {
        const engine = createSherpaDiarizationEngine({ modelsDir: process.argv[2]!, threads: 1 })
        try {
          const samples = new Float32Array(await Bun.file(process.argv[3]!).arrayBuffer())
          const d = await diarizeSamples(engine, samples, { speakers: { exact: 2 } })
          console.log(JSON.stringify({ speakers: d.speakers, turns: d.turns.length }))
        } catch (err) {
          console.log(JSON.stringify({ error: (err as Error).message }))
        }
      })()
    `)
    // the flags of scripts/build.ts
    const built = await run(['bun', 'build', '--compile', '--bytecode', '--minify-whitespace', '--minify-syntax', '--sourcemap=none', entry, '--outfile', binary])
    expect(built.code).toBe(0)
    const bytes = readFileSync(binary)
    expect(bytes.includes(join(ROOT, 'node_modules/sherpa-onnx-linux-x64'))).toBe(false)
    const tmp = join(work.path, 'tmp')
    mkdirSync(tmp)
    const samples = join(work.path, 'speech.f32')
    writeFileSync(samples, speech.subarray(0, 20 * SAMPLE_RATE))
    const ok = await run([binary, modelsDir, samples], { cwd: work.path, env: { TMPDIR: tmp } })
    expect(JSON.parse(ok.stdout)).toEqual({ speakers: 2, turns: expect.any(Number) })
    // the libraries were written out to the binary's temporary folder
    const extracted = join(tmp, `notesvc-sherpa-onnx-1.13.8-${process.getuid!()}`)
    expect(readdirSync(extracted).sort()).toEqual(['libonnxruntime.so', 'libsherpa-onnx-c-api.so'])
    expect(statSync(extracted).mode & 0o777).toBe(0o700)
    // a model with a broken graph is tried by the binary as a child of itself: refused, nothing aborted
    const brokenDir = join(work.path, 'broken-models')
    mkdirSync(join(brokenDir, 'diarization'), { recursive: true })
    writeTinyDiarizationModels(diarizationModelPaths(brokenDir))
    writeFileSync(diarizationModelPaths(brokenDir).embedding, tinyEmbeddingModel({ unknownOperator: true }))
    const refused = await run([binary, brokenDir, samples], { cwd: work.path, env: { TMPDIR: tmp } })
    expect(refused.code).toBe(0)
    expect(JSON.parse(refused.stdout).error).toContain(`sherpa-onnx ended the process that loaded it (SIGABRT): ${diarizationModelPaths(brokenDir).embedding} is not an embedding model it can run`)
  }, 120_000)
})
