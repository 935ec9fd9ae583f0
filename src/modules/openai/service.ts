import { TypeCompiler } from '@sinclair/typebox/compiler'
import { deflateSync } from 'node:zlib'
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Principal } from '../../http/admission'
import { ApiError, detailsFromValueErrors, type ErrorDetail } from '../../http/errors'
import { textDetails } from '../../http/text-check'
import { toSrt, toTxt, toVtt, TRANSCRIPT_CONTENT_TYPES } from '../../formats/transcript'
import { UnreadableMediaError, type Charged, type Decoding, type HeardRecording, type ProcessingService } from '../processing/service'
import type { AsrEngine, TranscriptSegment } from '../../engines/asr/engine'
import { MAX_UPLOAD_BYTES } from '../uploads/model'
import { MAX_MCP_AUDIO_BYTES, OpenAiTranscriptionFields, OpenAiTranslationFields, type OpenAiTranscriptionToolArguments, type ResponseFormat } from './model'
import { receiveMultipart } from './multipart'

export type OpenAiService = ReturnType<typeof createOpenAiService>

/** An answer in the requested `response_format`: JSON as an object, the other formats as text. */
export interface OpenAiAnswer {
  body: Record<string, unknown> | string
  contentType: string
}

/**
 * Fields OpenAI's form has that change nothing here: `stream` (only false: the answer comes whole)
 * and `chunking_strategy` (notesvc always cuts long recordings at quiet points). `include[]` asks for
 * token log probabilities, which neither engine gives here: refused with a 400, not ignored. Any
 * other unknown field is refused, so a misspelt `response_format` is not silently ignored.
 */
const IGNORED_FIELDS = new Set(['stream', 'chunking_strategy'])
const INCLUDE_FIELDS = ['include[]', 'include']
const GRANULARITY_FIELDS = ['timestamp_granularities[]', 'timestamp_granularities']
const SPEAKER_NAME_FIELDS = ['known_speaker_names[]', 'known_speaker_names']
const SPEAKER_REFERENCE_FIELDS = ['known_speaker_references[]', 'known_speaker_references']
/** Longest text field (the prompt), in bytes. */
const MAX_FIELD_BYTES = 16 * 1024
/** The longest a request may take, upload and transcription together. */
const REQUEST_TIMEOUT_MS = 3 * 3600 * 1000
/** Temporary folders of dead processes are removed at start; a live process's only after this long. */
const STALE_TEMP_MS = 24 * 3600 * 1000

const fieldsCheck = TypeCompiler.Compile(OpenAiTranscriptionFields)
const translationCheck = TypeCompiler.Compile(OpenAiTranslationFields)
const round = (x: number) => Math.round(x * 1000) / 1000

function invalid(details: ErrorDetail[], hint = ''): ApiError {
  return new ApiError('invalid_request', `The form failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.${hint}`, { details })
}

/** The checked options of a request, from the multipart fields (each field's text as sent). */
export function formOptions(fields: Map<string, string[]>, check: typeof fieldsCheck | typeof translationCheck = fieldsCheck): OpenAiTranscriptionFields {
  const options: Record<string, unknown> = {}
  const details: ErrorDetail[] = []
  for (const [name, values] of fields) {
    if (GRANULARITY_FIELDS.includes(name)) {
      options.timestamp_granularities = [...((options.timestamp_granularities as string[] | undefined) ?? []), ...values]
    } else if (SPEAKER_NAME_FIELDS.includes(name)) {
      options.known_speaker_names = [...((options.known_speaker_names as string[] | undefined) ?? []), ...values]
    } else if (SPEAKER_REFERENCE_FIELDS.includes(name)) {
      details.push({ field: 'known_speaker_references[]', issue: 'reference recordings are not matched here; send known_speaker_names[] alone: the names go to the speakers in the order they are first heard' })
    } else if (name === 'stream') {
      if (values.some(v => v !== 'false')) details.push({ field: 'stream', issue: 'streaming is not offered; send false or leave it out' })
    } else if (INCLUDE_FIELDS.includes(name)) {
      details.push({ field: 'include[]', issue: values.every(v => v === 'logprobs') ? 'logprobs are not available: neither speech engine here (whisper.cpp through its Node binding, PocketSphinx) gives token log probabilities; leave include[] out' : 'only logprobs exists, and it is not available here; leave include[] out' })
    } else if (IGNORED_FIELDS.has(name)) {
      continue
    } else if (values.length > 1) {
      details.push({ field: name, issue: 'was sent more than once' })
    } else if (name === 'temperature') {
      options.temperature = values[0]!.trim() === '' ? Number.NaN : Number(values[0])
    } else {
      options[name] = values[0]
    }
  }
  if (!check.Check(options)) {
    for (const d of detailsFromValueErrors('body', [...check.Errors(options)])) {
      const field = d.field.replace(/^timestamp_granularities(\.\d+)?$/, 'timestamp_granularities[]').replace(/^known_speaker_names(\.\d+)?$/, 'known_speaker_names[]')
      if (!details.some(x => x.field === field)) {
        details.push({ field, issue: d.issue.startsWith('Unexpected property') || /additional/i.test(d.issue) ? 'is not a field of this form' : d.issue })
      }
    }
  }
  // U+0000 and lone surrogates: none of these fields is stored, but they are refused as in every JSON
  // body and in the MCP tool's arguments (src/http/text-check.ts), so the form and the tool answer alike
  for (const d of textDetails(options, 'body')) if (!details.some(x => x.field === d.field || x.field === `${d.field.split('.')[0]}[]`)) details.push(d)
  if (details.length) throw invalid(details)
  return options as OpenAiTranscriptionFields
}

