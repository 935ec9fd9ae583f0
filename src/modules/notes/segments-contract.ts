/**
 * The segment operations of issue 31 (split, merge, reassign a word range) and find and replace, each
 * defined once: route, OpenAPI entry, MCP tool and `GET /v1` line follow from here.
 */
import { t } from 'elysia'
import { Answer } from '../../http/answer'
import { operationDefiner } from '../../http/contract'
import { Integer } from '../../http/schemas'
import { editBy } from './contract'
import { SegmentParams, TranscriptVerbose } from './model'
import type { ReplacementsService } from './replacements'
import type { SegmentEditsService } from './segment-edits'
import { transcriptETag } from './transcript-edits'

const defineOperation = operationDefiner<{ segmentEdits: SegmentEditsService; replacements: ReplacementsService }>()

const WordIndex = (description: string) => Integer({ minimum: 0, maximum: 1_000_000, description, error: 'must be a word number from 0' })
const Label = (description: string) => t.String({ minLength: 1, maxLength: 8, description, error: 'must be a speaker label of 1 to 8 characters (A, B, …)' })

const SplitSegmentRequest = t.Object({
  word: WordIndex('the word (from 0, the segment\'s text split at spaces) the second segment starts at: 1 to the number of words less one'),
}, { additionalProperties: false, title: 'SplitSegmentRequest', error: 'send word (where the second segment starts), and no other fields' })

const MergeSegmentsRequest = t.Object({
  speaker: t.Optional(Label('who says the merged segment (default: the first segment\'s speaker); a new label (a capital letter, then up to 7 capitals or digits) adds an unnamed speaker')),
}, { additionalProperties: false, title: 'MergeSegmentsRequest', error: 'send {} or a speaker, and no other fields' })

const ReassignWordsRequest = t.Object({
  fromWord: WordIndex('the first word of the range (from 0)'),
  toWord: WordIndex('the last word of the range (included)'),
  speaker: Label('who said them: a speaker of the note, or a new label (a capital letter, then up to 7 capitals or digits) that adds an unnamed speaker'),
}, { additionalProperties: false, title: 'ReassignWordsRequest', error: 'send fromWord, toWord and speaker, and no other fields' })

const replaceFields = {
  find: t.String({ minLength: 1, maxLength: 1000, description: 'the text to find, within one segment (Unicode NFC; a match never spans two segments)', error: 'must be the text to find, 1 to 1000 characters' }),
  replace: t.String({ maxLength: 10_000, description: 'what to put instead, as written (no patterns); empty removes the matches', error: 'must be the replacement, at most 10000 characters' }),
  matchCase: t.Optional(t.Boolean({ default: false, description: 'only matches of the same case (default false: any case)' })),
  wholeWord: t.Optional(t.Boolean({ default: true, description: 'only matches that are whole words, no letter or digit on either side (default true)' })),
}

const ReplacementPreviewRequest = t.Object(replaceFields, { additionalProperties: false, title: 'ReplacementPreviewRequest', error: 'send find and replace (and optionally matchCase, wholeWord), and no other fields' })
const ReplacementRequest = t.Object({
  ...replaceFields,
  segments: t.Optional(t.Array(Integer({ minimum: 0, maximum: 999_999 }), { minItems: 1, maxItems: 100_000, uniqueItems: true, description: 'replace only in these segments (as the preview lists them); default: every match', error: 'must list segment numbers from 0, each once' })),
}, { additionalProperties: false, title: 'ReplacementRequest', error: 'send find and replace (and optionally matchCase, wholeWord, segments), and no other fields' })

const ReplacementPreview = t.Object({
  count: Integer({ description: 'how many matches would be replaced' }),
  matches: t.Array(t.Object({
    segment: Integer({ description: 'the segment (its id in verbose_json)' }),
    before: t.String({ description: 'the segment\'s text now' }),
    after: t.String({ description: 'its text with the matches replaced' }),
  }, { title: 'ReplacementMatch' })),
}, { title: 'ReplacementPreview' })

const ReplacementResult = t.Object({
  count: Integer({ description: 'how many matches were replaced' }),
  segments: t.Array(Integer(), { description: 'the segments changed' }),
  version: Integer({ description: 'the transcript\'s version now (also the ETag); unchanged when nothing matched' }),
}, { title: 'ReplacementResult' })

const WRITE_ERRORS = ['invalid_request', 'not_found', 'conflict', 'precondition_failed'] as const
const ANSWER = 'Answers the note\'s whole transcript as `verbose_json` (segment indices after the change), with its new version as the ETag. With `If-Match` (the transcript\'s ETag), 412 when it changed since; one revision, one `note.transcript_edited` audit record and one `note.updated` webhook event. 409 while the note is processing or for a note without timed segments (created from text).'

