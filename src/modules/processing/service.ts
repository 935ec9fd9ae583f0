import type { Static } from 'elysia'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/auth'
import type { NotesService } from '../notes/service'
import type { UsageService } from '../usage/service'
import { type SummaryRequest, type TranscriptionRequest, type YoutubeSummaryRequest } from './model'
import { SANDBOX_DURATION_SECONDS, SANDBOX_NOTICE, SANDBOX_TRANSCRIPT, sandboxAnswer, sandboxSummary } from './sandbox'

const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com', 'youtu.be', 'www.youtube-nocookie.com', 'youtube-nocookie.com'])

/** A charging response: the body and the balance for `X-Credits-Remaining`. */
export interface Charged<T> {
  body: T
  creditsRemaining: number
}

export type ProcessingService = ReturnType<typeof createProcessingService>

function notYetAvailable(what: string): never {
  throw new ApiError('upstream_failure', `${what} is not available on this server yet: no engine for it is installed in this version of notesvc. Sandbox keys (svc_test_) return sample output meanwhile.`)
}

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

export function createProcessingService(deps: {
  notes: NotesService
  usage: UsageService
}) {
  const { notes, usage } = deps
  const remaining = (p: Principal) => usage.balance(p.accountId).totalRemaining

  return {
    createTranscription(p: Principal, body: Static<typeof TranscriptionRequest>) {
      if (!p.sandbox) notYetAvailable('Transcription from a URL')
      return {
        creditsRemaining: remaining(p),
        body: { transcript: SANDBOX_TRANSCRIPT, language: body.language && body.language !== 'auto' ? body.language : 'en', durationSeconds: SANDBOX_DURATION_SECONDS, creditsCharged: 0, notice: SANDBOX_NOTICE },
      }
    },

    createSummary(p: Principal, body: Static<typeof SummaryRequest>) {
      if (!p.sandbox) notYetAvailable('Summarization')
      const styleId = body.styleId ?? 'note'
      return { creditsRemaining: remaining(p), body: { ...sandboxSummary(styleId), styleId, creditsCharged: 0, notice: SANDBOX_NOTICE } }
    },

    createYoutubeSummary(p: Principal, body: Static<typeof YoutubeSummaryRequest>) {
      if (!youtubeVideoId(body.youtubeUrl)) {
        throw new ApiError('invalid_request', `${body.youtubeUrl} is not a YouTube video link; send a link such as https://www.youtube.com/watch?v=<id> or https://youtu.be/<id>.`, {
          details: [{ field: 'youtubeUrl', issue: 'must be a YouTube video URL' }],
        })
      }
      if (!p.sandbox) notYetAvailable('Video-link summaries')
      const styleId = body.styleId ?? 'note'
      return { creditsRemaining: remaining(p), body: { ...sandboxSummary(styleId), styleId, youtubeUrl: body.youtubeUrl, durationSeconds: SANDBOX_DURATION_SECONDS, creditsCharged: 0, notice: SANDBOX_NOTICE } }
    },

    askNoteQuestion(p: Principal, id: string, question: string) {
      const note = notes.requireNote(p, id)
      if (note.status === 'Summarizing') {
        throw new ApiError('conflict', `Note ${id} is still processing; ask again when GET /v1/notes/${id}/status shows isComplete true.`)
      }
      if (!p.sandbox) notYetAvailable('Questions about notes')
      return { creditsRemaining: remaining(p), body: { noteId: id, question, answer: sandboxAnswer(question), creditsCharged: 0 } }
    },
  }
}
