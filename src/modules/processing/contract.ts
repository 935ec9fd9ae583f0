import { operationDefiner } from '../../http/contract'
import { charged } from '../../http/answer'
import { SummaryRequest, SummaryResult, TranscriptionRequest, TranscriptionResult, YoutubeSummaryRequest, YoutubeSummaryResult } from './model'
import type { ProcessingService } from './service'

const defineOperation = operationDefiner<{ processing: ProcessingService }>()

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

export const processingOperations = [createTranscription, createSummary, createYoutubeSummary] as const
