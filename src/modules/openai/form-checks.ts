import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { AsrEngine } from '../../engines/asr/engine'
import { ApiError, detailsFromValueErrors, type ErrorDetail } from '../../http/errors'
import { lazyCheck } from '../../http/schemas'
import { textDetails } from '../../http/text-check'
import { OpenAiTranscriptionFields, OpenAiTranslationFields } from './model'

/**
 * Fields OpenAI's form has that change nothing here: `stream` (only false: the answer comes whole)
 * and `chunking_strategy` (notesvc always cuts long recordings at quiet points). `include[]` asks for
 * token log probabilities, which neither engine gives here: refused with a 400, not ignored. Any
 * other unknown field is refused, so a misspelt `response_format` is not silently ignored.
 */
const IGNORED_FIELDS = new Set(['stream', 'chunking_strategy'])
const INCLUDE_FIELDS = ['include[]', 'include']
const GRANULARITY_FIELDS = ['timestamp_granularities[]', 'timestamp_granularities']
const SPEAKER_NAME_FIELDS = ['known_speaker_names[]', 'known_speaker_names']
const SPEAKER_REFERENCE_FIELDS = ['known_speaker_references[]', 'known_speaker_references']

export const fieldsCheck = lazyCheck(() => TypeCompiler.Compile(OpenAiTranscriptionFields))
export const translationCheck = lazyCheck(() => TypeCompiler.Compile(OpenAiTranslationFields))

export function invalid(details: ErrorDetail[], hint = ''): ApiError {
  return new ApiError('invalid_request', `The form failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.${hint}`, { details })
}

/** The checked options of a request, from the multipart fields (each field's text as sent). */
export function formOptions(fields: Map<string, string[]>, check: typeof fieldsCheck | typeof translationCheck = fieldsCheck): OpenAiTranscriptionFields {
  const options: Record<string, unknown> = {}
  const details: ErrorDetail[] = []
  for (const [name, values] of fields) {
    if (GRANULARITY_FIELDS.includes(name)) {
      options.timestamp_granularities = [...((options.timestamp_granularities as string[] | undefined) ?? []), ...values]
    } else if (SPEAKER_NAME_FIELDS.includes(name)) {
      options.known_speaker_names = [...((options.known_speaker_names as string[] | undefined) ?? []), ...values]
    } else if (SPEAKER_REFERENCE_FIELDS.includes(name)) {
      details.push({ field: 'known_speaker_references[]', issue: 'reference recordings are not matched here; send known_speaker_names[] alone: the names go to the speakers in the order they are first heard' })
    } else if (name === 'stream') {
      if (values.some(v => v !== 'false')) details.push({ field: 'stream', issue: 'streaming is not offered; send false or leave it out' })
    } else if (INCLUDE_FIELDS.includes(name)) {
      details.push({ field: 'include[]', issue: values.every(v => v === 'logprobs') ? 'logprobs are not available: neither speech engine here (whisper.cpp through its Node binding, PocketSphinx) gives token log probabilities; leave include[] out' : 'only logprobs exists, and it is not available here; leave include[] out' })
    } else if (IGNORED_FIELDS.has(name)) {
      continue
    } else if (values.length > 1) {
      details.push({ field: name, issue: 'was sent more than once' })
    } else if (name === 'temperature') {
      options.temperature = values[0]!.trim() === '' ? Number.NaN : Number(values[0])
    } else {
      options[name] = values[0]
    }
  }
  if (!check.Check(options)) {
    for (const d of detailsFromValueErrors('body', [...check.Errors(options)])) {
      const field = d.field.replace(/^timestamp_granularities(\.\d+)?$/, 'timestamp_granularities[]').replace(/^known_speaker_names(\.\d+)?$/, 'known_speaker_names[]')
      if (!details.some(x => x.field === field)) {
        details.push({ field, issue: d.issue.startsWith('Unexpected property') || /additional/i.test(d.issue) ? 'is not a field of this form' : d.issue })
      }
    }
  }
  // U+0000 and lone surrogates: none of these fields is stored, but they are refused as in every JSON
  // body and in the MCP tool's arguments (src/http/text-check.ts), so the form and the tool answer alike
  for (const d of textDetails(options, 'body')) if (!details.some(x => x.field === d.field || x.field === `${d.field.split('.')[0]}[]`)) details.push(d)
  if (details.length) throw invalid(details)
  return options as OpenAiTranscriptionFields
}

/** `word` granularity needs `verbose_json` (as OpenAI's API has it) and an engine that gives word times. */
export function checkGranularities(o: OpenAiTranscriptionFields, engine: { name: string; wordTimes?: boolean }, sandbox: boolean) {
  if (!o.timestamp_granularities?.includes('word')) return
  const format = o.response_format ?? 'json'
  if (format !== 'verbose_json') {
    throw invalid([{ field: 'timestamp_granularities[]', issue: 'word needs response_format verbose_json' }], ` Word times come only in verbose_json: send response_format=verbose_json with timestamp_granularities[]=word (response_format is ${format}).`)
  }
  if (!sandbox && !engine.wordTimes) {
    throw invalid([{ field: 'timestamp_granularities[]', issue: `this server's speech engine (${engine.name}) does not give word times` }], ' Ask for segment granularity, or have the operator run PocketSphinx (NOTESVC_ASR=pocketsphinx), which gives word times. Nothing was charged.')
  }
}

/** A language other than English, asked of an engine that hears English only: 400 before anything is charged. */
export function checkLanguage(o: OpenAiTranscriptionFields, engine: AsrEngine, sandbox: boolean) {
  const language = o.language?.toLowerCase()
  if (sandbox || !language || language === 'auto' || /^en(-|$)/.test(language) || !engine.englishOnly?.()) return
  throw invalid(
    [{ field: 'language', issue: `this server's speech engine (${engine.name}) hears English only` }],
    ` Leave language out or send en; for ${o.language} the operator runs whisper with a multilingual model (NOTESVC_ASR=whisper NOTESVC_WHISPER_MODEL=base, not a .en model). Nothing was charged.`,
  )
}