/** `word` granularity needs `verbose_json` (as OpenAI's API has it) and an engine that gives word times. */
function checkGranularities(o: OpenAiTranscriptionFields, engine: { name: string; wordTimes?: boolean }, sandbox: boolean) {
  if (!o.timestamp_granularities?.includes('word')) return
  const format = o.response_format ?? 'json'
  if (format !== 'verbose_json') {
    throw invalid([{ field: 'timestamp_granularities[]', issue: 'word needs response_format verbose_json' }], ` Word times come only in verbose_json: send response_format=verbose_json with timestamp_granularities[]=word (response_format is ${format}).`)
  }
  if (!sandbox && !engine.wordTimes) {
    throw invalid([{ field: 'timestamp_granularities[]', issue: `this server's speech engine (${engine.name}) does not give word times` }], ' Ask for segment granularity, or have the operator run PocketSphinx (NOTESVC_ASR=pocketsphinx), which gives word times. Nothing was charged.')
  }
}

/** UTF-8 bytes over zlib-compressed bytes, as whisper computes it (`len(b) / len(zlib.compress(b))`); high for repetitive text. */
export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8')
  return bytes.length === 0 ? 0 : round(bytes.length / deflateSync(bytes).length)
}

/** A segment with every field of OpenAI's TranscriptionSegment (docs/decisions.md says where each comes from). */
export function verboseSegment(s: TranscriptSegment, id: number) {
  return {
    id,
    seek: s.seek ?? 0,
    start: round(s.start),
    end: round(s.end),
    text: s.text,
    tokens: [] as number[],
    temperature: s.temperature ?? 0,
    avg_logprob: s.avgLogprob ?? 0,
    compression_ratio: compressionRatio(s.text),
    no_speech_prob: 0,
  }
}

/** A language other than English, asked of an engine that hears English only: 400 before anything is charged. */
function checkLanguage(o: OpenAiTranscriptionFields, engine: AsrEngine, sandbox: boolean) {
  const language = o.language?.toLowerCase()
  if (sandbox || !language || language === 'auto' || /^en(-|$)/.test(language) || !engine.englishOnly?.()) return
  throw invalid(
    [{ field: 'language', issue: `this server's speech engine (${engine.name}) hears English only` }],
    ` Leave language out or send en; for ${o.language} the operator runs whisper with a multilingual model (NOTESVC_ASR=whisper NOTESVC_WHISPER_MODEL=base, not a .en model). Nothing was charged.`,
  )
}

type Task = 'transcribe' | 'translate'

/** What `GET /v1/models` lists. */
export interface ModelCatalog {
  /** what the speech engines offer (the one in use first): installed whisper.cpp models, `pocketsphinx` in use, …; `created` in Unix seconds */
  models: { id: string; created?: number }[]
  diarization: boolean
}

