/**
 * Issue 23's meeting through the default engines, end to end through the API: the script of
 * test/fixtures/meeting-voices.ts (four people, two decisions, three action items with owners and
 * dates) spoken by espeak-ng in four voices, uploaded, transcribed by PocketSphinx, diarized by the
 * default engine and summarized by the builtin engine in the meeting-notes style; then a question
 * about an action item's owner. Prints what a person would read, and the speakers found against the
 * script's (speaker error: the share of speech given to the wrong person, with the 0.25 s collar).
 *
 *   bun run bench/meeting.ts
 *   NOTESVC_DIARIZATION=off bun run bench/meeting.ts     # the same without speakers (before)
 *   bun run bench/meeting.ts --corrected                 # then corrected by edits and summarized again
 *
 * With --corrected the transcript is then corrected through the API as a person holding the script
 * would (bench/lib/meeting-correction.ts: pieces of a turn merged, two turns split, each segment's
 * words and speaker set, the speakers named) and the summary made again (POST /v1/notes/{id}/summaries).
 */
import { createTestApp } from '../test/helpers/app'
import { MEETING_TRUTH, MEETING_VOICES, meetingWav } from '../test/fixtures/meeting-voices'
import { correctMeeting } from './lib/meeting-correction'
import { diarizationError } from './lib/der'
import { before, report } from './lib/cues'
import { transcriptCues } from '../src/formats/transcript'

const diarization = process.env.NOTESVC_DIARIZATION ?? 'auto'
const t = createTestApp({ env: { NOTESVC_WORKERS: '2', NOTESVC_DIARIZATION: diarization, NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
await t.services.workers.start()
const token = await t.key({ plan: 'pro' })
const { wav, turns } = meetingWav()
console.log(`meeting: ${(turns.at(-1)!.end).toFixed(1)} s, ${turns.length} turns by ${new Set(turns.map(x => x.speaker)).size} voices (espeak-ng); diarization ${diarization}`)

const started = performance.now()
const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'meeting.wav', contentType: 'audio/wav', fileSize: wav.length, styleId: 'meeting-notes' } })).body
await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
for (;;) {
  const s = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
  if (s.isComplete || s.hasError) break
  await Bun.sleep(200)
}
console.log(`upload → Done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)

const note = (await t.call('GET', `/v1/notes/${up.noteId}`, { token })).body
const meeting = note.structuredContent['meeting-notes'] ?? {}
console.log(`title:     ${note.title}`)
console.log(`summary:   ${note.summary}`)
console.log(`attendees: ${JSON.stringify(meeting.attendees)}   (script: ${MEETING_TRUTH.attendees.join(', ')})`)
console.log(`decisions: ${JSON.stringify(meeting.decisions, null, 1)}`)
console.log(`actions:   ${JSON.stringify(meeting.actionItems, null, 1)}`)

const speakers = (await t.call('GET', `/v1/notes/${up.noteId}/speakers`, { token })).body.data
console.log(`\nspeakers found: ${speakers.length} (script: 4): ${speakers.map((s: { displayName: string; seconds: number }) => `${s.displayName} ${s.seconds} s`).join(', ')}`)
const verbose = (await t.call('GET', `/v1/notes/${up.noteId}/transcript?format=verbose_json`, { token })).body
if (speakers.length) {
  const index = (names: string[]) => (name: string) => names.indexOf(name)
  const ref = turns.map(x => ({ start: x.start, end: x.end, speaker: index(MEETING_TRUTH.attendees)(x.speaker) }))
  const hyp = verbose.segments.filter((s: { speakerId?: string }) => s.speakerId).map((s: { start: number; end: number; speakerId: string }) => ({ start: s.start, end: s.end, speaker: s.speakerId.charCodeAt(0) - 65 }))
  // the transcript's segments: what a reader sees (PocketSphinx's times, not the engine's turns)
  console.log(`diarization error of the transcript's speakers against the script (0.25 s collar): ${(100 * diarizationError(ref, hyp).der).toFixed(1)} %`)
}
// the subtitles of this meeting: one cue per engine segment (before issue 23) and as notesvc cuts them
const timed = verbose.segments.map((s: { start: number; end: number; text: string; speaker?: string }) => ({ start: s.start, end: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) }))
console.log()
report('cues: one per segment (before)', before(timed))
report('cues: as the SRT export cuts them', transcriptCues(timed, { namePrefix: true }))
const txt = (await t.call('GET', `/v1/notes/${up.noteId}/transcript?format=txt`, { token })).text
console.log(`\ntranscript (txt):\n${txt}`)

for (const question of ['Who will order the servers?', 'Who will do the release?']) {
  const a = (await t.call('POST', `/v1/notes/${up.noteId}/questions`, { token, body: { question } })).body
  const sentences = (a.answer.match(/[.!?](\s|$)/g) ?? []).length
  console.log(`Q: ${question}\nA: ${a.answer}   (${sentences} sentence${sentences === 1 ? '' : 's'})`)
}
if (process.argv.includes('--corrected')) {
  const { edits, kinds } = await correctMeeting(t, token, up.noteId, turns.map((x, i) => ({ ...x, text: MEETING_VOICES[i]!.text })))
  const stale = (await t.call('GET', `/v1/notes/${up.noteId}`, { token })).body
  console.log(`\ncorrected by ${edits} edits through the API (${JSON.stringify(kinds)}); the summary before it is made again: summaryStale ${stale.summaryStale}`)
  console.log(`transcript (txt) corrected:\n${(await t.call('GET', `/v1/notes/${up.noteId}/transcript?format=txt`, { token })).text}`)
  const again = await t.call('POST', `/v1/notes/${up.noteId}/summaries`, { token, body: { styleId: 'meeting-notes' } })
  console.log(`POST /v1/notes/${up.noteId}/summaries {"styleId":"meeting-notes"} → ${again.status}`)
  for (;;) {
    const s = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
    if (s.isComplete || s.hasError) break
    await Bun.sleep(200)
  }
  const corrected = (await t.call('GET', `/v1/notes/${up.noteId}`, { token })).body
  const m = corrected.structuredContent['meeting-notes'] ?? {}
  console.log(`title:     ${corrected.title}`)
  console.log(`summary:   ${corrected.summary}`)
  console.log(`attendees: ${JSON.stringify(m.attendees)}   (script: ${MEETING_TRUTH.attendees.join(', ')})`)
  console.log(`decisions: ${JSON.stringify(m.decisions, null, 1)}   (script: ${JSON.stringify(MEETING_TRUTH.decisions)})`)
  console.log(`actions:   ${JSON.stringify(m.actionItems, null, 1)}   (script: ${JSON.stringify(MEETING_TRUTH.actionItems)})`)
}
await t.services.workers.stop()
process.exit(0)
