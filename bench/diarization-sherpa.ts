/**
 * The sherpa-onnx diarization engine's speed on 60 s of real speech (test/fixtures/speech.ts), with
 * the tiny generated models of test/fixtures/onnx-model.ts: the real-time factor (seconds of work
 * per second of audio) of a whole session, median of RUNS runs after a warm-up, with and without an
 * exact speaker count, and the time to load the models.
 *
 * SPEED ONLY, and only of our code, sherpa-onnx's pipeline and onnxruntime around tiny models: the
 * generated models have random weights (their speakers mean nothing) and are far cheaper than the real
 * pyannote segmentation-3.0 and 3D-Speaker ERes2Net models, which dominate the real cost. To measure
 * those, point MODELS_DIR at a folder holding diarization/segmentation.onnx and embedding.onnx
 * (`notesvc models pull diarization`).
 *
 * Run: bun run bench/diarization-sherpa.ts   (RUNS=5, AUDIO_SECONDS=60, THREADS=1, MODELS_DIR=generated)
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { diarizeSamples, type SpeakerHint } from '../src/engines/diarization/engine'
import { diarizationModelPaths } from '../src/engines/diarization/models'
import { createSherpaDiarizationEngine } from '../src/engines/diarization/sherpa'
import { writeTinyDiarizationModels } from '../test/fixtures/onnx-model'
import { speechSamples } from '../test/fixtures/speech-samples'

const RUNS = Math.max(1, Number(process.env.RUNS ?? 5))
const SECONDS = Math.max(1, Number(process.env.AUDIO_SECONDS ?? 60))
const THREADS = Math.max(1, Number(process.env.THREADS ?? 1))

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const generated = !process.env.MODELS_DIR
const modelsDir = process.env.MODELS_DIR ?? mkdtempSync(join(tmpdir(), 'notesvc-bench-sherpa-'))
if (generated) {
  mkdirSync(join(modelsDir, 'diarization'), { recursive: true })
  writeTinyDiarizationModels(diarizationModelPaths(modelsDir))
}

try {
  const speech = speechSamples(SECONDS)
  const engine = createSherpaDiarizationEngine({ modelsDir, threads: THREADS })
  console.log(`sherpa-onnx diarization, ${SECONDS} s of real speech, ${THREADS} thread(s) per model, ${cpus()[0]?.model ?? 'unknown CPU'}`)
  console.log(generated
    ? 'models: GENERATED tiny models with random weights: this measures speed only, not quality, and not the cost of the real models'
    : `models: ${modelsDir}`)
  let t = performance.now()
  await engine.ready()
  const first = await diarizeSamples(engine, speech.subarray(0, 16_000)) // loads the models
  console.log(`load (addon, both models) and a 1-s run: ${(performance.now() - t).toFixed(0)} ms (${first.speakers} speaker(s))`)

  const cases: [string, SpeakerHint | undefined][] = [['no count (threshold)', undefined], ['exact: 2', { exact: 2 }]]
  for (const [label, speakers] of cases) {
    await diarizeSamples(engine, speech, { speakers }) // warm-up
    const times: number[] = []
    let found = 0
    for (let i = 0; i < RUNS; i++) {
      t = performance.now()
      const d = await diarizeSamples(engine, speech, { speakers })
      times.push((performance.now() - t) / 1000)
      found = d.speakers
    }
    const rtf = median(times) / SECONDS
    console.log(`${label.padEnd(22)} median ${median(times).toFixed(3)} s over ${RUNS} runs, real-time factor ${rtf.toFixed(4)} (${(1 / rtf).toFixed(0)}× real time), ${found} speaker(s)`)
  }
} finally {
  if (generated) rmSync(modelsDir, { recursive: true, force: true })
}
