import { toDiarizedJson, toSpeakerTxt, toSrt, toTxt, toVtt, TRANSCRIPT_CONTENT_TYPES } from '../../formats/transcript'
import { ApiError } from '../../http/errors'
import { displayName, namedSegments, paragraphs, wordsOf, type NamedSegment, type Transcript } from '../../transcript/transcript'
import type { NoteTranscriptFormat, TranscriptVerbose } from './model'
import { speakerRef, type NoteTranscriptSpeaker } from './stored-transcript'

/** A note's transcript as the export reads it. */
export interface NoteTranscriptSource {
  noteId: string
  title: string
  type: string
  language: string | null
  transcript: Transcript<NoteTranscriptSpeaker>
}

export interface TranscriptExport {
  /** an object for the JSON formats, text for the others */
  body: Record<string, unknown> | string
  contentType: string
  extension: string
}

const round = (x: number) => Math.round(x * 1000) / 1000

/**
 * The transcript of a note in the requested format (`getNoteTranscript?format=`). `json` is the
 * interface's Transcript, as without the parameter. A transcript without times (a note created from
 * text) is one segment per paragraph in `verbose_json` and one paragraph per block in `txt`, its times
 * null: none are made up. SubRip, WebVTT and `diarized_json` (OpenAI's shape, whose segments all have
 * times) need times, so those formats are refused with 409.
 */
export function exportTranscript(t: NoteTranscriptSource, format: NoteTranscriptFormat): TranscriptExport {
  const segments = namedSegments(t.transcript, { keepLabel: true })
  const names = t.transcript.speakers.map(speakerRef)
  const speakers = names.length ? { speakers: names } : {}
  const text = t.transcript.text
  switch (format) {
    case 'json':
      return { body: { noteId: t.noteId, transcript: text, language: t.language, ...speakers }, contentType: TRANSCRIPT_CONTENT_TYPES.json, extension: 'json' }
    case 'verbose_json':
      return { body: verbose(t, segments, speakers), contentType: TRANSCRIPT_CONTENT_TYPES.json, extension: 'json' }
    case 'diarized_json': {
      if (!segments) throw untimed(t, format)
      // every segment has a speaker in OpenAI's shape: a recording that was not diarized is one speaker, "Speaker A"
      const named = segments.map(s => ({ ...s, speaker: s.speaker ?? displayName('A', null) }))
      return { body: toDiarizedJson(text, segments.at(-1)?.end ?? 0, named), contentType: TRANSCRIPT_CONTENT_TYPES.json, extension: 'json' }
    }
    case 'txt': {
      const body = segments?.some(s => s.speaker) ? toSpeakerTxt(segments) : segments ? toTxt(text) : toTxt(paragraphs(text).join('\n\n'))
      return { body, contentType: TRANSCRIPT_CONTENT_TYPES.txt, extension: 'txt' }
    }
    case 'srt':
    case 'vtt': {
      if (!segments) throw untimed(t, format)
      return format === 'srt'
        ? { body: toSrt(segments), contentType: TRANSCRIPT_CONTENT_TYPES.srt, extension: 'srt' }
        : { body: toVtt(segments), contentType: TRANSCRIPT_CONTENT_TYPES.vtt, extension: 'vtt' }
    }
  }
}

function verbose(t: NoteTranscriptSource, segments: NamedSegment[] | null, speakers: { speakers?: ReturnType<typeof speakerRef>[] }): TranscriptVerbose {
  const { text, segments: timed } = t.transcript
  if (!timed || !segments) {
    return {
      noteId: t.noteId, transcript: text, language: t.language, timed: false, duration: null,
      segments: paragraphs(text).map((text, id) => ({ id, start: null, end: null, text })),
    }
  }
  const words = wordsOf(timed)
  const last = timed.at(-1)
  return {
    noteId: t.noteId, transcript: text, language: t.language, timed: true,
    duration: last ? round(last.end) : null,
    segments: segments.map((s, id) => ({ id, start: round(s.start), end: round(s.end), text: s.text, ...(s.speaker ? { speaker: s.speaker, speakerId: s.speakerId } : {}), ...(s.timing ? { timing: s.timing } : {}) })),
    ...speakers,
    ...(words.length ? { words: words.map(w => ({ word: w.word, start: round(w.start), end: round(w.end), ...(typeof w.confidence === 'number' ? { confidence: w.confidence } : {}) })) } : {}),
  }
}

function untimed(t: NoteTranscriptSource, format: 'srt' | 'vtt' | 'diarized_json'): ApiError {
  const why = t.type === 'import'
    ? 'was created from text, so its transcript has no times'
    : 'was transcribed before notesvc kept transcript times, so they are not known'
  const need = format === 'diarized_json' ? 'diarized_json needs a start and end for every segment' : `${format.toUpperCase()} subtitles need a start and end for every cue`
  return new ApiError('conflict', `Note ${t.noteId} ${why}, and ${need}. Ask for format=txt or format=verbose_json (one segment per paragraph, without times) instead.`)
}
