import { decodeMedia, mediaDuration } from '../media/decode'
import { MediaUnreadableError } from '../media/errors'
import type { MediaTools } from '../media/ffmpeg'
import { AsrUnavailableError, SAMPLE_RATE, type AsrEngine, type TranscriptSegment } from './engine'
import { cutLoops, hasLoop } from './repetition'
import { transcriptText } from '../../transcript/transcript'
import { createAsrScheduler, type AsrScheduler, type SlotOwner } from './scheduler'

/**
 * Seconds of audio handed to the engine at once. Chunks of one recording are transcribed in parallel
 * (as many at a time as the scheduler's slots allow), so a chunk must be short enough that a recording
 * of a few minutes makes several: 45 s gives a 3-minute memo 4 chunks, both cores of a 2-core machine
 * busy from the start. Measured on this 2-core machine with PocketSphinx on the testdata recordings
 * (see docs/decisions.md "Parallel transcription"): starting `pocketsphinx_continuous` and loading its
 * model costs about 0.65 s a process, about 8 % of a 45-s chunk's decoding; shorter chunks pay that more
 * often and cut more often. whisper.cpp decodes 30-s windows anyway, so 45 s costs it nothing extra.
 * Memory: a 45-s chunk is 2.9 MB of float samples.
 */
const CHUNK_SECONDS = 45

/** The shortest chunk a plan makes: shorter ones pay the engine's start (about 0.65 s) too often. */
const MIN_PLANNED_CHUNK_SECONDS = 10

/**
 * The chunk length for a recording of `durationSeconds` on `slots` slots: as many chunks as 45-s
 * chunks would make, rounded up to a whole number of rounds of the slots, all of one length, so the
 * last round is not one chunk alone while the other slots wait. A 120-s recording on 2 slots made
 * 45 + 45 + 30 s, the last chunk alone (upload → Done 0.78–0.95× the engine alone on the whole file);
 * planned, it is 4 chunks of 30 s, two rounds of two. Never under MIN_PLANNED_CHUNK_SECONDS (a 15-s
 * memo on 2 slots: one chunk, not two of 7.5 s), never over CHUNK_SECONDS.
 */
export function plannedChunkSeconds(durationSeconds: number, slots: number): number {
  if (!(durationSeconds > 0) || slots < 1) return CHUNK_SECONDS
  const chunks = Math.ceil(durationSeconds / CHUNK_SECONDS)
  const rounded = Math.ceil(chunks / slots) * slots
  // fewer chunks when whole rounds would make them too short
  const most = Math.max(1, Math.floor(durationSeconds / MIN_PLANNED_CHUNK_SECONDS))
  const n = Math.max(chunks, Math.min(rounded, most))
  return Math.min(CHUNK_SECONDS, durationSeconds / n)
}

/** Seconds either side of a chunk boundary searched for the quietest point to cut at. */
const CUT_SEARCH_SECONDS = 2
/** Frames whose loudness is compared when choosing a cut: 20 ms, smoothed over 100 ms. */
const FRAME = SAMPLE_RATE / 50
const SMOOTH_FRAMES = 5

/**
 * Groups a stream of sample blocks into chunks of exactly `size` samples (the last one shorter): a
 * fixed cut, for callers that need exact sizes. `transcribeMedia` cuts at quiet points instead.
 */
export async function* chunked(blocks: AsyncIterable<Float32Array>, size: number): AsyncGenerator<{ samples: Float32Array; offsetSamples: number }> {
  let buffer = new Float32Array(size)
  let filled = 0
  let offset = 0
  for await (const block of blocks) {
    let from = 0
    while (from < block.length) {
      const take = Math.min(size - filled, block.length - from)
      buffer.set(block.subarray(from, from + take), filled)
      filled += take
      from += take
      if (filled === size) {
        yield { samples: buffer, offsetSamples: offset }
        offset += size
        buffer = new Float32Array(size)
        filled = 0
      }
    }
  }
  if (filled > 0) yield { samples: buffer.subarray(0, filled), offsetSamples: offset }
}

/**
 * The quietest point of `samples` between `from` and `to` (sample indices): the middle of the 20-ms
 * frame whose loudness (RMS, averaged with its neighbours over 100 ms) is lowest. Speech has its
 * pauses between words; a cut there does not split a word.
 */
