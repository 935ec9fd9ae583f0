/**
 * The `sherpa-onnx` diarization engine: neural speaker diarization in-process with sherpa-onnx 1.13.8's
 * OfflineSpeakerDiarization (a pyannote segmentation model finds who speaks in each frame of 10-s
 * windows, a speaker-embedding model gives each window's speakers a voice print, and agglomerative
 * clustering joins the prints into speakers), through the prebuilt Node-API addon (sherpa-native.ts).
 *
 * Facts about sherpa-onnx that shape this file (checked against its sources and the addon):
 * - It needs the whole recording at once (`Process(samples)`); a session keeps every fed sample until
 *   `finish`: 4 bytes × 16,000 per second = 64 KB per second, 230 MB per hour, and twice that for a
 *   moment at `finish`, where the pieces are joined and the addon copies them for its worker thread.
 * - The addon's async process runs on a worker thread, so the event loop stays free; it cannot be
 *   stopped: an abort rejects at once and the native work runs on to its end in the background.
 * - Clustering is by an exact number of clusters or a cosine-distance threshold, set on the one
 *   diarizer object (`setConfig`) and read while it processes; so runs are one at a time per engine.
 * - A recording of one window (10 s or less) is not clustered at all: it gets up to 3 speakers
 *   whatever was asked. An exact count or a maximum is then reached by joining the most alike
 *   speakers by their voice prints (turns.ts); a minimum is asked of the clustering again. A count
 *   above the number of window voice prints gives one speaker (see `finish`).
 * - Its segments may overlap and are numbered by cluster; the interface wants turns without overlaps,
 *   numbered by first speech (turns.ts).
 * - It gives no voice prints in its result. Each speaker's is computed here with the same embedding
 *   model (a SpeakerEmbeddingExtractor, a second copy of that model in memory, run on the JavaScript
 *   thread): one print per piece of at most 10 s of the speaker's turns of at least 1 s (all turns
 *   when none is that long), longest turns first, up to 60 s of speech, averaged weighted by length,
 *   unit length.
 * - A bad model file ends the process (see onnx.ts): both files are checked before loading, their
 *   metadata here and their graphs by loading and running them in a child process first (model-trial.ts).
 * - Its logs go to stderr ("No speakers found in the audio samples" for silence); there is no
 *   callback to route them.
 */
import { availableParallelism } from 'node:os'
import { silentLogger, type Logger } from '../../log'
import { DiarizationUnavailableError, SAMPLE_RATE, type Diarization, type DiarizationEngine, type DiarizeOptions, type SpeakerHint } from './engine'
import { checkDiarizationModel, DiarizationModelError, diarizationModelPaths, missingModelsMessage, pullDiarizationCommand, sherpaModelsPresent } from './models'
import { mergeSpeakers, numberedByFirstSpeech, unitLength, withoutOverlaps, type RawSegment } from './turns'
import { tryDiarizationModels } from './model-trial'

export { sherpaModelsPresent }

export interface SherpaDiarizationOptions {
  /** the models folder; the files are `<modelsDir>/diarization/segmentation.onnx` and `embedding.onnx` */
  modelsDir: string
  /** CPU threads for each model; default half the cores (diarization runs beside transcription) */
  threads?: number
  /** cosine distance under which two voice prints are one speaker, when no count is given; default 0.5 */
  threshold?: number
  /** turns shorter than this are dropped (seconds); default 0.3 */
  minDurationOn?: number
  /** pauses of one speaker shorter than this are bridged (seconds); default 0.5 */
  minDurationOff?: number
  log?: Logger
}

type Handle = unknown

/** The addon's functions this engine uses (scripts/node-addon-api/src/*.cc in sherpa-onnx). */
interface SherpaAddon {
  createOfflineSpeakerDiarization(config: object): Handle
  getOfflineSpeakerDiarizationSampleRate(sd: Handle): number
  offlineSpeakerDiarizationProcessAsync(sd: Handle, samples: Float32Array, progress: (done: number, total: number) => void): Promise<RawSegment[]>
  offlineSpeakerDiarizationSetConfig(sd: Handle, config: { clustering: { numClusters: number; threshold: number } }): void
  createSpeakerEmbeddingExtractor(config: { model: string; numThreads: number }): Handle
  speakerEmbeddingExtractorCreateStream(extractor: Handle): Handle
  speakerEmbeddingExtractorIsReady(extractor: Handle, stream: Handle): boolean
  speakerEmbeddingExtractorComputeEmbedding(extractor: Handle, stream: Handle, enableExternalBuffer: boolean): Float32Array
  acceptWaveformOnline(stream: Handle, wave: { samples: Float32Array; sampleRate: number }): void
  inputFinished(stream: Handle): void
}

let addon: SherpaAddon | undefined