const splitNoteSegment = defineOperation({
  id: 'splitNoteSegment', method: 'POST', path: '/v1/notes/:id/segments/:index/split', tag: 'Notes',
  summary: 'Split a segment in two at a word',
  description: `Segment \`index\` becomes two, the second starting at its word \`word\` (from 0: the segment's text split at spaces); both keep the speaker. The first ends where word \`word - 1\` ends, the second starts where word \`word\` starts (in proportion to the letters for a segment without word times, marked \`timing: proportional\`). ${ANSWER}`,
  scopes: ['notes:write'], credits: 0,
  params: SegmentParams,
  body: SplitSegmentRequest,
  responses: { 200: TranscriptVerbose },
  errors: [...WRITE_ERRORS],
}, async ({ id, index, word }, caller, { segmentEdits }) => {
  const r = await segmentEdits.split(caller.principal, id, editBy(caller, 'splitNoteSegment'), Number(index), word)
  return new Answer(r.transcript, { headers: { etag: transcriptETag(r.version) } })
})

const mergeNoteSegments = defineOperation({
  id: 'mergeNoteSegments', method: 'POST', path: '/v1/notes/:id/segments/:index/merge', tag: 'Notes',
  summary: 'Merge a segment with the next',
  description: `Segments \`index\` and \`index + 1\` become one: texts joined with one space, words concatenated, from the first's start to the second's end, said by the first's speaker unless \`speaker\` is sent. 404 when \`index\` is the last segment. ${ANSWER}`,
  scopes: ['notes:write'], credits: 0,
  params: SegmentParams,
  body: MergeSegmentsRequest,
  responses: { 200: TranscriptVerbose },
  errors: [...WRITE_ERRORS],
}, async ({ id, index, speaker }, caller, { segmentEdits }) => {
  const r = await segmentEdits.merge(caller.principal, id, editBy(caller, 'mergeNoteSegments'), Number(index), speaker)
  return new Answer(r.transcript, { headers: { etag: transcriptETag(r.version) } })
})

const reassignNoteWords = defineOperation({
  id: 'reassignNoteWords', method: 'POST', path: '/v1/notes/:id/segments/:index/reassign', tag: 'Notes',
  summary: 'Give a range of words to another speaker',
  description: `Words \`fromWord\` to \`toWord\` (both included, from 0) of segment \`index\` were said by \`speaker\`: the segment becomes up to three (the words before, the range, the words after), each timed at its words' boundaries. \`speaker\` may be a new label (a capital letter, then up to 7 capitals or digits, such as \`C\`): an unnamed speaker is added, to be named with PATCH /v1/notes/{id}/speakers/{label}. What each speaker said, the subtitles and the summary's staleness follow. ${ANSWER}`,
  scopes: ['notes:write'], credits: 0,
  params: SegmentParams,
  body: ReassignWordsRequest,
  responses: { 200: TranscriptVerbose },
  errors: [...WRITE_ERRORS],
}, async ({ id, index, fromWord, toWord, speaker }, caller, { segmentEdits }) => {
  const r = await segmentEdits.reassign(caller.principal, id, editBy(caller, 'reassignNoteWords'), Number(index), fromWord, toWord, speaker)
  return new Answer(r.transcript, { headers: { etag: transcriptETag(r.version) } })
})

const IdOnly = t.Object({ id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }) })

const previewNoteReplacement = defineOperation({
  id: 'previewNoteReplacement', method: 'POST', path: '/v1/notes/:id/replacements/preview', tag: 'Notes',
  summary: 'Preview a find and replace',
  description: 'What replacing `find` with `replace` across the transcript would change: how many matches, and each segment with its text before and after. Nothing is written. Matching is Unicode-aware (NFC), in any case unless `matchCase`, whole words only unless `wholeWord` is false; a match never spans two segments. A note created from text is matched by paragraph (numbered as verbose_json numbers them). 409 while the note is processing.',
  // a POST that writes nothing: counted as a read
  role: 'viewer', scopes: ['notes:read'], credits: 0, rateClass: 'read',
  params: IdOnly,
  body: ReplacementPreviewRequest,
  responses: { 200: ReplacementPreview },
  errors: ['invalid_request', 'not_found', 'conflict'],
}, ({ id, ...body }, caller, { replacements }) => replacements.preview(caller.principal, id, body))

const replaceInNote = defineOperation({
  id: 'replaceInNote', method: 'POST', path: '/v1/notes/:id/replacements', tag: 'Notes',
  summary: 'Find and replace across a transcript',
  description: 'Replaces every match of `find` (as the preview lists them; only those in `segments` when sent) in one edit: one revision, one `note.transcript_edited` audit record, one `note.updated` webhook event; the changed segments\' words are timed again by forced alignment to their audio, as a corrected segment\'s are; the text, search, subtitles and what each speaker said follow, and the summary is marked stale. 400 and nothing written when a segment would be left without words, or the note over its 2000000 characters. With no match nothing is written and the current version is answered. With `If-Match`, 412 when the transcript changed since.',
  scopes: ['notes:write'], credits: 0,
  params: IdOnly,
  body: ReplacementRequest,
  responses: { 200: ReplacementResult },
  errors: [...WRITE_ERRORS],
}, async ({ id, ...body }, caller, { replacements }) => {
  const r = await replacements.apply(caller.principal, id, editBy(caller, 'replaceInNote'), body)
  return new Answer(r, { headers: { etag: transcriptETag(r.version) } })
})

export const segmentsOperations = [splitNoteSegment, mergeNoteSegments, reassignNoteWords, previewNoteReplacement, replaceInNote] as const
