import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented, documentedWithBody, noBody } from '../../http/openapi'
import { IdParams } from '../../http/schemas'
import { Answer, QuestionRequest } from '../notes/model'
import { CreateUploadRequest, SummaryRequest, SummaryResult, TranscriptionRequest, TranscriptionResult, Upload, UploadAccepted, YoutubeSummaryRequest, YoutubeSummaryResult } from './model'
import type { Charged, ProcessingService } from './service'

/** Every charging response carries `X-Credits-Remaining` beside `creditsCharged` in the body. */
function charged<T>(set: { headers: Record<string, unknown> }, r: Charged<T>): T {
  set.headers['x-credits-remaining'] = String(r.creditsRemaining)
  return r.body
}

const CHARGING_ERRORS = ['insufficient_credits', 'upstream_failure'] as const

export function processingRoutes(deps: { guard: ReturnType<typeof authGuard>; processing: ProcessingService }) {
  const { processing } = deps
  return new Elysia({ name: 'processing-routes' })
    .use(deps.guard)
    .post('/v1/uploads', ({ principal, body, set }) => {
      const upload = processing.createUpload(requirePrincipal(principal), body)
      set.status = 201
      return upload
    }, {
      ...documentedWithBody('createUpload', ['payload_too_large', 'unsupported_media_type'], CreateUploadRequest, { 201: Upload }),
    })
    .post('/v1/uploads/:id/complete', ({ principal, params, set }) => {
      const r = processing.completeUpload(requirePrincipal(principal), params.id)
      set.status = r.accepted ? 202 : 200
      return charged(set, r)
    }, {
      params: IdParams,
      ...noBody,
      ...documented('completeUpload', [...CHARGING_ERRORS, 'not_found', 'conflict'], { 200: UploadAccepted, 202: UploadAccepted }),
    })
    .post('/v1/transcriptions', ({ principal, body, set }) => charged(set, processing.createTranscription(requirePrincipal(principal), body)), {
      ...documentedWithBody('createTranscription', [...CHARGING_ERRORS], TranscriptionRequest, { 200: TranscriptionResult }),
    })
    .post('/v1/summaries', ({ principal, body, set }) => charged(set, processing.createSummary(requirePrincipal(principal), body)), {
      ...documentedWithBody('createSummary', [...CHARGING_ERRORS, 'content_policy'], SummaryRequest, { 200: SummaryResult }),
    })
    .post('/v1/youtube-summaries', ({ principal, body, set }) => charged(set, processing.createYoutubeSummary(requirePrincipal(principal), body)), {
      ...documentedWithBody('createYoutubeSummary', [...CHARGING_ERRORS], YoutubeSummaryRequest, { 200: YoutubeSummaryResult }),
    })
    .post('/v1/notes/:id/questions', ({ principal, params, body, set }) => charged(set, processing.askNoteQuestion(requirePrincipal(principal), params.id, body.question)), {
      params: IdParams,
      ...documentedWithBody('askNoteQuestion', [...CHARGING_ERRORS, 'not_found', 'conflict'], QuestionRequest, { 200: Answer }),
    })
}
