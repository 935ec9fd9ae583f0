import { transcribeMedia, type ChunkReport, type Transcription } from '../engines/asr/chunked'
import type { AsrScheduler } from '../engines/asr/scheduler'
import { AsrUnavailableError, type AsrEngine, type TranscriptSegment } from '../engines/asr/engine'
import type { LlmEngine, StyleId } from '../engines/llm/engine'
import { summarizeLong } from '../engines/llm/summarize'
import { MediaToolMissingError, MediaUnreadableError } from '../engines/media/errors'
import type { MediaTools } from '../engines/media/ffmpeg'
import type { MediaStorage } from '../storage/storage'
import type { DiarizationEngine, Diarization, SpeakerHint } from '../engines/diarization/engine'
import { labelSpeakers } from '../engines/diarization/assign'
import { diarizeAlongside, readyEngine } from '../engines/diarization/alongside'
import { recognise } from '../engines/diarization/recognise'
import type { JobRow } from './repo'
import { PermanentJobError, type JobRun } from './worker'

export interface PipelineDeps {
  storage: MediaStorage
  tools: MediaTools
  asr: () => AsrEngine
  llm: () => Promise<LlmEngine>
  notes: {
    getById(id: string): Awaitable<{ id: string; account_id: string; sandbox: number; style_id: string; language: string | null } | null>
    setStage(id: string, stage: string, progress?: number | null): Awaitable<unknown>
    setProgress(id: string, progress: number): Awaitable<unknown>
    saveTranscript(id: string, result: { transcript: string; language: string | null; segments?: TranscriptSegment[]; speakers?: PipelineSpeaker[] }): Awaitable<unknown>
    finish(id: string, result: { title?: string; summary: string; transcript?: string; structuredContent: Record<string, unknown> | null; language: string | null; segments?: TranscriptSegment[] }): Awaitable<unknown>
  }
  uploads: { byNote(noteId: string): Promise<{ storage_key: string; speakers_hint?: string | null; duration_seconds?: number | null } | null> }
  /** the diarization engine (NOTESVC_DIARIZATION), or null when off */
  diarization?: () => DiarizationEngine | null
  /** a stereo recording whose channels are different people, as speakers by channel; null otherwise */
  channels?: (path: string, signal: AbortSignal) => Promise<Diarization | null>
  /** the voices the note's library remembers, of that engine, to name speakers recognised */
  speakerProfiles?: (accountId: string, sandbox: boolean, engine: string) => Promise<{ id: string; name: string; embedding: number[] }[]>
  chunkSeconds?: number
  /** the process's ASR chunk slots (NOTESVC_ASR_SLOTS), shared by its jobs; by default one per core */
  scheduler?: AsrScheduler
  /** the shortest time between two progress writes of one job */
  progressEveryMs?: number
  /** pause before the one further try of a failed summary */
  summaryRetryMs?: number
  log?: { warn(msg: string, fields?: Record<string, unknown>): void }
  /**
   * told the wall-clock seconds of each stage that finished, with its engine and the recording's
   * length (null when unknown), for the metrics: `asr` the transcription (decoding included),
   * `diarization` the wait for the speakers after it, `summary` the summary
   */
  onEngineTime?: (stage: 'asr' | 'diarization' | 'summary', engine: string, seconds: number, audioSeconds: number | null) => void
}

/** Progress is written at most once a second per job: a status poll sees it move, the database is not busied. */
const PROGRESS_EVERY_MS = 1000

type Awaitable<T> = T | Promise<T>

/** A speaker of the note as the pipeline found them (names from remembered voices). */
export interface PipelineSpeaker {
  label: string
  name: string | null
  engine: string | null
  embedding: number[] | null
  profileId: string | null
}

/** How alike a speaker's print must be to a remembered voice's to be given its name, per engine. */
export const RECOGNITION_THRESHOLD: Record<string, number> = { builtin: 0.97, 'sherpa-onnx': 0.6 }

/** The count the submitter gave, as stored with the upload (JSON), or undefined. */
function hintOf(stored: string | null | undefined): SpeakerHint | undefined {
  if (!stored) return undefined
  try {
    return JSON.parse(stored) as SpeakerHint
  } catch {
    return undefined
  }
}

