import { t } from 'elysia'
import { defineOperation } from '../../http/contract'
import { OpenAiDiarizedTranscription, OpenAiTranscription, OpenAiTranscriptionForm, OpenAiTranscriptionToolArguments, OpenAiVerboseTranscription } from './model'

export const createAudioTranscription = defineOperation({
  id: 'createAudioTranscription', method: 'POST', path: '/v1/audio/transcriptions', tag: 'Processing',
  summary: 'Transcribe an uploaded recording (OpenAI-compatible)',
  description: 'OpenAI\'s audio transcription API: a multipart form with the recording as `file` (streamed to disk, at most 5 GB), `model` (accepted; the configured engine transcribes), `language`, `prompt`, `response_format` (`json`, `text`, `srt`, `vtt`, `verbose_json`, `diarized_json`), `temperature`, `timestamp_granularities[]` (`segment`, `word`; `word` needs `verbose_json`) and `known_speaker_names[]` (with `diarized_json`: names for the speakers in the order they are first heard). Charged as createTranscription: 1 credit per started minute (usage operation `createTranscription`); sandbox keys get the fixed sample transcript. Errors use the envelope, whose `error.message` and `error.type` OpenAI clients show.',
  scopes: ['transcriptions:write'], credits: '1 per started minute',
  multipartBody: OpenAiTranscriptionForm,
  responses: { 200: t.Union([OpenAiTranscription, OpenAiVerboseTranscription, OpenAiDiarizedTranscription], { title: 'OpenAiTranscriptionResponse', description: 'The transcript as OpenAI answers: `{"text"}` for json, OpenAiVerboseTranscription for verbose_json, OpenAiDiarizedTranscription for diarized_json' }) },
  textResponses: ['text/plain', 'application/x-subrip', 'text/vtt'],
  errors: ['insufficient_credits', 'payload_too_large', 'upstream_failure'],
  // a tool call cannot carry a multipart file: base64 `audio`, or an https `audioUrl` as createTranscription takes it
  mcp: { openWorld: true, arguments: OpenAiTranscriptionToolArguments },
})

export const openAiOperations = [createAudioTranscription] as const