async function loadSherpaAddon(): Promise<SherpaAddon> {
  if (addon) return addon
  try {
    const { requireSherpaAddon } = await import('./sherpa-native')
    addon = (await requireSherpaAddon()) as SherpaAddon
    return addon
  } catch (err) {
    throw new DiarizationUnavailableError(
      `sherpa-onnx could not be loaded on ${process.platform}-${process.arch} (${(err as Error).message}); ` +
        'its prebuilt addon (npm package sherpa-onnx-linux-x64) needs linux-x64; install the dependencies with `bun install`',
    )
  }
}

/**
 * Checks both files and tries them together in a child process (once per version of the files):
 * sherpa-onnx would end this process on a file it cannot load or run.
 */
async function triedModels(modelsDir: string): Promise<Record<'segmentation' | 'embedding', string>> {
  const paths = checkModels(modelsDir)
  try {
    await tryDiarizationModels(paths)
  } catch (err) {
    if (!(err instanceof DiarizationModelError)) throw err
    throw new DiarizationUnavailableError(`${err.message}; replace it with \`${pullDiarizationCommand()}\` (or \`models import\` of a sound copy)`)
  }
  return paths
}

/** Checks both files: present, and what sherpa-onnx needs (it would end the process otherwise). */
function checkModels(modelsDir: string): Record<'segmentation' | 'embedding', string> {
  const state = sherpaModelsPresent(modelsDir)
  if (!state.ready) throw new DiarizationUnavailableError(missingModelsMessage(state.missing))
  const paths = diarizationModelPaths(modelsDir)
  for (const role of ['segmentation', 'embedding'] as const) {
    try {
      checkDiarizationModel(paths[role], role)
    } catch (err) {
      if (!(err instanceof DiarizationModelError)) throw err
      throw new DiarizationUnavailableError(`${err.message}; replace it with \`${pullDiarizationCommand()}\``)
    }
  }
  return paths
}

interface Loaded {
  native: SherpaAddon
  diarizer: Handle
  extractor: Handle
}

/** Speech used for one speaker's voice print, and the longest piece embedded at once (seconds). */
const PRINT_SECONDS = 60
const PRINT_PIECE_SECONDS = 10

/**
 * A speaker's voice print from its turns, or null when they are too short for the model. The
 * extractor runs on the JavaScript thread, so the speech goes in pieces of at most 10 s with a turn of
 * the event loop between them.
 */
async function voicePrint(native: SherpaAddon, extractor: Handle, samples: Float32Array, turns: RawSegment[], signal?: AbortSignal): Promise<Float32Array | null> {
  const long = turns.filter(t => t.end - t.start >= 1)
  const chosen = (long.length > 0 ? long : turns).toSorted((a, b) => b.end - b.start - (a.end - a.start))
  const pieces: RawSegment[] = []
  let planned = 0
  for (const t of chosen) {
    for (let start = t.start; start < t.end && planned < PRINT_SECONDS; start += PRINT_PIECE_SECONDS) {
      const end = Math.min(t.end, start + PRINT_PIECE_SECONDS, start + PRINT_SECONDS - planned)
      pieces.push({ start, end, speaker: t.speaker })
      planned += end - start
    }
  }
  let sum: Float32Array | null = null
  for (const p of pieces) {
    signal?.throwIfAborted()
    const stream = native.speakerEmbeddingExtractorCreateStream(extractor)
    native.acceptWaveformOnline(stream, { samples: samples.subarray(Math.floor(p.start * SAMPLE_RATE), Math.ceil(p.end * SAMPLE_RATE)), sampleRate: SAMPLE_RATE })
    native.inputFinished(stream)
    if (native.speakerEmbeddingExtractorIsReady(extractor, stream)) {
      const print = unitLength(native.speakerEmbeddingExtractorComputeEmbedding(extractor, stream, false))
      if (!print.some(Number.isNaN)) {
        sum ??= new Float32Array(print.length)
        for (let i = 0; i < print.length; i++) sum[i]! += print[i]! * (p.end - p.start)
      }
    }
    await new Promise(resolve => setImmediate(resolve))
  }
  return sum ? unitLength(sum) : null
}

function clusteringFor(hint: SpeakerHint | undefined, threshold: number): { numClusters: number; threshold: number } {
  return { numClusters: hint?.exact ?? -1, threshold }
}

/**
 * Nothing is loaded until needed: `ready()` checks both model files, tries them in a child process
 * and loads the addon (not the models); the first `finish` loads the models. `sherpaModelsPresent(modelsDir)` says whether the
 * files are there without loading anything (for `doctor` and a description of the engines).
 */