/** Why a stage failed, as the note's `errorCode`, for failures retrying cannot fix. */
function permanent(err: unknown): never {
  if (err instanceof PermanentJobError) throw err
  if (err instanceof MediaUnreadableError) throw new PermanentJobError('media_unreadable', `The file could not be read as audio or video: ${err.message}`)
  if (err instanceof MediaToolMissingError) throw new PermanentJobError('media_unsupported', err.message)
  if (err instanceof AsrUnavailableError) throw new PermanentJobError('engine_unavailable', err.message)
  throw err
}

/**
 * The processing of one uploaded file: decode to 16 kHz mono (streamed), transcribe in chunks (several
 * at once, in the slots the process's jobs share), store the transcript, summarize in the note's style,
 * store. Each stage is reported on the note as it starts, and the share transcribed as chunks finish
 * (at most once a second). Every write is made only while the run holds the job's lease: the stages
 * and progress through `run.write`, the result as the write returned to the pool, which makes it with
 * marking the job done. A summary that fails twice fails the job with `summarization_failed`, the
 * transcript kept on the note.
 */
export function createUploadPipeline(deps: PipelineDeps) {
  return async function processUpload(job: JobRow, run: JobRun): Promise<() => Promise<unknown>> {
    const { signal } = run
    const note = await deps.notes.getById(job.note_id)
    const upload = await deps.uploads.byNote(job.note_id)
    if (!note || !upload) throw new PermanentJobError('media_missing', 'The note or its upload no longer exists.')

    await run.write(() => deps.notes.setStage(note.id, 'converting', null))
    if (!(await deps.storage.stat(upload.storage_key))) throw new PermanentJobError('media_missing', 'The uploaded file is no longer in storage; upload it again.')
    const asr = deps.asr()
    try {
      await asr.ready()
    } catch (err) {
      permanent(err)
    }

    const copy = await deps.storage.localCopy(upload.storage_key)
    let heard: Transcription
    // Diarization beside transcription: the session is fed each chunk as it is decoded; a stereo call
    // is split by channel instead when its channels are different people. A diarization that fails
    // leaves the transcript without speakers (logged), never fails the note.
    const warn = (msg: string, fields: Record<string, unknown>) => deps.log?.warn(msg, { noteId: note.id, ...fields })
    const diarizer = await readyEngine(deps.diarization?.(), warn)
    const beside = diarizeAlongside(diarizer, warn)
    const byChannel = diarizer && deps.channels ? deps.channels(copy.path, signal).catch(err => {
      warn('diarization by channel failed', { error: err instanceof Error ? err.message : String(err) })
      return null
    }) : Promise.resolve(null)
    // Stage and progress writes run beside transcription, one at a time; the first failure (a lost
    // lease) is kept and thrown below, never left an unhandled rejection.
    let writes: Promise<void> = Promise.resolve()
    let writeFailed: { error: unknown } | null = null
    const background = (fn: () => Awaitable<unknown>) => {
      writes = writes.then(async () => {
        if (writeFailed) return
        try {
          await run.write(fn)
        } catch (error) {
          writeFailed = { error }
        }
      })
    }
    const every = deps.progressEveryMs ?? PROGRESS_EVERY_MS
    let lastWrite = 0
    let latest: number | null = null
    let timer: ReturnType<typeof setTimeout> | null = null
    const flushProgress = () => {
      timer = null
      if (latest === null) return
      const p = latest
      latest = null
      lastWrite = performance.now()
      background(() => deps.notes.setProgress(note.id, p))
    }
    const report: ChunkReport = { chunks: 0, loopsRetried: 0, loopsCut: 0, retried: 0 }
    const audioSeconds = upload.duration_seconds ?? null
    const timed = (stage: 'asr' | 'diarization' | 'summary', engine: string, since: number) => deps.onEngineTime?.(stage, engine, (performance.now() - since) / 1000, audioSeconds)
    let since = performance.now()
    try {
      heard = await transcribeMedia(copy.path, { asr, tools: deps.tools, chunkSeconds: deps.chunkSeconds, scheduler: deps.scheduler, owner: { job: job.id, account: note.account_id } }, {
        language: note.language,
        signal,
        report,
        durationSeconds: audioSeconds,
        onFirstChunk: () => background(() => deps.notes.setStage(note.id, 'transcribing', 0)),
        onSamples: beside.onSamples,
        onProgress: fraction => {
          latest = fraction
          if (timer) return
          const wait = lastWrite + every - performance.now()
          if (wait <= 0) flushProgress()
          else timer = setTimeout(flushProgress, wait)
        },
      })
    } catch (err) {
      if (timer) clearTimeout(timer)
      await writes // a write under way ends before the run does
      await byChannel
      permanent(err)
    }
    timed('asr', asr.name, since)
    since = performance.now()
    let diarized: Diarization | null
    try {
      diarized = (await byChannel) ?? (await beside.finish(hintOf(upload.speakers_hint), signal))
    } finally {
      await copy.release()
    }
    if (diarized) timed('diarization', diarized.engine, since)
    if (timer) clearTimeout(timer)
    await writes
    if (writeFailed) throw (writeFailed as { error: unknown }).error
    if (report.loopsRetried || report.retried) deps.log?.warn('transcription: chunks decoded again', { noteId: note.id, ...report })
    const { transcript } = heard
    const language = heard.language
    const { segments, speakers } = await withSpeakers(heard.segments, diarized, note, deps)

    // stored before summarizing, with its times: a summary that fails leaves the transcript readable
    await run.write(() => deps.notes.saveTranscript(note.id, { transcript, language, segments, speakers }))
    let summary: Awaited<ReturnType<typeof summarizeLong>>
    // the summarizer reads the speakers' names (attendees, owners); an unnamed one is "Speaker A"
    const names = new Map(speakers.map(s => [s.label, s.name ?? `Speaker ${s.label}`]))
    const input = { text: transcript, styleId: note.style_id as StyleId, segments: segments.map(s => (s.speaker ? { ...s, speaker: names.get(s.speaker)! } : s)), language }
    since = performance.now()
    let llmName = 'unknown'
    try {
      try {
        const llm = await deps.llm()
        llmName = llm.name
        summary = await summarizeLong(llm, input, signal)
      } catch (err) {
        if (signal.aborted) throw err
        deps.log?.warn('summary failed, trying once more', { noteId: note.id, error: err instanceof Error ? err.message : String(err) })
        await Bun.sleep(deps.summaryRetryMs ?? 2000)
        signal.throwIfAborted()
        summary = await summarizeLong(await deps.llm(), input, signal)
      }
    } catch (err) {
      if (signal.aborted || err instanceof PermanentJobError) throw err
      throw new PermanentJobError('summarization_failed', `The transcript is ready (GET /v1/notes/${note.id}/transcript), but summarizing it failed: ${err instanceof Error ? err.message : String(err)}`)
    }
    timed('summary', llmName, since)
    // the transcript is on the note already (saveTranscript above)
    return async () => deps.notes.finish(note.id, { title: summary.title, summary: summary.summary, structuredContent: summary.structuredContent, language, segments })
  }
}

