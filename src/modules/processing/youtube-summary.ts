import type { Static } from 'elysia'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/admission'
import type { CreditsService } from '../credits/service'
import type { AsrEngine } from '../../engines/asr/engine'
import type { LlmEngine, StyleId } from '../../engines/llm/engine'
import { summarizeLong } from '../../engines/llm/summarize'
import type { Ytdlp } from '../../engines/media/ytdlp'
import type { YoutubeSummaryRequest } from './model'
import { MAX_UPLOAD_BYTES } from '../uploads/model'
import type { Charging } from './charging'
import { asApiError, requireSpeechEngine } from './provider-errors'
import { inTempDir, type createRecordingTranscription } from './recording-transcription'
import { SANDBOX_DURATION_SECONDS, SANDBOX_NOTICE, sandboxSummary } from './sandbox'

const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com', 'youtu.be', 'www.youtube-nocookie.com', 'youtube-nocookie.com'])
/** Longest video a link may summarize: 6 hours. */
const MAX_VIDEO_SECONDS = 6 * 3600

/** The YouTube video id of a watch, short, embed, shorts or live link; null for anything else. */
function youtubeVideoId(raw: string): string | null {
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

/**
 * `createYoutubeSummary`: the video's length and the balance checked first (nothing is downloaded for
 * a video the account cannot pay for), then its audio downloaded with yt-dlp, transcribed, summarized
 * and charged.
 */
export function createYoutubeSummary(deps: {
  credits: CreditsService
  llm: () => Promise<LlmEngine>
  asr: () => AsrEngine
  ytdlp: Ytdlp
  transcribeFile: ReturnType<typeof createRecordingTranscription>['transcribeFile']
}, charging: Charging) {
  const { credits } = deps
  const { remaining, ensureBalance, charge } = charging

  return async function createYoutubeSummary(p: Principal, body: Static<typeof YoutubeSummaryRequest>) {
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
        const heard = await deps.transcribeFile(p, audio.path, null, signal)
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
  }
}
