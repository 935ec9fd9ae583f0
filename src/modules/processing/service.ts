import type { Static } from 'elysia'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/admission'
import type { NotesService } from '../notes/service'
import type { CreditsService } from '../credits/service'
import { AsrUnavailableError, SAMPLE_RATE, type AsrEngine, type TranscriptSegment } from '../../engines/asr/engine'
import { missingSpeechEngine } from '../../engines/asr'
import { LlmRefusalError, LlmUnavailableError, type LlmEngine, type StyleId } from '../../engines/llm/engine'
import { retrievePassages } from '../../engines/llm/retrieval'
import { sentencesText, timedSentences } from '../../engines/llm/sentences'
import { summarizeLong } from '../../engines/llm/summarize'
import { decodeMedia, measuredDuration } from '../../engines/media/decode'
import { MediaToolMissingError, MediaUnreadableError } from '../../engines/media/errors'
import type { MediaTools } from '../../engines/media/ffmpeg'
import { downloadUrl, UrlFetchFailedError, UrlRefusedError, UrlTimeoutError, UrlTooLargeError } from '../../engines/media/url-fetch'
import { YtdlpFailedError, YtdlpMissingError, type Ytdlp } from '../../engines/media/ytdlp'
import { transcribeMedia } from '../../engines/asr/chunked'
import { diarizeAlongside, readyEngine } from '../../engines/diarization/alongside'
import { labelSpeakers } from '../../engines/diarization/assign'
import type { Diarization, DiarizationEngine, SpeakerHint } from '../../engines/diarization/engine'
import type { AsrScheduler } from '../../engines/asr/scheduler'
import type { SummaryRequest, TranscriptionRequest, YoutubeSummaryRequest } from './model'
import { MAX_UPLOAD_BYTES } from '../uploads/model'
import { checkContentPolicy } from './content-policy'
import { SANDBOX_DURATION_SECONDS, SANDBOX_NOTICE, SANDBOX_TIMED_SEGMENTS, SANDBOX_TRANSCRIPT, sandboxAnswer, sandboxSummary } from './sandbox'

/** A charging response: the body and the balance for `X-Credits-Remaining`. */
export interface Charged<T> {
  body: T
  creditsRemaining: number
}

export type ProcessingService = ReturnType<typeof createProcessingService>

/** The media is not audio or video ffmpeg reads: 502 on notesvc's routes; the OpenAI route answers 400 for it, as OpenAI does. */
export class UnreadableMediaError extends ApiError {
  /** what is wrong with the file, as the media reader said it */
  constructor(message: string, readonly reason: string) {
    super('upstream_failure', message)
  }
}

/** A recording transcribed and charged: what createTranscription and the OpenAI-compatible route answer from. */
/** whisper.cpp's initial prompt and translate task (OpenAI's `prompt` and translations route) */
export type Decoding = { prompt?: string; translate?: boolean }

export interface HeardRecording {
  transcript: string
  /** timed segments (seconds), with words when the engine gives them */
  segments: TranscriptSegment[]
  /** heard or given; null when unknown */
  language: string | null
  durationSeconds: number | null
  creditsCharged: number
  notice?: string
}

const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com', 'youtu.be', 'www.youtube-nocookie.com', 'youtube-nocookie.com'])
const PASSAGES_FOR_A_QUESTION = 5
/** Longest video a link may summarize: 6 hours. */
const MAX_VIDEO_SECONDS = 6 * 3600

/** The YouTube video id of a watch, short, embed, shorts or live link; null for anything else. */
export function youtubeVideoId(raw: string): string | null {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return null
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null
  const host = url.hostname.toLowerCase()
  if (!YOUTUBE_HOSTS.has(host)) return null
  const id = host === 'youtu.be'
    ? url.pathname.slice(1).split('/')[0]
    : url.pathname === '/watch'
      ? url.searchParams.get('v')
      : /^\/(embed|shorts|live|v)\/([^/]+)/.exec(url.pathname)?.[2]
  return id && /^[A-Za-z0-9_-]{11}$/.test(id) ? id : null
}