function quietestPoint(samples: Float32Array, from: number, to: number): number {
  const first = Math.max(0, Math.floor(from / FRAME))
  const last = Math.min(Math.floor(samples.length / FRAME), Math.ceil(to / FRAME))
  if (last - first < 1) return Math.min(Math.max(from, 0), samples.length)
  const energy = new Float64Array(last - first)
  for (let f = first; f < last; f++) {
    let sum = 0
    for (let i = f * FRAME; i < (f + 1) * FRAME; i++) sum += samples[i]! * samples[i]!
    energy[f - first] = Math.sqrt(sum / FRAME)
  }
  let best = 0
  let bestValue = Infinity
  const half = Math.floor(SMOOTH_FRAMES / 2)
  for (let i = 0; i < energy.length; i++) {
    let sum = 0
    let n = 0
    for (let j = Math.max(0, i - half); j <= Math.min(energy.length - 1, i + half); j++) {
      sum += energy[j]!
      n++
    }
    const v = sum / n
    if (v < bestValue) {
      bestValue = v
      best = i
    }
  }
  return (first + best) * FRAME + FRAME / 2
}

/**
 * Groups a stream of sample blocks into chunks of about `size` samples, each cut at the quietest
 * point within `search` samples of its nominal end (so a chunk is `size ± search` long; the last one
 * is what remains, marked `last`). Memory: one chunk and the search margin.
 */
export async function* quietChunks(blocks: AsyncIterable<Float32Array>, size: number, search: number): AsyncGenerator<{ samples: Float32Array; offsetSamples: number; last?: true }> {
  // grown as blocks arrive (a recording shorter than one chunk never allocates a whole chunk)
  let buffer = new Float32Array(Math.min(size + search + 16_384, 60 * SAMPLE_RATE))
  let filled = 0
  let offset = 0
  for await (const block of blocks) {
    if (filled + block.length > buffer.length) {
      const bigger = new Float32Array(Math.max(buffer.length * 2, filled + block.length))
      bigger.set(buffer.subarray(0, filled))
      buffer = bigger
    }
    buffer.set(block, filled)
    filled += block.length
    while (filled >= size + search) {
      const cut = Math.max(1, quietestPoint(buffer.subarray(0, filled), size - search, size + search))
      yield { samples: buffer.slice(0, cut), offsetSamples: offset }
      buffer.copyWithin(0, cut, filled)
      filled -= cut
      offset += cut
    }
  }
  if (filled > 0) yield { samples: buffer.slice(0, filled), offsetSamples: offset, last: true }
}

export interface Transcription {
  segments: TranscriptSegment[]
  transcript: string
  language: string | null
}

/** What happened to the chunks of one recording (for logs and tests). */
export interface ChunkReport {
  chunks: number
  /** chunks whose first transcription looped and was decoded again */
  loopsRetried: number
  /** chunks still looping after that, whose repetition was cut */
  loopsCut: number
  /** chunks whose transcription failed once and succeeded on the second try */
  retried: number
}

let processScheduler: AsrScheduler | undefined

/** The scheduler of callers that bring none (the CLI, the synchronous routes): one per process, a slot per core. */
function sharedAsrScheduler(): AsrScheduler {
  return (processScheduler ??= createAsrScheduler())
}

let anonymous = 0

/**
 * Decodes a media file to 16 kHz mono (streamed) and transcribes it in chunks cut at quiet points,
 * several at once (each holding one of the scheduler's slots while the engine works on it), with at
 * most a few decoded chunks in memory; segments are stitched in the recording's order, their times
 * offset by each chunk's start. A chunk whose text loops is decoded again with other settings, then
 * cut; a chunk that fails is tried once more before the whole fails. Used by the upload pipeline, the
 * synchronous routes and `notesvc transcribe` alike.
 */
