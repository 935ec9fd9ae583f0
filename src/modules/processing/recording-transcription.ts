import type { Static } from 'elysia'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Principal } from '../../http/admission'
import type { CreditsService } from '../credits/service'
import { SAMPLE_RATE, type AsrEngine, type TranscriptSegment } from '../../engines/asr/engine'
import { decodeMedia, measuredDuration } from '../../engines/media/decode'
import { MediaToolMissingError, MediaUnreadableError } from '../../engines/media/errors'
import type { MediaTools } from '../../engines/media/ffmpeg'
import { downloadUrl } from '../../engines/media/url-fetch'
import { transcribeMedia } from '../../engines/asr/chunked'
import { diarizeAlongside, readyEngine } from '../../engines/diarization/alongside'
import { labelSpeakers } from '../../engines/diarization/assign'
import type { Diarization, DiarizationEngine, SpeakerHint } from '../../engines/diarization/engine'
import type { AsrScheduler } from '../../engines/asr/scheduler'
import type { TranscriptionRequest } from './model'
import { MAX_UPLOAD_BYTES } from '../uploads/model'
import type { Charged, Charging } from './charging'
import { asApiError, requireSpeechEngine } from './provider-errors'
import { SANDBOX_DURATION_SECONDS, SANDBOX_NOTICE, SANDBOX_TIMED_SEGMENTS, SANDBOX_TRANSCRIPT } from './sandbox'

/** whisper.cpp's initial prompt and translate task (OpenAI's `prompt` and translations route) */
export type Decoding = { prompt?: string; translate?: boolean }

/** A recording transcribed and charged: what createTranscription and the OpenAI-compatible route answer from. */
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

export interface RecordingTranscriptionDeps {
  credits: CreditsService
  asr: () => AsrEngine
  tools: MediaTools
  allowPrivateUrls: boolean
  /** the process's ASR chunk slots, shared with the upload jobs (NOTESVC_ASR_SLOTS) */
  scheduler?: AsrScheduler
  /** the diarization engine (NOTESVC_DIARIZATION), or null when off: used when a caller asks for speakers */
  diarization?: () => DiarizationEngine | null
  /** a stereo call split by channel, when its channels are different people */
  channels?: (path: string, signal: AbortSignal) => Promise<Diarization | null>
  log?: { warn(msg: string, fields?: Record<string, unknown>): void }
}

export async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'notesvc-work-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * A recording transcribed on request (a file on this host or a URL), in the process's ASR slots,
 * diarized beside it when speakers are asked for, and charged as `createTranscription`.
 */
export function createRecordingTranscription(deps: RecordingTranscriptionDeps, charging: Charging) {
  const { credits } = deps
  const { remaining, ensureBalance, charge } = charging

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
    transcribeFile,
    transcribeUrl,

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
  }
}
