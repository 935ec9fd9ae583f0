import { t, type Static } from 'elysia'
import { Integer } from '../../http/schemas'
import { Language } from '../processing/model'

/** OpenAI's `response_format` values. */
const RESPONSE_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json', 'diarized_json'] as const
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number]
const GRANULARITIES = ['segment', 'word'] as const

const ResponseFormatField = t.Union(RESPONSE_FORMATS.map(f => t.Literal(f)), { default: 'json', description: '`json` ({"text"}), `text`, `srt`, `vtt`, `verbose_json` (segments, and words when asked for) or `diarized_json` (segments with their speaker, by the server\'s diarization engine)', error: `must be one of ${RESPONSE_FORMATS.join(', ')}` })
const Granularities = t.Array(t.Union(GRANULARITIES.map(g => t.Literal(g)), { error: 'each must be segment or word' }), { uniqueItems: true, description: '`segment` and/or `word`; `word` needs `response_format=verbose_json`', error: 'each must be segment or word' })
const Model = t.String({ minLength: 1, maxLength: 100, description: 'accepted for compatibility (`whisper-1`, `gpt-4o-transcribe`, …); the server\'s configured speech engine transcribes', error: 'must be a model name of 1 to 100 characters' })
const Prompt = t.String({ maxLength: 4000, description: 'text the recording resembles (names, spelling): whisper.cpp\'s initial prompt; PocketSphinx does not use it (see docs/decisions.md)', error: 'must be a string of at most 4000 characters' })
const Temperature = t.Number({ minimum: 0, maximum: 1, description: 'accepted for compatibility (0 to 1); the engines decode greedily (see docs/decisions.md)', error: 'must be a number from 0 to 1' })
/** OpenAI's translations take no `diarized_json`. */
const TRANSLATION_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const
const TranslationFormatField = t.Union(TRANSLATION_FORMATS.map(f => t.Literal(f)), { default: 'json', description: '`json` ({"text"}), `text`, `srt`, `vtt` or `verbose_json` (segments)', error: `must be one of ${TRANSLATION_FORMATS.join(', ')}` })

const KnownSpeakerNames = t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 4, description: 'names for the speakers of `diarized_json`, given in the order the speakers are first heard (up to 4, as OpenAI); the rest keep letters', error: 'must be up to 4 names of 1 to 100 characters' })

/** OpenAI's options, the same on the multipart form and on the MCP tool. */
const OPTIONS = {
  known_speaker_names: t.Optional(KnownSpeakerNames),
  model: t.Optional(Model),
  language: t.Optional(Language),
  prompt: t.Optional(Prompt),
  response_format: t.Optional(ResponseFormatField),
  temperature: t.Optional(Temperature),
  timestamp_granularities: t.Optional(Granularities),
}

/** The text fields of the multipart form, as checked after the body has been read (file apart). */
export const OpenAiTranscriptionFields = t.Object(
  OPTIONS,
  { additionalProperties: false },
)
export type OpenAiTranscriptionFields = Static<typeof OpenAiTranscriptionFields>

/** The text fields of the translations form (OpenAI's: no language, no granularities). */
export const OpenAiTranslationFields = t.Object(
  { model: t.Optional(Model), prompt: t.Optional(Prompt), response_format: t.Optional(TranslationFormatField), temperature: t.Optional(Temperature) },
  { additionalProperties: false },
)

export const OpenAiTranslationForm = t.Object(
  {
    file: t.String({ format: 'binary', description: 'the recording (any audio or video ffmpeg reads), at most 5 GB; streamed to disk' }),
    model: t.Optional(Model),
    prompt: t.Optional(Prompt),
    response_format: t.Optional(TranslationFormatField),
    temperature: t.Optional(Temperature),
  },
  { title: 'OpenAiTranslationRequest', description: 'OpenAI\'s `POST /v1/audio/translations` form: the speech, in any language whisper knows, translated into English.' },
)

/** The multipart body as the OpenAPI document publishes it. */
export const OpenAiTranscriptionForm = t.Object(
  {
    file: t.String({ format: 'binary', description: 'the recording (any audio or video ffmpeg reads), at most 5 GB; streamed to disk' }),
    model: t.Optional(Model),
    language: t.Optional(t.String({ description: 'ISO 639-1 code such as en; omit to detect' })),
    prompt: t.Optional(Prompt),
    response_format: t.Optional(ResponseFormatField),
    temperature: t.Optional(Temperature),
    'timestamp_granularities[]': t.Optional(Granularities),
    'known_speaker_names[]': t.Optional(KnownSpeakerNames),
  },
  { title: 'OpenAiTranscriptionRequest', description: 'OpenAI\'s `POST /v1/audio/transcriptions` form.' },
)

const DurationUsage = t.Object(
  { type: t.Literal('duration'), seconds: t.Number({ description: 'the recording\'s duration, in seconds rounded up (what the request was charged for)' }) },
  { description: 'as OpenAI reports it for whisper-1' },
)

export const OpenAiTranscription = t.Object(
  { text: t.String(), usage: t.Optional(DurationUsage) },
  { title: 'OpenAiTranscription', description: '`response_format=json`: the transcript, as OpenAI answers.' },
)

