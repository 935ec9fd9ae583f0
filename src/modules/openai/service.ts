import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Principal } from '../../http/admission'
import { UnreadableMediaError, type Charged, type Decoding, type ProcessingService } from '../processing/service'
import type { AsrEngine } from '../../engines/asr/engine'
import { MAX_UPLOAD_BYTES } from '../uploads/model'
import { MAX_MCP_AUDIO_BYTES, type OpenAiTranscriptionFields, type OpenAiTranscriptionToolArguments } from './model'
import { openAiAnswer, type OpenAiAnswer } from './answer-format'
import { checkGranularities, checkLanguage, fieldsCheck, formOptions, invalid, translationCheck } from './form-checks'
import { receiveMultipart } from './multipart'
import { createRequestTempDirs } from './request-temp-dirs'

export type { OpenAiAnswer } from './answer-format'
export type { verboseSegment } from './answer-format'

export type OpenAiService = ReturnType<typeof createOpenAiService>

/** Longest text field (the prompt), in bytes. */
const MAX_FIELD_BYTES = 16 * 1024
/** The longest a request may take, upload and transcription together. */
const REQUEST_TIMEOUT_MS = 3 * 3600 * 1000

type Task = 'transcribe' | 'translate'

/** What `GET /v1/models` lists. */
export interface ModelCatalog {
  /** what the speech engines offer (the one in use first): installed whisper.cpp models, `pocketsphinx` in use, …; `created` in Unix seconds */
  models: { id: string; created?: number }[]
  diarization: boolean
}

/**
 * OpenAI's `POST /v1/audio/transcriptions` over notesvc's transcription: the multipart upload streamed
 * to a temporary file in `<data>/tmp` (removed when the request ends, and at start-up when a crashed
 * process left it), then transcribed and charged exactly as `createTranscription` (the processing
 * service's charging, ASR slots and sandbox), the answer in the requested `response_format`
 * (answer-format.ts), the form checked by form-checks.ts.
 */
