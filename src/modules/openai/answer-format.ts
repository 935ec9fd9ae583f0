import { toDiarizedJson, toSrt, toTxt, toVtt, TRANSCRIPT_CONTENT_TYPES } from '../../formats/transcript'
import type { TimedWord, TranscriptSegment } from '../../engines/asr/engine'
import type { HeardRecording } from '../processing/service'
import type { OpenAiTranscriptionFields, ResponseFormat } from './model'

const round = (x: number) => Math.round(x * 1000) / 1000

/** An answer in the requested `response_format`: JSON as an object, the other formats as text. */
export interface OpenAiAnswer {
  body: Record<string, unknown> | string
  contentType: string
}

/** UTF-8 bytes over zlib-compressed bytes, as whisper computes it (`len(b) / len(zlib.compress(b))`); high for repetitive text. */
function compressionRatio(text: string): number {
  // node:zlib required here, not at the top: with its streams it cost milliseconds of every cold start
  const { deflateSync } = require('node:zlib') as typeof import('node:zlib')
  const bytes = Buffer.from(text, 'utf8')
  return bytes.length === 0 ? 0 : round(bytes.length / deflateSync(bytes).length)
}

/** A segment with every field of OpenAI's TranscriptionSegment (docs/decisions.md says where each comes from). */
export function verboseSegment(s: TranscriptSegment, id: number) {
  return {
    id,
    seek: s.seek ?? 0,
    start: round(s.start),
    end: round(s.end),
    text: s.text,
    tokens: [] as number[],
    temperature: s.temperature ?? 0,
    avg_logprob: s.avgLogprob ?? 0,
    compression_ratio: compressionRatio(s.text),
    no_speech_prob: 0,
  }
}

/**
 * A word as verbose_json lists it; with `probability` (how sure the engine is, 0 to 1) when the engine
 * says, as faster-whisper and speaches do: a field OpenAI's own API does not send, which its clients
 * ignore.
 */
function openAiWord(w: TimedWord) {
  return { word: w.word, start: round(w.start), end: round(w.end), ...(w.confidence !== undefined ? { probability: round(w.confidence) } : {}) }
}

/** The answer OpenAI's API gives for `response_format`; `translate` for the translations route. */
export function openAiAnswer(heard: HeardRecording, o: OpenAiTranscriptionFields, task: 'transcribe' | 'translate' = 'transcribe'): OpenAiAnswer {
  const format: ResponseFormat = o.response_format ?? 'json'
  const duration = round(heard.durationSeconds ?? heard.segments.at(-1)?.end ?? 0)
  // whisper-1's usage: the recording's duration in whole seconds
  const usage = { type: 'duration', seconds: Math.ceil(duration) }
  switch (format) {
    case 'json':
      return { body: task === 'translate' ? { text: heard.transcript } : { text: heard.transcript, usage }, contentType: TRANSCRIPT_CONTENT_TYPES.json }
    case 'text':
      return { body: toTxt(heard.transcript), contentType: TRANSCRIPT_CONTENT_TYPES.txt }
    case 'srt':
      return { body: toSrt(heard.segments), contentType: TRANSCRIPT_CONTENT_TYPES.srt }
    case 'vtt':
      return { body: toVtt(heard.segments), contentType: TRANSCRIPT_CONTENT_TYPES.vtt }
    case 'diarized_json': {
      // labels in order of first speech; known names replace the first ones
      const names = new Map<string, string>()
      for (const s of heard.segments) {
        const label = s.speaker ?? 'A'
        if (!names.has(label)) names.set(label, o.known_speaker_names?.[names.size] ?? label)
      }
      const segments = heard.segments.map(s => ({ ...s, speaker: names.get(s.speaker ?? 'A')! }))
      return { contentType: TRANSCRIPT_CONTENT_TYPES.json, body: toDiarizedJson(heard.transcript, duration, segments) }
    }
    case 'verbose_json': {
      const granularities = o.timestamp_granularities?.length ? o.timestamp_granularities : ['segment']
      return {
        contentType: TRANSCRIPT_CONTENT_TYPES.json,
        body: {
          task,
          language: heard.language ?? 'und',
          duration,
          text: heard.transcript,
          ...(granularities.includes('segment') ? { segments: heard.segments.map(verboseSegment) } : {}),
          ...(granularities.includes('word') ? { words: heard.segments.flatMap(s => s.words ?? []).map(openAiWord) } : {}),
          usage,
        },
      }
    }
  }
}