/** A segment of verbose_json, every field of OpenAI's TranscriptionSegment (docs/decisions.md says where each comes from). */
const VerboseSegment = t.Object({
  id: Integer(),
  seek: Integer({ description: 'start of the audio chunk the segment was heard in, in 10 ms frames' }),
  start: t.Number(),
  end: t.Number(),
  text: t.String(),
  tokens: t.Array(Integer(), { description: 'always empty: neither engine exposes its token ids' }),
  temperature: t.Number({ description: 'the decoding temperature: 0 (greedy), 0.4 when whisper decoded the chunk again after a repetition loop' }),
  avg_logprob: t.Number({ description: 'PocketSphinx: mean natural log of its word posteriors; whisper: 0 (the binding gives no token probabilities)' }),
  compression_ratio: t.Number({ description: 'the text\'s UTF-8 bytes divided by its zlib-compressed bytes, as whisper computes it' }),
  no_speech_prob: t.Number({ description: '0: neither engine gives it, and a segment exists only where speech was heard' }),
})

export const OpenAiVerboseTranscription = t.Object(
  {
    task: t.Literal('transcribe'),
    language: t.String({ description: 'ISO 639-1 code of the language heard or given (`und` when unknown)' }),
    duration: t.Number({ description: 'seconds' }),
    text: t.String(),
    segments: t.Optional(t.Array(VerboseSegment, { description: 'with granularity `segment` (the default)' })),
    words: t.Optional(t.Array(t.Object({
      word: t.String(), start: t.Number(), end: t.Number(),
      probability: t.Optional(t.Number({ minimum: 0, maximum: 1, description: 'beyond OpenAI\'s fields, as faster-whisper and speaches send it: how sure the engine is of the word, 0 to 1, when it says (PocketSphinx\'s word posterior, whisper\'s token probabilities, a remote server\'s own)' })),
    }), { description: 'with granularity `word`' })),
    usage: DurationUsage,
  },
  { title: 'OpenAiVerboseTranscription', description: '`response_format=verbose_json`, as OpenAI answers.' },
)

export const OpenAiVerboseTranslation = t.Object(
  {
    task: t.Literal('translate'),
    language: t.String({ description: 'ISO 639-1 code of the language heard (`und` when unknown)' }),
    duration: t.Number({ description: 'seconds' }),
    text: t.String({ description: 'the English translation' }),
    segments: t.Array(VerboseSegment),
    usage: DurationUsage,
  },
  { title: 'OpenAiVerboseTranslation', description: '`response_format=verbose_json` on translations, as OpenAI answers.' },
)

export const OpenAiModel = t.Object(
  {
    id: t.String({ description: '`whisper-1` (the configured speech engine), each installed whisper.cpp model by its name (`base.en`), `pocketsphinx` when it is the engine, `gpt-4o-transcribe-diarize` when diarization is on' }),
    object: t.Literal('model'),
    created: Integer({ description: 'Unix seconds: the model file\'s time, else when this server started' }),
    owned_by: t.String({ description: '`notesvc`' }),
  },
  { title: 'OpenAiModel' },
)

export const OpenAiModelList = t.Object(
  { object: t.Literal('list'), data: t.Array(OpenAiModel) },
  { title: 'OpenAiModelList', description: 'The models this server can run, in OpenAI\'s list shape; any `model` value is accepted by the audio routes, which use the configured engine.' },
)

/**
 * The MCP tool's arguments: a tool call cannot carry a multipart file, so the recording comes as
 * base64 `audio` (up to 25 MB decoded, OpenAI's own limit for this route) or as `audioUrl`, fetched
 * under createTranscription's rules (https, public addresses only).
 */
export const MAX_MCP_AUDIO_BYTES = 25 * 1024 * 1024
export const OpenAiTranscriptionToolArguments = t.Object(
  {
    audio: t.Optional(t.String({ maxLength: Math.ceil(MAX_MCP_AUDIO_BYTES / 3) * 4 + 4, contentEncoding: 'base64', description: 'the recording, base64-encoded (at most 25 MB decoded); give this or audioUrl', error: 'must be base64 of at most 25 MB' })),
    audioUrl: t.Optional(t.String({ format: 'uri', maxLength: 2048, description: 'publicly reachable https URL of the recording; give this or audio', error: 'must be an absolute https URL' })),
    ...OPTIONS,
  },
  { additionalProperties: false },
)
export type OpenAiTranscriptionToolArguments = Static<typeof OpenAiTranscriptionToolArguments>

/** The translation tool's arguments: the recording as the transcription tool takes it, and OpenAI's translation options. */
export const OpenAiTranslationToolArguments = t.Object(
  {
    audio: OpenAiTranscriptionToolArguments.properties.audio,
    audioUrl: OpenAiTranscriptionToolArguments.properties.audioUrl,
    ...OpenAiTranslationFields.properties,
  },
  { additionalProperties: false },
)

export const OpenAiDiarizedTranscription = t.Object(
  {
    task: t.Literal('transcribe'),
    duration: t.Number({ description: 'seconds' }),
    text: t.String(),
    segments: t.Array(t.Object({
      type: t.Literal('transcript.text.segment'),
      id: t.String(),
      start: t.Number(),
      end: t.Number(),
      text: t.String(),
      speaker: t.String({ description: 'A, B, … in order of first speech, or the name from known_speaker_names' }),
    })),
    usage: t.Object({ type: t.Literal('duration'), seconds: t.Number() }),
  },
  { title: 'OpenAiDiarizedTranscription', description: '`response_format=diarized_json`, as OpenAI answers.' },
)