/** 502 before any work or charge when no speech engine is installed; the message says what to install. */
function requireSpeechEngine(asr: AsrEngine) {
  const missing = missingSpeechEngine(asr)
  if (missing) throw new ApiError('upstream_failure', `${missing} Nothing was charged.`)
}

/** Provider failures as the SPEC's statuses: 502 for what the engines or the network could not do. */

function asApiError(err: unknown): never {
  if (err instanceof ApiError) throw err
  if (err instanceof LlmRefusalError) throw new ApiError('content_policy', `The model refused the content: ${err.message}. Nothing was charged.`)
  if (err instanceof LlmUnavailableError || err instanceof AsrUnavailableError || err instanceof MediaToolMissingError || err instanceof YtdlpMissingError) {
    throw new ApiError('upstream_failure', `${err.message} Nothing was charged.`)
  }
  if (err instanceof UrlRefusedError) throw new ApiError('invalid_request', err.message, { details: [{ field: 'audioUrl', issue: err.message }] })
  if (err instanceof UrlTooLargeError) throw new ApiError('invalid_request', err.message, { details: [{ field: 'audioUrl', issue: 'the file is too large' }] })
  if (err instanceof UrlTimeoutError || err instanceof UrlFetchFailedError || err instanceof YtdlpFailedError) throw new ApiError('upstream_failure', `${err.message} Nothing was charged.`)
  if (err instanceof MediaUnreadableError) throw new UnreadableMediaError(`The media could not be read as audio: ${err.message}. Nothing was charged.`, err.message)
  if ((err as Error)?.name === 'TimeoutError' || (err as Error)?.name === 'AbortError') throw new ApiError('upstream_failure', 'The operation ran past its time limit; try a shorter recording or a longer timeoutSeconds. Nothing was charged.')
  throw err
}

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'notesvc-work-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * The synchronous processing routes. Each checks the balance before the work (402 early), does the
 * work, and charges only on success, in one transaction that refuses (402) if the balance no longer
 * covers it: a provider failure charges nothing, and concurrent calls never overspend.
 */