export async function transcribeMedia(
  path: string,
  deps: {
    asr: AsrEngine
    tools: MediaTools
    chunkSeconds?: number
    /** the slots shared with other jobs; by default the process's own (a slot per core) */
    scheduler?: AsrScheduler
    /** whose chunks these are, for the scheduler's fairness; by default a job of its own */
    owner?: SlotOwner
  },
  opts: {
    language: string | null
    signal?: AbortSignal
    onFirstChunk?: () => void | Promise<void>
    /** the share of the recording transcribed so far, 0 to 1, called as chunks finish (not when the duration is unknown) */
    onProgress?: (fraction: number) => void
    /** the recording's measured duration, when the caller has it (an upload's): its header is not read again */
    durationSeconds?: number | null
    /** filled with what happened to the chunks */
    report?: ChunkReport
    /**
     * Each chunk's samples as they are decoded, in the recording's order, before they are transcribed:
     * diarization is fed the same audio beside transcription (no second decode).
     */
    onSamples?: (samples: Float32Array) => void
    /** whisper.cpp's initial prompt and translate task, passed to every chunk */
    decoding?: { prompt?: string; translate?: boolean }
  },
): Promise<Transcription> {
  const scheduler = deps.scheduler ?? sharedAsrScheduler()
  const report = opts.report ?? { chunks: 0, loopsRetried: 0, loopsCut: 0, retried: 0 }
  const duration = opts.durationSeconds ?? (opts.onProgress ? await mediaDuration(path, deps.tools).catch(() => null) : null)
  // What is left to start, for the scheduler's shortest-remaining-first: the whole recording's length
  // once decoded (or from its header), unknown before, less the chunks already given a slot.
  let decodedSeconds = 0
  let decoded = false
  let startedSeconds = 0
  const remainingSeconds = () => {
    const total = decoded ? decodedSeconds : duration && Number.isFinite(duration) ? Math.max(duration, decodedSeconds) : Infinity
    return Math.max(0, total - startedSeconds)
  }
  const owner: SlotOwner = { ...(deps.owner ?? { job: `local-${++anonymous}`, account: 'local' }), remainingSeconds }
  // with the duration known (the upload pipeline asks it for progress), chunks planned for the slots
  const chunkSeconds = deps.chunkSeconds ?? (duration ? plannedChunkSeconds(duration, scheduler.slots) : CHUNK_SECONDS)
  const chunkSamples = Math.round(chunkSeconds * SAMPLE_RATE)
  const search = Math.min(Math.round(CUT_SEARCH_SECONDS * SAMPLE_RATE), Math.floor(chunkSamples / 4))
  // Chunks decoded and not yet transcribed, at most: one per slot (up to 4) and one waiting.
  const maxInFlight = Math.min(scheduler.slots, 4) + 1
  const stop = new AbortController()
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal

  const results: { segments: TranscriptSegment[]; language: string | null }[] = []
  const pending = new Set<Promise<void>>()
  let failure: { error: unknown } | null = null
  let started = false
  let doneSeconds = 0

  async function transcribeOne(samples: Float32Array, retry: boolean) {
    const release = await scheduler.acquire(owner, signal)
    if (!retry) startedSeconds += samples.length / SAMPLE_RATE
    try {
      let r
      try {
        r = await deps.asr.transcribeChunk(samples, { language: opts.language, signal, fallback: retry, ...opts.decoding })
      } catch (err) {
        if (signal.aborted || err instanceof AsrUnavailableError) throw err
        report.retried++
        r = await deps.asr.transcribeChunk(samples, { language: opts.language, signal, fallback: retry, ...opts.decoding })
      }
      return r
    } finally {
      release()
    }
  }

  async function runChunk(index: number, samples: Float32Array, offsetSeconds: number) {
    let r = await transcribeOne(samples, false)
    if (hasLoop(r.segments)) {
      report.loopsRetried++
      r = await transcribeOne(samples, true)
      if (hasLoop(r.segments)) {
        report.loopsCut++
        r = { ...r, segments: cutLoops(r.segments) }
      }
    }
    results[index] = {
      segments: r.segments.map(s => ({
        start: round(s.start + offsetSeconds),
        end: round(s.end + offsetSeconds),
        text: s.text.trim(),
        seek: Math.round(offsetSeconds * 100),
        ...(s.avgLogprob !== undefined ? { avgLogprob: s.avgLogprob } : {}),
        ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
        ...(s.words ? { words: s.words.map(w => ({ word: w.word, start: round(w.start + offsetSeconds), end: round(w.end + offsetSeconds), ...(w.confidence !== undefined ? { confidence: w.confidence } : {}) })) } : {}),
      })),
      language: r.language,
    }
    doneSeconds += samples.length / SAMPLE_RATE
    if (duration && duration > 0) opts.onProgress?.(Math.min(1, doneSeconds / duration))
  }

  function track(p: Promise<void>) {
    const t: Promise<void> = p.then(
      () => { pending.delete(t) },
      error => {
        pending.delete(t)
        failure ??= { error }
        stop.abort(error)
      },
    )
    pending.add(t)
  }

  try {
    let index = 0
    for await (const chunk of quietChunks(decodeMedia(path, SAMPLE_RATE, deps.tools, opts.signal), chunkSamples, search)) {
      decodedSeconds += chunk.samples.length / SAMPLE_RATE
      if (chunk.last) decoded = true
      if (!started) {
        await opts.onFirstChunk?.()
        started = true
      }
      if (failure) break
      opts.signal?.throwIfAborted()
      opts.onSamples?.(chunk.samples)
      track(runChunk(index++, chunk.samples, chunk.offsetSamples / SAMPLE_RATE))
      while (pending.size >= maxInFlight) await Promise.race(pending)
    }
    decoded = true
    await Promise.all(pending)
  } catch (err) {
    stop.abort(err)
    await Promise.allSettled(pending)
    throw err
  }
  if (failure) throw (failure as { error: unknown }).error
  if (!started) throw new MediaUnreadableError('the file holds no audio')
  report.chunks = results.length
  const segments = results.flatMap(r => r.segments).filter(s => s.text)
  const language = opts.language ?? results.find(r => r.language)?.language ?? null
  return { segments, transcript: transcriptText(segments), language }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000
}
