import { transcribeMedia, type ChunkReport, type Transcription } from '../../engines/asr/chunked'
import type { AsrScheduler } from '../../engines/asr/scheduler'
import { AsrUnavailableError, type AsrEngine, type TranscriptSegment } from '../../engines/asr/engine'
import { MediaToolMissingError, MediaUnreadableError } from '../../engines/media/errors'
import type { MediaTools } from '../../engines/media/ffmpeg'
import type { MediaStorage } from '../../storage/storage'
import type { DiarizationEngine, Diarization, SpeakerHint } from '../../engines/diarization/engine'
import { labelSpeakers } from '../../engines/diarization/assign'
import { diarizeAlongside, readyEngine } from '../../engines/diarization/alongside'
import { recognise, RECOGNITION_THRESHOLDS } from '../../engines/diarization/recognise'
import { PermanentJobError, type JobRun } from '../../jobs/kinds'
import type { NotesService } from '../notes/service'
import type { NewNoteSpeaker } from '../notes/stored-transcript'
import type { NoteRecording } from '../uploads/note-media'
import { failedAfterRetries, type ProcessingStage } from './stages'

export interface TranscribeStageDeps {
  storage: MediaStorage
  tools: MediaTools
  asr: () => AsrEngine
  notes: Pick<NotesService, 'getById' | 'setStage' | 'setProgress' | 'saveTranscript'>
  /** the note's recording as its upload stored it; null when it has none */
  recording: (noteId: string) => Promise<NoteRecording | null>
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
  log?: { warn(msg: string, fields?: Record<string, unknown>): void }
  /**
   * told the wall-clock seconds of each part that finished, with its engine and the recording's length
   * (null when unknown), for the metrics: `asr` the transcription (decoding included), `diarization`
   * the wait for the speakers after it
   */
  onEngineTime?: (stage: 'asr' | 'diarization', engine: string, seconds: number, audioSeconds: number | null) => void
}

/** Progress is written at most once a second per job: a status poll sees it move, the database is not busied. */
const PROGRESS_EVERY_MS = 1000

type Awaitable<T> = T | Promise<T>

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

/** The stage's name, as a job's row remembers it. */
const TRANSCRIBE = 'transcribe'

/**
 * The first stage of an upload's processing: decode to 16 kHz mono (streamed), transcribe in chunks
 * (several at once, in the slots the process's jobs share) with diarization beside it (fed each chunk
 * as it is decoded: they run together, for speed), name the speakers the library remembers. Each step
 * is reported on the note as it starts, and the share transcribed as chunks finish (at most once a
 * second). Every write is made only while the run holds the job's lease: the stages and progress
 * through `run.write`, the transcript as the write returned to the pool, which makes it with moving
 * the job on to its next stage (the summary), so a summary that fails leaves the transcript readable.
 * Fails the note as `transcription_failed` once retries are used up while transcribing, `internal`
 * before that (or with the code of a failure retrying cannot fix).
 */
export function transcribeStage(deps: TranscribeStageDeps): ProcessingStage {
  return {
    name: TRANSCRIBE,
    failure: (err, note) => failedAfterRetries(err, note.processing_stage === 'transcribing' ? 'transcription_failed' : 'internal'),
    run: async (job, run) => {
      const note = await deps.notes.getById(job.note_id)
      const upload = await deps.recording(job.note_id)
      if (!note || !upload) throw new PermanentJobError('media_missing', 'The note or its upload no longer exists.')

      await run.write(() => deps.notes.setStage(note.id, 'converting', null))
      if (!(await deps.storage.stat(upload.storageKey))) throw new PermanentJobError('media_missing', 'The uploaded file is no longer in storage; upload it again.')
      const asr = deps.asr()
      try {
        await asr.ready()
      } catch (err) {
        permanent(err)
      }
      const heard = await transcribeWithSpeakers(deps, asr, note, upload, job.id, run)
      const { transcript, language } = heard.transcription
      const { segments, speakers } = await withSpeakers(heard.transcription.segments, heard.diarized, note, deps)
      // made with moving the job on to its summary: a summary that fails leaves the transcript readable
      return () => deps.notes.saveTranscript(note.id, { transcript, language, segments, speakers })
    },
  }
}

/**
 * The recording transcribed (chunks in the shared slots) with diarization beside it, the stages and
 * progress written under the run's lease as they move.
 */
async function transcribeWithSpeakers(deps: TranscribeStageDeps, asr: AsrEngine, note: { id: string; account_id: string; language: string | null }, upload: NoteRecording, jobId: string, run: JobRun): Promise<{ transcription: Transcription; diarized: Diarization | null }> {
  const { signal } = run
  const copy = await deps.storage.localCopy(upload.storageKey)
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
  const audioSeconds = upload.durationSeconds
  const timed = (stage: 'asr' | 'diarization', engine: string, since: number) => deps.onEngineTime?.(stage, engine, (performance.now() - since) / 1000, audioSeconds)
  let since = performance.now()
  try {
    heard = await transcribeMedia(copy.path, { asr, tools: deps.tools, chunkSeconds: deps.chunkSeconds, scheduler: deps.scheduler, owner: { job: jobId, account: note.account_id } }, {
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
    diarized = (await byChannel) ?? (await beside.finish(hintOf(upload.speakersHint), signal))
  } finally {
    await copy.release()
  }
  if (diarized) timed('diarization', diarized.engine, since)
  if (timer) clearTimeout(timer)
  await writes
  if (writeFailed) throw (writeFailed as { error: unknown }).error
  if (report.loopsRetried || report.retried) deps.log?.warn('transcription: chunks decoded again', { noteId: note.id, ...report })
  return { transcription: heard, diarized }
}

/**
 * The segments labelled with speakers, and the speakers: unnamed, a remembered voice recognised only
 * offered as the speaker's suggestion (with how alike the prints are), for a person to confirm.
 */
async function withSpeakers(segments: TranscriptSegment[], d: Diarization | null, note: { account_id: string; sandbox: number }, deps: TranscribeStageDeps): Promise<{ segments: TranscriptSegment[]; speakers: NewNoteSpeaker[] }> {
  if (!d || d.speakers === 0 || d.turns.length === 0) return { segments, speakers: [] }
  const labelled = labelSpeakers(segments, d)
  const speakers: NewNoteSpeaker[] = [...labelled.labels].map(([index, label]) => {
    const e = d.embeddings?.[index]
    return { label, name: null, engine: d.engine, embedding: e ? Array.from(e) : null, profileId: null }
  })
  const threshold = RECOGNITION_THRESHOLDS[d.engine]
  if (deps.speakerProfiles && threshold !== undefined && speakers.some(s => s.embedding)) {
    const profiles = (await deps.speakerProfiles(note.account_id, Number(note.sandbox) === 1, d.engine)).map(p => ({ id: p.id, name: p.name, embedding: p.embedding }))
    const known = recognise(speakers, profiles, threshold)
    for (const s of speakers) {
      const p = known.get(s.label)
      if (p) s.suggestion = { profileId: p.id, name: p.name, similarity: Math.round(p.similarity * 1000) / 1000 }
    }
  }
  return { segments: labelled.segments, speakers }
}
