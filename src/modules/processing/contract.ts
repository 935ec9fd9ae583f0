import { operationDefiner } from '../../http/contract'
import { charged } from '../../http/answer'
import { IdParams } from '../../http/schemas'
import { NoteSummaryAccepted, NoteSummaryRequest, SummaryRequest, SummaryResult, TranscriptionRequest, TranscriptionResult, YoutubeSummaryRequest, YoutubeSummaryResult } from './model'
import type { ProcessingJobs } from './pipeline'
import type { ProcessingService } from './service'

const defineOperation = operationDefiner<{ processing: ProcessingService }>()
/** the operations answered by the processing jobs (src/modules/processing/pipeline.ts) */
const defineJobOperation = operationDefiner<{ pipeline: ProcessingJobs }>()

const createTranscription = defineOperation({
  id: 'createTranscription', method: 'POST', path: '/v1/transcriptions', tag: 'Processing',
  summary: 'Transcribe audio from a URL',
  description: 'Fetches a publicly reachable https media URL (private, loopback and link-local addresses are refused) and returns its transcript inline. Charges 1 credit per started minute.',
  scopes: ['transcriptions:write'], credits: '1 per started minute',
  body: TranscriptionRequest,
  responses: { 200: TranscriptionResult },
  errors: ['insufficient_credits', 'upstream_failure'],
  mcp: { openWorld: true },
}, async (body, { principal }, { processing }) => charged(await processing.createTranscription(principal, body)))

const createSummary = defineOperation({
  id: 'createSummary', method: 'POST', path: '/v1/summaries', tag: 'Processing',
  summary: 'Summarize text',
  description: 'Summarizes text in the requested style. Charges 2 credits; content refused by the content policy gives 422.',
  scopes: ['summaries:write'], credits: 2,
  body: SummaryRequest,
  responses: { 200: SummaryResult },
  errors: ['insufficient_credits', 'upstream_failure', 'content_policy'],
}, async (body, { principal }, { processing }) => charged(await processing.createSummary(principal, body)))

const createYoutubeSummary = defineOperation({
  id: 'createYoutubeSummary', method: 'POST', path: '/v1/youtube-summaries', tag: 'Processing',
  summary: 'Summarize a video link',
  description: 'Fetches a YouTube video\'s audio, transcribes and summarizes it. Charges 1 credit per started minute of video.',
  scopes: ['summaries:write'], credits: '1 per started minute',
  body: YoutubeSummaryRequest,
  responses: { 200: YoutubeSummaryResult },
  errors: ['insufficient_credits', 'upstream_failure'],
  mcp: { openWorld: true },
}, async (body, { principal }, { processing }) => charged(await processing.createYoutubeSummary(principal, body)))

const createNoteSummary = defineJobOperation({
  id: 'createNoteSummary', method: 'POST', path: '/v1/notes/:id/summaries', tag: 'Processing',
  summary: 'Summarize a note again',
  description: 'Makes the note\'s summary again in the style given, from its transcript as it is now (after speakers were changed, for instance), without transcribing again: 202 with the note, `Summarizing` until the summary is done (poll `GET /v1/notes/{id}/status`); the transcript stays, and so does a title a person gave (created from text, or set with PATCH /v1/notes/{id}); a title notesvc made (the file name, an earlier summary\'s) is made again from the new summary. Works for a note created from text too. Charges 2 credits, as a text summary (nothing with a sandbox key, whose note gets the fixed sample summary at once); refunded if the summary fails for good, when the note keeps its earlier summary. 409 while the note is processing.',
  scopes: ['notes:read', 'summaries:write'], credits: 2,
  params: IdParams,
  body: NoteSummaryRequest,
  responses: { 202: NoteSummaryAccepted },
  errors: ['insufficient_credits', 'not_found', 'conflict'],
}, async ({ id, styleId }, { principal }, { pipeline }) => charged(await pipeline.createNoteSummary(principal, id, styleId)))

export const processingOperations = [createTranscription, createSummary, createYoutubeSummary, createNoteSummary] as const