/** The segments labelled with speakers, and the speakers (named when a remembered voice is recognised). */
async function withSpeakers(segments: TranscriptSegment[], d: Diarization | null, note: { account_id: string; sandbox: number }, deps: PipelineDeps): Promise<{ segments: TranscriptSegment[]; speakers: PipelineSpeaker[] }> {
  if (!d || d.speakers === 0 || d.turns.length === 0) return { segments, speakers: [] }
  const labelled = labelSpeakers(segments, d)
  const speakers: PipelineSpeaker[] = [...labelled.labels].map(([index, label]) => {
    const e = d.embeddings?.[index]
    return { label, name: null, engine: d.engine, embedding: e ? Array.from(e) : null, profileId: null }
  })
  const threshold = RECOGNITION_THRESHOLD[d.engine]
  if (deps.speakerProfiles && threshold !== undefined && speakers.some(s => s.embedding)) {
    const profiles = (await deps.speakerProfiles(note.account_id, Number(note.sandbox) === 1, d.engine)).map(p => ({ id: p.id, name: p.name, embedding: p.embedding }))
    const known = recognise(speakers, profiles, threshold)
    for (const s of speakers) {
      const p = known.get(s.label)
      if (p) Object.assign(s, { name: p.name, profileId: p.id })
    }
  }
  return { segments: labelled.segments, speakers }
}
