import { t } from 'elysia'
import type { Static } from '@sinclair/typebox'
import { operationDefiner } from '../../http/contract'
import { Answer } from '../../http/answer'
import type { Charged } from '../processing/service'
import type { OpenAiAnswer, OpenAiService } from './service'
import { OpenAiDiarizedTranscription, OpenAiModelList, OpenAiTranscription, OpenAiTranscriptionForm, OpenAiTranscriptionToolArguments, OpenAiTranslationForm, OpenAiTranslationToolArguments, OpenAiVerboseTranscription, OpenAiVerboseTranslation } from './model'

const defineOperation = operationDefiner<{ openai: OpenAiService }>()

/**
 * A charged answer in the requested `response_format`, its content type said (JSON as OpenAI sends it,
 * or text); over MCP a text one is `{ format, contentType, content }`.
 */
function inOpenAiFormat<B>(r: Charged<OpenAiAnswer>, format: string | undefined): Answer<B | string> {
  return new Answer(r.body.body as B | string, { creditsRemaining: r.creditsRemaining, contentType: r.body.contentType, textFields: { format } })
}

const TranscriptionResponse = t.Union([OpenAiTranscription, OpenAiVerboseTranscription, OpenAiDiarizedTranscription], { title: 'OpenAiTranscriptionResponse', description: 'The transcript as OpenAI answers: `{"text"}` for json, OpenAiVerboseTranscription for verbose_json, OpenAiDiarizedTranscription for diarized_json' })
const TranslationResponse = t.Union([OpenAiTranscription, OpenAiVerboseTranslation], { title: 'OpenAiTranslationResponse', description: 'The English text as OpenAI answers: `{"text"}` for json, OpenAiVerboseTranslation for verbose_json' })

const createAudioTranscription = defineOperation({
  id: 'createAudioTranscription', method: 'POST', path: '/v1/audio/transcriptions', tag: 'Processing',
  summary: 'Transcribe an uploaded recording (OpenAI-compatible)',
  description: 'OpenAI\'s audio transcription API: a multipart form with the recording as `file` (streamed to disk, at most 5 GB), `model` (accepted; the configured engine transcribes), `language` (400 for a language other than English when the engine hears English only), `prompt` (whisper.cpp\'s initial prompt), `response_format` (`json`, `text`, `srt`, `vtt`, `verbose_json`, `diarized_json`), `temperature`, `timestamp_granularities[]` (`segment`, `word`; `word` needs `verbose_json`) and `known_speaker_names[]` (with `diarized_json`: names for the speakers in the order they are first heard); `include[]=logprobs` is refused (400: neither engine gives token probabilities). A file that is not audio is a 400 naming `file`. Charged as createTranscription: 1 credit per started minute (usage operation `createTranscription`); sandbox keys get the fixed sample transcript. Errors use the envelope, whose `error.message` and `error.type` OpenAI clients show.',
  scopes: ['transcriptions:write'], credits: '1 per started minute',
  multipartBody: OpenAiTranscriptionForm,
  responses: { 200: TranscriptionResponse },
  textResponses: ['text/plain', 'application/x-subrip', 'text/vtt'],
  errors: ['insufficient_credits', 'payload_too_large', 'upstream_failure'],
  // a tool call cannot carry a multipart file: base64 `audio`, or an https `audioUrl` as createTranscription takes it
  mcp: { openWorld: true, arguments: OpenAiTranscriptionToolArguments },
}, async (input, { principal }, { openai }) =>
  // over HTTP the form is streamed from the request (no body is read before the handler)
  inOpenAiFormat<Static<typeof TranscriptionResponse>>(input.form ? await openai.transcribeUpload(principal, input.form) : await openai.transcribeToolCall(principal, input.arguments), input.arguments?.response_format))

const createAudioTranslation = defineOperation({
  id: 'createAudioTranslation', method: 'POST', path: '/v1/audio/translations', tag: 'Processing',
  summary: 'Translate an uploaded recording into English (OpenAI-compatible)',
  description: 'OpenAI\'s audio translation API: whisper\'s translate task, speech in any language whisper knows written in English. The multipart form of createAudioTranscription without `language`, granularities or speakers: `file`, `model` (accepted), `prompt` (whisper.cpp\'s initial prompt), `response_format` (`json`, `text`, `srt`, `vtt`, `verbose_json`) and `temperature`. Needs the whisper engine: with PocketSphinx (English only, no translate task) a 400 says so before anything is read or charged. Charged as createTranscription: 1 credit per started minute.',
  scopes: ['transcriptions:write'], credits: '1 per started minute',
  multipartBody: OpenAiTranslationForm,
  responses: { 200: TranslationResponse },
  textResponses: ['text/plain', 'application/x-subrip', 'text/vtt'],
  errors: ['insufficient_credits', 'payload_too_large', 'upstream_failure'],
  // as createAudioTranscription's tool: base64 `audio` or an https `audioUrl`
  mcp: { openWorld: true, arguments: OpenAiTranslationToolArguments },
}, async (input, { principal }, { openai }) =>
  inOpenAiFormat<Static<typeof TranslationResponse>>(input.form ? await openai.translateUpload(principal, input.form) : await openai.transcribeToolCall(principal, input.arguments, 'translate'), input.arguments?.response_format))

const listModels = defineOperation({
  id: 'listModels', method: 'GET', path: '/v1/models', tag: 'Processing',
  summary: 'The speech models this server runs (OpenAI-compatible)',
  description: 'OpenAI\'s model list: `whisper-1` (the configured speech engine, which every `model` value on the audio routes uses), each installed whisper.cpp model by name, `pocketsphinx` when it is the engine, and `gpt-4o-transcribe-diarize` when diarization is on. Needs a credential that may transcribe. Free.',
  scopes: ['transcriptions:write'], credits: 0,
  responses: { 200: OpenAiModelList },
  errors: [],
}, (_, __, { openai }) => openai.listModels())

export const openAiOperations = [createAudioTranscription, createAudioTranslation, listModels] as const
