import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { diarizationModelPaths, type DiarizationModelRole } from '../../../src/engines/diarization/models'
import { DiarizationPullError, importDiarizationModel, pullDiarizationModels } from '../../../src/engines/diarization/pull'
import { tinyEmbeddingModel, tinySegmentationModel } from '../../fixtures/onnx-model'
import { speechSamples } from '../../fixtures/speech-samples'
import { ROOT, run, tempDir } from '../../helpers/process'

/**
 * A model file whose metadata is sound and whose graph is broken (issue 29, item 10c): an operator no
 * ONNX version has. sherpa-onnx aborts the process that loads it (an uncaught Ort::Exception), and the
 * metadata check lets it through; so files are tried in a child process first. A process that uses
 * the engines as serve does (the selector's engine, readied, diarizing) lives on with the builtin
 * engine and says which file; `models import` and `models pull` refuse the file and keep nothing.
 */
const dir = tempDir('notesvc-model-trial-')
const samples = join(dir.path, 'speech.f32')
const broken: Record<DiarizationModelRole, Uint8Array> = {
  segmentation: tinySegmentationModel({ unknownOperator: true }),
  embedding: tinyEmbeddingModel({ unknownOperator: true }),
}
const sound: Record<DiarizationModelRole, Uint8Array> = { segmentation: tinySegmentationModel(), embedding: tinyEmbeddingModel() }

/** what serve does with the diarization engine, in a process of its own; prints one JSON line */
const SERVE_LIKE = join(dir.path, 'serve-like.ts')
beforeAll(() => {
  writeFileSync(samples, speechSamples(20))
  writeFileSync(SERVE_LIKE, `
    import { createDiarizationSelector } from ${JSON.stringify(join(ROOT, 'src/engines/diarization/index.ts'))}
    import { diarizeSamples } from ${JSON.stringify(join(ROOT, 'src/engines/diarization/engine.ts'))}
    const [modelsDir, diarization, audio] = process.argv.slice(2)
    const selector = createDiarizationSelector({ modelsDir, diarization })
    const engine = selector.current()
    let readyError = null
    try { await engine.ready() } catch (err) { readyError = err.message }
    const d = readyError ? null : await diarizeSamples(engine, new Float32Array(await Bun.file(audio).arrayBuffer()))
    console.log(JSON.stringify({ readyError, engine: engine.name, speakers: d?.speakers ?? null, detail: selector.describe().detail }))
  `)
})
afterAll(() => dir.remove())

/** a models folder holding the sound model of each role but `role`, which is broken */
function modelsWithBroken(role: DiarizationModelRole): { modelsDir: string; path: string } {
  const modelsDir = join(dir.path, `models-broken-${role}`)
  mkdirSync(join(modelsDir, 'diarization'), { recursive: true })
  const paths = diarizationModelPaths(modelsDir)
  for (const r of ['segmentation', 'embedding'] as const) writeFileSync(paths[r], r === role ? broken[r] : sound[r])
  return { modelsDir, path: paths[role] }
}

describe.each(['segmentation', 'embedding'] as const)('the %s model with a broken graph', role => {
  test('NOTESVC_DIARIZATION=auto: the process lives and diarizes with the builtin engine, and says which file', async () => {
    const { modelsDir, path } = modelsWithBroken(role)
    const r = await run(['bun', SERVE_LIKE, modelsDir, 'auto', samples])
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr.slice(-600) }).toEqual({ code: 0, stderr: '' })
    const said = JSON.parse(r.stdout.trim().split('\n').at(-1)!)
    expect(said).toMatchObject({ readyError: null, engine: 'builtin' })
    expect(said.speakers).toBeGreaterThan(0)
    expect(said.detail).toContain(`in place of sherpa-onnx, which cannot run its model files: sherpa-onnx ended the process that loaded it (SIGABRT): ${path} is not`)
    expect(said.detail).toContain('NotAnOnnxOperator')
  })

  test('NOTESVC_DIARIZATION=sherpa-onnx: the process lives; ready() says which file and what to do', async () => {
    const { modelsDir, path } = modelsWithBroken(role)
    const r = await run(['bun', SERVE_LIKE, modelsDir, 'sherpa-onnx', samples])
    expect(r.code).toBe(0)
    const said = JSON.parse(r.stdout.trim().split('\n').at(-1)!)
    expect(said.readyError).toContain(`${path} is not ${role === 'embedding' ? 'an' : 'a'} ${role} model it can run`)
    expect(said.readyError).toContain('models pull diarization')
  })

  test('models import refuses it, naming the file and what onnxruntime said, and keeps nothing', async () => {
    const file = join(dir.path, `broken-${role}.onnx`)
    writeFileSync(file, broken[role])
    const modelsDir = join(dir.path, `import-${role}`)
    const err = await importDiarizationModel({ file, modelsDir }).catch(e => e)
    expect(err).toBeInstanceOf(DiarizationPullError)
    expect(err.message).toContain(`sherpa-onnx ended the process that loaded it (SIGABRT): ${file} is not`)
    expect(err.message).toContain('No Op registered for NotAnOnnxOperator')
    expect(err.message).toContain('it was not installed: download a sound copy with `bun run cli models pull diarization`, or import another file')
    expect(readdirSync(join(modelsDir, 'diarization'))).toEqual([])
  })
})