export function createSherpaDiarizationEngine(options: SherpaDiarizationOptions): DiarizationEngine {
  const threads = Math.max(1, options.threads ?? Math.floor(availableParallelism() / 2))
  const threshold = options.threshold ?? 0.5
  const log = options.log ?? silentLogger
  let loading: Promise<Loaded> | undefined
  /** the end of the last native run: runs go one at a time (the clustering setting is shared) */
  let queue: Promise<unknown> = Promise.resolve()

  function load(): Promise<Loaded> {
    loading ??= (async () => {
      const paths = await triedModels(options.modelsDir)
      const native = await loadSherpaAddon()
      const started = performance.now()
      const diarizer = native.createOfflineSpeakerDiarization({
        segmentation: { pyannote: { model: paths.segmentation }, numThreads: threads },
        embedding: { model: paths.embedding, numThreads: threads },
        clustering: { numClusters: -1, threshold },
        minDurationOn: options.minDurationOn ?? 0.3,
        minDurationOff: options.minDurationOff ?? 0.5,
      })
      const rate = native.getOfflineSpeakerDiarizationSampleRate(diarizer)
      if (rate !== SAMPLE_RATE) throw new DiarizationUnavailableError(`${paths.segmentation} expects ${rate} Hz audio, notesvc decodes ${SAMPLE_RATE} Hz; replace it with \`${pullDiarizationCommand()}\``)
      const extractor = native.createSpeakerEmbeddingExtractor({ model: paths.embedding, numThreads: threads })
      log.info('sherpa-onnx: diarization models loaded', { ms: Math.round(performance.now() - started), threads })
      return { native, diarizer, extractor }
    })().catch((err: unknown) => {
      loading = undefined // the files may be there on the next call
      throw err
    })
    return loading
  }

  /** One native run with this clustering, after the runs before it; rejects at once on abort. */
  function diarize(m: Loaded, samples: Float32Array, clustering: { numClusters: number; threshold: number }, signal?: AbortSignal): Promise<RawSegment[]> {
    const run = queue.then(() => {
      m.native.offlineSpeakerDiarizationSetConfig(m.diarizer, { clustering })
      return m.native.offlineSpeakerDiarizationProcessAsync(m.diarizer, samples, () => {})
    })
    queue = run.catch(() => {})
    if (!signal) return run
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason)
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
    })
  }

  async function finish(samples: Float32Array, opts: DiarizeOptions): Promise<Diarization> {
    opts.signal?.throwIfAborted()
    const m = await load()
    const duration = samples.length / SAMPLE_RATE
    const hint = opts.speakers
    if (samples.length === 0) return { turns: [], speakers: 0, engine: 'sherpa-onnx' }
    const started = performance.now()
    const count = (segs: RawSegment[]) => new Set(segs.map(s => s.speaker)).size
    let segments = withoutOverlaps(await diarize(m, samples, clusteringFor(hint, threshold), opts.signal), duration)
    // Fewer speakers than asked: a minimum is asked of the clustering; an exact count is retried with
    // the threshold, because sherpa-onnx puts everything in one cluster when asked for more clusters
    // than it has window voice prints (fastcluster's cutree_k), as in a short recording. The run that
    // finds more speakers is kept.
    const wanted = hint?.exact ?? hint?.min
    if (wanted !== undefined && count(segments) > 0 && count(segments) < wanted) {
      const clustering = hint?.exact !== undefined ? { numClusters: -1, threshold } : { numClusters: wanted, threshold }
      const other = withoutOverlaps(await diarize(m, samples, clustering, opts.signal), duration)
      if (count(other) > count(segments)) segments = other
    }
    const found = count(segments)
    let prints = new Map<number, Float32Array>()
    for (const speaker of new Set(segments.map(s => s.speaker))) {
      const print = await voicePrint(m.native, m.extractor, samples, segments.filter(s => s.speaker === speaker), opts.signal)
      if (print) prints.set(speaker, print)
    }
    const most = hint?.exact ?? hint?.max
    if (most !== undefined && found > most) ({ segments, prints } = mergeSpeakers(segments, prints, most))
    const { turns, original } = numberedByFirstSpeech(segments)
    const embeddings = original.map(s => prints.get(s))
    log.debug('sherpa-onnx: diarized', { seconds: duration, speakers: original.length, ms: Math.round(performance.now() - started) })
    return {
      turns,
      speakers: original.length,
      ...(embeddings.every(e => e !== undefined) && embeddings.length > 0 ? { embeddings: embeddings as Float32Array[] } : {}),
      engine: 'sherpa-onnx',
    }
  }

  return {
    name: 'sherpa-onnx',

    async ready() {
      await triedModels(options.modelsDir)
      await loadSherpaAddon()
    },

    start() {
      const pieces: Float32Array[] = []
      let length = 0
      let finished = false
      return {
        feed(samples) {
          if (finished) throw new Error('sherpa-onnx: feed after finish')
          pieces.push(samples.slice()) // the caller may reuse its buffer
          length += samples.length
        },
        finish(opts = {}) {
          finished = true
          const all = new Float32Array(length)
          let at = 0
          for (const p of pieces) {
            all.set(p, at)
            at += p.length
          }
          pieces.length = 0
          return finish(all, opts)
        },
      }
    },
  }
}
