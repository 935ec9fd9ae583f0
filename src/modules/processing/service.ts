import type { Static } from 'elysia'
import type { Clock } from '../../clock'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/auth'
import type { NotesService } from '../notes/service'
import type { UsageService } from '../usage/service'
import { uploadUrl } from '../../storage/signed-url'
import { MAX_UPLOAD_BYTES, type CreateUploadRequest, type SummaryRequest, type TranscriptionRequest, type YoutubeSummaryRequest } from './model'
import { SANDBOX_DURATION_SECONDS, SANDBOX_NOTICE, SANDBOX_TRANSCRIPT, sandboxAnswer, sandboxSummary, type StyleIdValue } from './sandbox'

const UPLOAD_TTL_MS = 60 * 60 * 1000
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
  clock: Clock
  notes: NotesService
  usage: UsageService
  publicUrl: string
  uploadSecret: string
}) {
  const { notes, usage, clock } = deps
  const remaining = (p: Principal) => usage.balance(p.accountId).totalRemaining

  return {
    createUpload(p: Principal, body: Static<typeof CreateUploadRequest>) {
      const type = body.contentType.toLowerCase().split(';')[0]!.trim()
      if (!/^(audio|video)\/[a-z0-9.+-]+$/.test(type)) {
        throw new ApiError('unsupported_media_type', `contentType ${body.contentType} is not supported; upload audio (audio/*) or video (video/*).`, {
          details: [{ field: 'contentType', issue: 'must be an audio/* or video/* MIME type' }],
        })
      }
      if (body.fileSize !== undefined && body.fileSize > MAX_UPLOAD_BYTES) {
        throw new ApiError('payload_too_large', `fileSize ${body.fileSize} exceeds the limit of ${MAX_UPLOAD_BYTES} bytes (5 GB); split the recording or compress it.`, {
          details: [{ field: 'fileSize', issue: `must be at most ${MAX_UPLOAD_BYTES}` }],
        })
      }
      const note = notes.createPending(p, {
        title: body.fileName.replace(/\.[A-Za-z0-9]{1,5}$/, ''),
        type: type.startsWith('video/') ? 'video' : 'audio',
        styleId: body.styleId ?? 'note',
        language: body.language && body.language !== 'auto' ? body.language : null,
        source: 'upload',
        stage: 'awaiting_upload',
      })
      const expiresAt = new Date(clock.now().getTime() + UPLOAD_TTL_MS)
      return {
        noteId: note.id,
        uploadUrl: uploadUrl(deps.publicUrl, deps.uploadSecret, note.id, expiresAt),
        method: 'PUT' as const,
        headers: { 'Content-Type': body.contentType },
        filePath: `uploads/${note.id}`,
        contentType: body.contentType,
        expiresAt: expiresAt.toISOString(),
        next: `PUT the file to uploadUrl with these headers, then POST ${deps.publicUrl}/v1/uploads/${note.id}/complete`,
        ...(p.sandbox ? { notice: `${SANDBOX_NOTICE} Completing this upload does not need the file.` } : {}),
      }
    },

    completeUpload(p: Principal, id: string): Charged<{ noteId: string; status: string; creditsCharged: number; durationSeconds: number | null; poll: string; alreadyCompleted: boolean }> & { accepted: boolean } {
      const note = notes.requireNote(p, id)
      if (note.source !== 'upload') throw new ApiError('not_found', `No upload with id ${id} exists; start one with POST /v1/uploads.`)
      const poll = `${deps.publicUrl}/v1/notes/${id}/status`
      if (note.processing_stage !== 'awaiting_upload') {
        return { accepted: false, creditsRemaining: remaining(p), body: { noteId: id, status: note.status, creditsCharged: 0, durationSeconds: null, poll, alreadyCompleted: true } }
      }
      if (!p.sandbox) notYetAvailable('Transcription of uploads')
      const fixed = sandboxSummary(note.style_id as StyleIdValue)
      notes.finish(id, { summary: fixed.summary, transcript: SANDBOX_TRANSCRIPT, structuredContent: fixed.structuredContent, language: 'en' })
      return { accepted: true, creditsRemaining: remaining(p), body: { noteId: id, status: 'Done', creditsCharged: 0, durationSeconds: SANDBOX_DURATION_SECONDS, poll, alreadyCompleted: false } }
    },

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