test('doctor tries the files too, and says which one the server cannot load and what to do', async () => {
  const { modelsDir, path } = modelsWithBroken('embedding')
  const r = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { NOTESVC_MODELS_DIR: modelsDir, NOTESVC_DATA_DIR: join(dir.path, 'doctor-data') } })
  const line = r.stdout.split('\n').find(l => /^\S+\s+diarization\s/.test(l))
  expect(line).toStartWith('warn     diarization    builtin: spectral voice prints and clustering, in place of sherpa-onnx, which cannot run its model files')
  expect(line).toContain(`${path} is not an embedding model it can run`)
  expect(line).toContain('→ fix: replace the model file named above: bun run cli models pull diarization')
})

describe('models import and pull', () => {
  test('a sound segmentation model imported alone (no embedding model yet) is tried and installed', async () => {
    const file = join(dir.path, 'sound-segmentation.onnx')
    writeFileSync(file, sound.segmentation)
    const modelsDir = join(dir.path, 'import-alone')
    expect((await importDiarizationModel({ file, modelsDir })).role).toBe('segmentation')
    expect(existsSync(diarizationModelPaths(modelsDir).segmentation)).toBe(true)
  })

  test('the CLI: exit 2 and the message', async () => {
    const file = join(dir.path, 'broken-cli.onnx')
    writeFileSync(file, broken.embedding)
    const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'import', file], { env: { NOTESVC_MODELS_DIR: join(dir.path, 'cli-models') } })
    expect(r.code).toBe(2)
    expect(r.stderr).toStartWith(`notesvc: sherpa-onnx ended the process that loaded it (SIGABRT): ${file} is not an embedding model it can run (`)
  })

  test('models pull: a download with a broken graph is refused, the sound one installed', async () => {
    const release = join(dir.path, 'release')
    mkdirSync(join(release, 'sherpa-onnx-pyannote-segmentation-3-0'), { recursive: true })
    writeFileSync(join(release, 'sherpa-onnx-pyannote-segmentation-3-0', 'model.onnx'), sound.segmentation)
    expect((await run(['tar', '-cjf', join(release, 'seg.tar.bz2'), '-C', release, 'sherpa-onnx-pyannote-segmentation-3-0'])).code).toBe(0)
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const path = new URL(req.url).pathname
        if (path.endsWith('.tar.bz2')) return new Response(Bun.file(join(release, 'seg.tar.bz2')))
        if (path.endsWith('.onnx')) return new Response(Buffer.from(broken.embedding))
        return new Response('no', { status: 404 })
      },
    })
    try {
      const modelsDir = join(dir.path, 'pulled')
      const err = await pullDiarizationModels({ modelsDir, baseUrl: `http://127.0.0.1:${server.port}/dl` }).catch(e => e)
      expect(err).toBeInstanceOf(DiarizationPullError)
      expect(err.message).toContain(`http://127.0.0.1:${server.port}/dl/speaker-recongition-models/3dspeaker_speech_eres2net_base_sv_zh-cn_3dspeaker_16k.onnx is not an embedding model it can run`)
      expect(readdirSync(join(modelsDir, 'diarization'))).toEqual(['segmentation.onnx'])
    } finally {
      server.stop(true)
    }
  })
})
