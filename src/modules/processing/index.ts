import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documentedWithBody } from '../../http/openapi'
import { IdParams } from '../../http/schemas'
import { Answer, QuestionRequest } from '../notes/model'
import { SummaryRequest, SummaryResult, TranscriptionRequest, TranscriptionResult, YoutubeSummaryRequest, YoutubeSummaryResult } from './model'
import type { Charged, ProcessingService } from './service'

/** Every charging response carries `X-Credits-Remaining` beside `creditsCharged` in the body. */
async function charged<T>(set: { headers: Record<string, unknown> }, pending: Promise<Charged<T>>): Promise<T> {
  const r = await pending
  set.headers['x-credits-remaining'] = String(r.creditsRemaining)
  return r.body
}

const CHARGING_ERRORS = ['insufficient_credits', 'upstream_failure'] as const

export function processingRoutes(deps: { guard: ReturnType<typeof authGuard>; processing: ProcessingService }) {
  const { processing } = deps
  return new Elysia({ name: 'processing-routes' })
    .use(deps.guard)
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