export function createOpenAiService(deps: {
  processing: ProcessingService
  dataDir: string
  log?: { info(msg: string, fields?: Record<string, unknown>): void }
  /** what `GET /v1/models` lists: the models the speech engines offer, diarization on or off */
  catalog?: () => ModelCatalog
}) {
  const startedAt = Math.floor(Date.now() / 1000)
  const { withTempDir, sweepTemporaryFiles } = createRequestTempDirs(deps)

  /**
   * `path` (or, with `audioUrl`, the recording fetched as createTranscription fetches it) transcribed
   * or translated; `field` is where the recording came in, named when it is not audio.
   */
  async function transcribe(p: Principal, source: { path: string } | { audioUrl: string }, o: OpenAiTranscriptionFields, signal: AbortSignal, task: Task, field: string): Promise<Charged<OpenAiAnswer>> {
    const speakers = o.response_format === 'diarized_json' ? { hint: o.known_speaker_names?.length ? { min: o.known_speaker_names.length } : undefined } : undefined
    const decoding: Decoding = { ...(o.prompt ? { prompt: o.prompt } : {}), ...(task === 'translate' ? { translate: true } : {}) }
    const language = o.language && o.language !== 'auto' ? o.language : null
    try {
      const { body: heard, creditsRemaining } = 'path' in source
        ? await deps.processing.transcribeLocalFile(p, source.path, { language, signal, speakers, decoding })
        : await deps.processing.transcribeUrl(p, { audioUrl: source.audioUrl, ...(language ? { language } : {}) }, decoding)
      return { creditsRemaining, body: openAiAnswer(heard, o, task) }
    } catch (err) {
      // OpenAI answers 400 for a file that is not audio; the processing service's 502 is for its other routes
      if (err instanceof UnreadableMediaError) {
        throw invalid([{ field, issue: `is not audio or video that ffmpeg can read: ${err.reason}` }], ` Send a recording (WAV, MP3, M4A, Opus, MP4, …) as \`${field}\`. Nothing was charged.`)
      }
      throw err
    }
  }

  /** 400 before the body is read when the engine has no translate task. */
  function checkTranslates(p: Principal, engine: AsrEngine) {
    if (p.sandbox || engine.translates) return
    throw invalid(
      [{ field: 'model', issue: `this server's speech engine (${engine.name}) cannot translate` }],
      ` ${engine.name} hears English only and has no translate task; have the operator run whisper with a multilingual model (NOTESVC_ASR=whisper NOTESVC_WHISPER_MODEL=base), or transcribe English speech with POST /v1/audio/transcriptions. Nothing was charged.`,
    )
  }

  /** The upload streamed to a temporary file, its fields checked, then `task` run on it. */
  async function receiveAndRun(p: Principal, request: Request, engine: AsrEngine, task: Task): Promise<Charged<OpenAiAnswer>> {
    return withTempDir(async dir => {
      const path = join(dir, 'upload')
      const form = await receiveMultipart(request, path, { fileField: 'file', maxFileBytes: MAX_UPLOAD_BYTES, maxFieldBytes: MAX_FIELD_BYTES, maxFields: 32 })
      const o = formOptions(form.fields, task === 'translate' ? translationCheck : fieldsCheck)
      if (!form.file) throw invalid([{ field: 'file', issue: 'is required' }], ' Send the recording as the `file` part (curl -F file=@recording.wav).')
      if (form.file.bytes === 0) throw invalid([{ field: 'file', issue: 'is empty' }], ' The file part holds no bytes.')
      checkGranularities(o, engine, p.sandbox)
      checkLanguage(o, engine, p.sandbox)
      return transcribe(p, { path }, o, AbortSignal.any([request.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]), task, 'file')
    })
  }

  return {
    /**
     * The HTTP route: the balance and the engine are checked before the body is read (402 or 502
     * without receiving a gigabyte first), then the file is streamed to disk, the fields checked.
     */
    async transcribeUpload(p: Principal, request: Request): Promise<Charged<OpenAiAnswer>> {
      const engine = await deps.processing.admitTranscription(p)
      return receiveAndRun(p, request, engine, 'transcribe')
    },

    /**
     * OpenAI's translations: whisper's translate task (speech in any language it knows, written in
     * English), charged as a transcription. An engine that cannot translate is refused before the
     * body is read.
     */
    async translateUpload(p: Principal, request: Request): Promise<Charged<OpenAiAnswer>> {
      const engine = await deps.processing.admitTranscription(p)
      checkTranslates(p, engine)
      return receiveAndRun(p, request, engine, 'translate')
    },

    /** `GET /v1/models`: what this server can run, in OpenAI's list shape. */
    listModels() {
      const c = deps.catalog?.() ?? { models: [], diarization: false }
      const model = (id: string, created = startedAt) => ({ id, object: 'model' as const, created, owned_by: 'notesvc' })
      return {
        object: 'list' as const,
        data: [
          model('whisper-1'),
          ...c.models.map(m => model(m.id, m.created)),
          ...(c.diarization ? [model('gpt-4o-transcribe-diarize')] : []),
        ],
      }
    },

    /**
     * The MCP tools (createAudioTranscription, createAudioTranslation): base64 `audio` written to a
     * temporary file, or `audioUrl` fetched as createTranscription fetches it.
     */
    async transcribeToolCall(p: Principal, args: OpenAiTranscriptionToolArguments, task: Task = 'transcribe'): Promise<Charged<OpenAiAnswer>> {
      const { audio, audioUrl, model: _model, ...rest } = args
      const o: OpenAiTranscriptionFields = rest
      if ((audio === undefined) === (audioUrl === undefined)) {
        throw invalid([{ field: 'arguments', issue: 'give exactly one of audio (base64) and audioUrl' }])
      }
      const engine = await deps.processing.admitTranscription(p)
      if (task === 'translate') checkTranslates(p, engine)
      checkGranularities(o, engine, p.sandbox)
      checkLanguage(o, engine, p.sandbox)
      if (audioUrl !== undefined) return transcribe(p, { audioUrl }, o, AbortSignal.timeout(REQUEST_TIMEOUT_MS), task, 'audioUrl')
      const bytes = Buffer.from(audio!, 'base64')
      if (bytes.length === 0) throw invalid([{ field: 'audio', issue: 'is empty or not base64' }])
      if (bytes.length > MAX_MCP_AUDIO_BYTES) throw invalid([{ field: 'audio', issue: 'must be at most 25 MB decoded; give audioUrl for larger recordings' }])
      return withTempDir(async dir => {
        const path = join(dir, 'upload')
        await writeFile(path, bytes)
        return transcribe(p, { path }, o, AbortSignal.timeout(REQUEST_TIMEOUT_MS), task, 'audio')
      })
    },

    /** Removes the temporary folders a killed process left (request-temp-dirs.ts). */
    sweepTemporaryFiles,
  }
}