export function createProcessingService(deps: {
  notes: NotesService
  credits: CreditsService
  llm: () => Promise<LlmEngine>
  asr: () => AsrEngine
  tools: MediaTools
  ytdlp: Ytdlp
  contentPolicy: RegExp[]
  allowPrivateUrls: boolean
  /** the process's ASR chunk slots, shared with the upload jobs (NOTESVC_ASR_SLOTS) */
  scheduler?: AsrScheduler
  /** the diarization engine (NOTESVC_DIARIZATION), or null when off: used when a caller asks for speakers */
  diarization?: () => DiarizationEngine | null
  /** a stereo call split by channel, when its channels are different people */
  channels?: (path: string, signal: AbortSignal) => Promise<Diarization | null>
  log?: { warn(msg: string, fields?: Record<string, unknown>): void }
}) {
  const { notes, credits } = deps
  const remaining = async (p: Principal) => (await credits.balance(p.accountId)).totalRemaining
  const ensureBalance = async (p: Principal, operation: string, cost: number) => {
    await credits.ensureCovers(p.accountId, operation, cost)
  }

  async function charge(p: Principal, operation: string, cost: number, noteId: string | null = null): Promise<number> {
    return (await credits.charge({ accountId: p.accountId, operation, credits: cost, source: p.source, noteId })).balance.totalRemaining
  }

  /** Transcribed; with `speakers`, diarized beside it and each segment labelled with its speaker (A, B, …). */
  async function transcribeFile(p: Principal, path: string, language: string | null, signal: AbortSignal, speakers?: { hint?: SpeakerHint }, decoding?: Decoding) {
    const asr = deps.asr()
    await asr.ready()
    const warn = (msg: string, fields: Record<string, unknown>) => deps.log?.warn(msg, fields)
    const diarizer = speakers ? await readyEngine(deps.diarization?.(), warn) : null
    const beside = diarizeAlongside(diarizer, warn)
    const byChannel = diarizer && deps.channels ? deps.channels(path, signal).catch(() => null) : Promise.resolve(null)
    const heard = await transcribeMedia(path, { asr, tools: deps.tools, scheduler: deps.scheduler, owner: { job: `req_${crypto.randomUUID()}`, account: p.accountId } }, { language, signal, onSamples: beside.onSamples, decoding })
    const d = (await byChannel) ?? (await beside.finish(speakers?.hint, signal))
    if (!d || d.turns.length === 0) return heard
    return { ...heard, segments: labelSpeakers(heard.segments, d).segments }
  }

  /**
   * A media file on this host, transcribed in the process's ASR slots and charged one credit per
   * started minute of the audio it holds (measured, never a header's claim): the balance is checked
   * when the duration is known (402 before any transcription) and charged, as `createTranscription`,
   * only once the transcript is there.
   */
  async function transcribeAndCharge(p: Principal, path: string, language: string | null, signal: AbortSignal, speakers?: { hint?: SpeakerHint }, decoding?: Decoding): Promise<Charged<HeardRecording>> {
    try {
      const duration = await measuredDuration(path, deps.tools, signal)
      const cost = credits.quote(p, 'createTranscription', duration)
      await ensureBalance(p, 'createTranscription', cost)
      const heard = await transcribeFile(p, path, language, signal, speakers, decoding)
      const left = await charge(p, 'createTranscription', cost)
      return { creditsRemaining: left, body: { transcript: heard.transcript, segments: heard.segments, language: heard.language ?? language, durationSeconds: duration, creditsCharged: cost } }
    } catch (err) {
      asApiError(err)
    }
  }

  /**
   * A sandbox key's recording read through as a live key's is decoded before transcription (the WAV
   * reader, else ffmpeg), and nothing more: a file that is not audio is refused as it is on a live key.
   * Without ffmpeg nothing but a WAV can be read; the sandbox then answers as it always has.
   */
  async function readLikeLive(path: string, signal: AbortSignal): Promise<void> {
    let heard = false
    try {
      for await (const samples of decodeMedia(path, SAMPLE_RATE, deps.tools, signal)) heard ||= samples.length > 0
    } catch (err) {
      if (err instanceof MediaToolMissingError) return
      asApiError(err)
    }
    if (!heard) asApiError(new MediaUnreadableError('the file holds no audio'))
  }

  /** The sandbox's fixed recording (DECISIONS.md "Sandbox"): nothing heard, nothing charged. */
  const sandboxRecording = async (p: Principal, language: string | null): Promise<Charged<HeardRecording>> => ({
    creditsRemaining: await remaining(p),
    body: { transcript: SANDBOX_TRANSCRIPT, segments: SANDBOX_TIMED_SEGMENTS, language: language ?? 'en', durationSeconds: SANDBOX_DURATION_SECONDS, creditsCharged: credits.quote(p, 'createTranscription', SANDBOX_DURATION_SECONDS), notice: SANDBOX_NOTICE },
  })

  /** A publicly reachable https media URL, fetched under the SSRF rules, transcribed and charged as `createTranscription`. */
  async function transcribeUrl(p: Principal, body: Static<typeof TranscriptionRequest>, decoding?: Decoding): Promise<Charged<HeardRecording>> {
    const language = body.language && body.language !== 'auto' ? body.language : null
    if (p.sandbox) return sandboxRecording(p, language)
    await ensureBalance(p, 'createTranscription', credits.quote(p, 'createTranscription'))
    // No engine installed: say so before fetching anything.
    requireSpeechEngine(deps.asr())
    const timeoutMs = (body.timeoutSeconds ?? 300) * 1000
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      return await inTempDir(async dir => {
        const dest = join(dir, 'media')
        await downloadUrl(body.audioUrl, { dest, maxBytes: MAX_UPLOAD_BYTES, timeoutMs, allowPrivate: deps.allowPrivateUrls, signal })
        return transcribeAndCharge(p, dest, language, signal, undefined, decoding)
      })
    } catch (err) {
      asApiError(err)
    }
  }

  return {
    /**
     * Whether a transcription can start, before its recording is received: 402 when the balance does
     * not cover its first minute, 502 when no speech engine is installed (nothing to check for a
     * sandbox key). The engine that will transcribe is returned.
     */
    async admitTranscription(p: Principal): Promise<AsrEngine> {
      const asr = deps.asr()
      if (p.sandbox) return asr
      await ensureBalance(p, 'createTranscription', credits.quote(p, 'createTranscription'))
      requireSpeechEngine(asr)
      return asr
    },

    /**
     * Transcribes a recording already on this host (an upload streamed to a temporary file), charged
     * as `createTranscription`; sandbox keys get the fixed recording when the file is audio, and
     * the live refusal when it is not. 502 before any work when no speech engine is installed.
     */
    async transcribeLocalFile(p: Principal, path: string, opts: { language: string | null; signal: AbortSignal; speakers?: { hint?: SpeakerHint }; decoding?: Decoding }): Promise<Charged<HeardRecording>> {
      if (p.sandbox) {
        await readLikeLive(path, opts.signal)
        return sandboxRecording(p, opts.language)
      }
      await ensureBalance(p, 'createTranscription', credits.quote(p, 'createTranscription'))
      requireSpeechEngine(deps.asr())
      return transcribeAndCharge(p, path, opts.language, opts.signal, opts.speakers, opts.decoding)
    },

    transcribeUrl,

    async createTranscription(p: Principal, body: Static<typeof TranscriptionRequest>): Promise<Charged<{ transcript: string; language: string; durationSeconds: number | null; creditsCharged: number; notice?: string }>> {
      const { creditsRemaining, body: heard } = await transcribeUrl(p, body)
      return {
        creditsRemaining,
        body: { transcript: heard.transcript, language: heard.language ?? 'und', durationSeconds: heard.durationSeconds, creditsCharged: heard.creditsCharged, ...(heard.notice ? { notice: heard.notice } : {}) },
      }
    },

    async createSummary(p: Principal, body: Static<typeof SummaryRequest>) {
      const styleId: StyleId = body.styleId ?? 'note'
      checkContentPolicy(deps.contentPolicy, body.text)
      if (p.sandbox) return { creditsRemaining: await remaining(p), body: { ...sandboxSummary(styleId), styleId, creditsCharged: credits.quote(p, 'createSummary'), notice: SANDBOX_NOTICE } }
      const cost = credits.quote(p, 'createSummary')
      await ensureBalance(p, 'createSummary', cost)
      try {
        const engine = await deps.llm()
        const out = await summarizeLong(engine, { text: body.text, styleId })
        const left = await charge(p, 'createSummary', cost)
        return { creditsRemaining: left, body: { title: out.title, summary: out.summary, styleId, structuredContent: out.structuredContent, creditsCharged: cost } }
      } catch (err) {
        asApiError(err)
      }
    },

    async createYoutubeSummary(p: Principal, body: Static<typeof YoutubeSummaryRequest>) {
      if (!youtubeVideoId(body.youtubeUrl)) {
        throw new ApiError('invalid_request', `${body.youtubeUrl} is not a YouTube video link; send a link such as https://www.youtube.com/watch?v=<id> or https://youtu.be/<id>.`, {
          details: [{ field: 'youtubeUrl', issue: 'must be a YouTube video URL' }],
        })
      }
      const styleId: StyleId = body.styleId ?? 'note'
      if (p.sandbox) {
        return { creditsRemaining: await remaining(p), body: { ...sandboxSummary(styleId), styleId, youtubeUrl: body.youtubeUrl, durationSeconds: SANDBOX_DURATION_SECONDS, creditsCharged: credits.quote(p, 'createYoutubeSummary', SANDBOX_DURATION_SECONDS), notice: SANDBOX_NOTICE } }
      }
      await ensureBalance(p, 'createYoutubeSummary', credits.quote(p, 'createYoutubeSummary'))
      requireSpeechEngine(deps.asr())
      const signal = AbortSignal.timeout(60 * 60 * 1000)
      try {
        // Duration and balance first: nothing is downloaded for a video the account cannot pay for.
        const info = await deps.ytdlp.info(body.youtubeUrl, { signal })
        if (info.isLive) {
          throw new ApiError('invalid_request', 'The link is a live stream; summarize it once the recording is published.', { details: [{ field: 'youtubeUrl', issue: 'live streams cannot be summarized' }] })
        }
        if (info.durationSeconds !== null && info.durationSeconds > MAX_VIDEO_SECONDS) {
          throw new ApiError('invalid_request', `The video is ${Math.round(info.durationSeconds / 60)} minutes long; links of up to ${MAX_VIDEO_SECONDS / 3600} hours are summarized.`, { details: [{ field: 'youtubeUrl', issue: 'the video is too long' }] })
        }
        const cost = credits.quote(p, 'createYoutubeSummary', info.durationSeconds)
        await ensureBalance(p, 'createYoutubeSummary', cost)
        return await inTempDir(async dir => {
          const audio = await deps.ytdlp.downloadAudio(body.youtubeUrl, dir, { maxBytes: MAX_UPLOAD_BYTES, signal })
          const heard = await transcribeFile(p, audio.path, null, signal)
          const engine = await deps.llm()
          const out = await summarizeLong(engine, { text: heard.transcript, styleId, segments: heard.segments, language: heard.language }, signal)
          const left = await charge(p, 'createYoutubeSummary', cost)
          return {
            creditsRemaining: left,
            body: { title: out.title || info.title, summary: out.summary, styleId, structuredContent: out.structuredContent, creditsCharged: cost, youtubeUrl: body.youtubeUrl, durationSeconds: info.durationSeconds },
          }
        })
      } catch (err) {
        asApiError(err)
      }
    },

    async askNoteQuestion(p: Principal, id: string, question: string): Promise<Charged<{ noteId: string; question: string; answer: string; creditsCharged: number; notice?: string }>> {
      const note = await notes.requireNote(p, id)
      if (note.status === 'Summarizing') {
        throw new ApiError('conflict', `Note ${id} is still processing; ask again when GET /v1/notes/${id}/status shows isComplete true.`)
      }
      if (p.sandbox) return { creditsRemaining: await remaining(p), body: { noteId: id, question, answer: sandboxAnswer(question), creditsCharged: credits.quote(p, 'askNoteQuestion'), notice: SANDBOX_NOTICE } }
      if (!note.original_transcription.trim()) {
        throw new ApiError('conflict', `Note ${id} has no transcript to answer from${note.status === 'Error' ? ' (its processing failed)' : ''}.`)
      }
      const cost = credits.quote(p, 'askNoteQuestion')
      await ensureBalance(p, 'askNoteQuestion', cost)
      try {
        // A transcript without punctuation is asked as sentences cut from its word times, with their times.
        const sentences = timedSentences(note.original_transcription, await notes.namedSegmentsOf(note)) ?? undefined
        const text = sentences ? sentencesText(sentences) : note.original_transcription
        // Only the passages most relevant to the question go to the model, so a two-hour transcript works.
        const passages = retrievePassages(text, question, PASSAGES_FOR_A_QUESTION)
        const engine = await deps.llm()
        const out = await engine.answer({ question, passages, sentences, language: note.language })
        const left = await charge(p, 'askNoteQuestion', cost, id)
        return { creditsRemaining: left, body: { noteId: id, question, answer: out.answer, creditsCharged: cost } }
      } catch (err) {
        asApiError(err)
      }
    },
  }
}