/** The answer OpenAI's API gives for `response_format`; `translate` for the translations route. */
export function openAiAnswer(heard: HeardRecording, o: OpenAiTranscriptionFields, task: 'transcribe' | 'translate' = 'transcribe'): OpenAiAnswer {
  const format: ResponseFormat = o.response_format ?? 'json'
  const duration = round(heard.durationSeconds ?? heard.segments.at(-1)?.end ?? 0)
  // whisper-1's usage: the recording's duration in whole seconds
  const usage = { type: 'duration', seconds: Math.ceil(duration) }
  switch (format) {
    case 'json':
      return { body: task === 'translate' ? { text: heard.transcript } : { text: heard.transcript, usage }, contentType: TRANSCRIPT_CONTENT_TYPES.json }
    case 'text':
      return { body: toTxt(heard.transcript), contentType: TRANSCRIPT_CONTENT_TYPES.txt }
    case 'srt':
      return { body: toSrt(heard.segments), contentType: TRANSCRIPT_CONTENT_TYPES.srt }
    case 'vtt':
      return { body: toVtt(heard.segments), contentType: TRANSCRIPT_CONTENT_TYPES.vtt }
    case 'diarized_json': {
      // labels in order of first speech; known names replace the first ones
      const names = new Map<string, string>()
      for (const s of heard.segments) {
        const label = s.speaker ?? 'A'
        if (!names.has(label)) names.set(label, o.known_speaker_names?.[names.size] ?? label)
      }
      return {
        contentType: TRANSCRIPT_CONTENT_TYPES.json,
        body: {
          task: 'transcribe',
          duration,
          text: heard.transcript,
          segments: heard.segments.map((s, i) => ({ type: 'transcript.text.segment', id: `seg_${i}`, start: round(s.start), end: round(s.end), text: s.text, speaker: names.get(s.speaker ?? 'A')! })),
          usage: { type: 'duration', seconds: duration },
        },
      }
    }
    case 'verbose_json': {
      const granularities = o.timestamp_granularities?.length ? o.timestamp_granularities : ['segment']
      return {
        contentType: TRANSCRIPT_CONTENT_TYPES.json,
        body: {
          task,
          language: heard.language ?? 'und',
          duration,
          text: heard.transcript,
          ...(granularities.includes('segment') ? { segments: heard.segments.map(verboseSegment) } : {}),
          ...(granularities.includes('word') ? { words: heard.segments.flatMap(s => s.words ?? []).map(w => ({ word: w.word, start: round(w.start), end: round(w.end) })) } : {}),
          usage,
        },
      }
    }
  }
}

/**
 * OpenAI's `POST /v1/audio/transcriptions` over notesvc's transcription: the multipart upload streamed
 * to a temporary file in `<data>/tmp` (removed when the request ends, and at start-up when a crashed
 * process left it), then transcribed and charged exactly as `createTranscription` (the processing
 * service's charging, ASR slots and sandbox), the answer in the requested `response_format`.
 */
export function createOpenAiService(deps: {
  processing: ProcessingService
  dataDir: string
  log?: { info(msg: string, fields?: Record<string, unknown>): void }
  /** what `GET /v1/models` lists: the models the speech engines offer, diarization on or off */
  catalog?: () => ModelCatalog
}) {
  const root = join(deps.dataDir, 'tmp')
  const startedAt = Math.floor(Date.now() / 1000)

  /** A temporary folder for one request, named after this process (`openai-<pid>-…`) so a sweep can tell whose it is. */
  async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
    await mkdir(root, { recursive: true })
    const dir = await mkdtemp(join(root, `openai-${process.pid}-`))
    try {
      return await fn(dir)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

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

    /**
     * Removes the temporary folders a killed process left (its pid no longer runs, or they are older
     * than a day), never those of a process still serving: several processes may share the data folder.
     */
    async sweepTemporaryFiles(now = Date.now()): Promise<{ folders: number }> {
      let names: string[]
      try {
        names = await readdir(root)
      } catch {
        return { folders: 0 }
      }
      let folders = 0
      for (const name of names) {
        const m = /^openai-(\d+)-/.exec(name)
        if (!m) continue
        const dir = join(root, name)
        const pid = Number(m[1])
        const info = await stat(dir).catch(() => null)
        const stale = !info || now - info.mtimeMs > STALE_TEMP_MS
        if (pid !== process.pid && (stale || !isRunning(pid))) {
          await rm(dir, { recursive: true, force: true })
          folders++
        }
      }
      if (folders) deps.log?.info('removed the temporary files of interrupted OpenAI-compatible transcriptions', { folders })
      return { folders }
    },
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
