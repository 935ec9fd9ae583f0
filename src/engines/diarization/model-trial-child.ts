/**
 * The child process of model-trial.ts: loads diarization model files through sherpa-onnx and runs
 * them once on a few seconds of noise, as the engine would. sherpa-onnx ends the process on a graph
 * onnxruntime cannot build or run (an uncaught Ort::Exception: abort()), which is why this runs in a
 * process of its own: the parent learns from how it ended, and its own process goes on.
 *
 * Arguments: `embedding=PATH` and/or `segmentation=PATH`. Before loading each file it prints
 * `loading <role>` on stdout (so a death names the file it died on), and `ok` once both ran. A
 * segmentation model given alone is loaded beside a stand-in embedding model (stand-in-embedding.ts),
 * since sherpa-onnx loads one only with the other.
 *
 * Run as `bun model-trial-child.ts …` from source, and as `notesvc <MODEL_TRIAL_COMMAND> …` in the
 * compiled binary (cli.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { standInEmbeddingModel } from './stand-in-embedding'

export const MODEL_TRIAL_COMMAND = '__diarization-model-trial'

const RATE = 16_000

/**
 * The addon's handles, kept reachable until the process ends: an object the collector frees while the
 * addon's worker thread still runs on it is a crash (seen: SIGSEGV in a third of the runs).
 */
const kept: unknown[] = []

interface TrialAddon {
  createSpeakerEmbeddingExtractor(config: { model: string; numThreads: number }): unknown
  speakerEmbeddingExtractorCreateStream(extractor: unknown): unknown
  acceptWaveformOnline(stream: unknown, wave: { samples: Float32Array; sampleRate: number }): void
  inputFinished(stream: unknown): void
  speakerEmbeddingExtractorIsReady(extractor: unknown, stream: unknown): boolean
  speakerEmbeddingExtractorComputeEmbedding(extractor: unknown, stream: unknown, enableExternalBuffer: boolean): Float32Array
  createOfflineSpeakerDiarization(config: object): unknown
  offlineSpeakerDiarizationProcessAsync(sd: unknown, samples: Float32Array, progress: () => void): Promise<unknown>
}

/** `seconds` of quiet noise, the same every time. */
function noise(seconds: number): Float32Array {
  let seed = 1
  return Float32Array.from({ length: seconds * RATE }, () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    return (seed / 2_147_483_648 - 0.5) * 0.2
  })
}

/** Runs the trial; the exit code is 0 when every file given loaded and ran. */
export async function runModelTrial(args: string[]): Promise<number> {
  const files: Record<string, string> = {}
  for (const a of args) {
    const [role, path] = a.split(/=(.*)/s, 2) as [string, string | undefined]
    if ((role === 'segmentation' || role === 'embedding') && path) files[role] = path
  }
  if (!files.segmentation && !files.embedding) {
    process.stderr.write('give embedding=PATH and/or segmentation=PATH\n')
    return 2
  }
  const { requireSherpaAddon } = await import('./sherpa-native')
  const native = (await requireSherpaAddon()) as TrialAddon
  if (files.embedding) {
    process.stdout.write('loading embedding\n')
    const extractor = native.createSpeakerEmbeddingExtractor({ model: files.embedding, numThreads: 1 })
    const stream = native.speakerEmbeddingExtractorCreateStream(extractor)
    kept.push(extractor, stream)
    native.acceptWaveformOnline(stream, { samples: noise(2), sampleRate: RATE })
    native.inputFinished(stream)
    if (native.speakerEmbeddingExtractorIsReady(extractor, stream)) native.speakerEmbeddingExtractorComputeEmbedding(extractor, stream, false)
  }
  if (files.segmentation) {
    const standIn = files.embedding ? null : mkdtempSync(join(tmpdir(), 'notesvc-model-trial-'))
    try {
      const embedding = files.embedding ?? join(standIn!, 'stand-in-embedding.onnx')
      if (standIn) writeFileSync(embedding, standInEmbeddingModel())
      process.stdout.write('loading segmentation\n')
      const diarizer = native.createOfflineSpeakerDiarization({
        segmentation: { pyannote: { model: files.segmentation }, numThreads: 1 },
        embedding: { model: embedding, numThreads: 1 },
        clustering: { numClusters: -1, threshold: 0.5 },
      })
      const audio = noise(12)
      kept.push(diarizer, audio)
      // two windows of 10 s: the model runs on each, as on a recording
      await native.offlineSpeakerDiarizationProcessAsync(diarizer, audio, () => {})
    } finally {
      if (standIn) rmSync(standIn, { recursive: true, force: true })
    }
  }
  process.stdout.write('ok\n')
  return 0
}

if (import.meta.main) {
  runModelTrial(process.argv.slice(2)).then(code => process.exit(code), err => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
}
