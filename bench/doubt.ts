/**
 * Issue 31's "output that admits doubt", end to end through the API with the default engines
 * (PocketSphinx, the builtin diarization and summarizer): issue 23's four-voice meeting
 * (test/fixtures/meeting-voices.ts), a two-person recording (bench/lib/two-person.ts: a LibriVox
 * reader and an espeak-ng host) and the one-voice meeting of test/fixtures/spoken-meeting.ts, each
 * uploaded in the meeting-notes style. For each:
 *
 * - how many of the stored words carry the engine's confidence (the note's segments, as stored);
 * - BEFORE: the stored transcript summarized with the confidences ignored (what notesvc gave until now);
 * - AFTER: the note as the API gives it (the doubt rules), what they dropped, and the title with the
 *   recording's file name given (the pipeline does not pass it yet);
 * - CORRECTED: the script itself as the transcript (each turn's true words, confidence 1, the speakers
 *   named: what a transcript corrected by edits will look like) summarized again.
 *
 *   bun run bench/doubt.ts
 */
import { createBuiltinEngine, type ActionItem, type MeetingNotes } from '../src/engines/llm/builtin'
import type { TranscriptSegment } from '../src/engines/asr/engine'
import type { SummaryOutput } from '../src/engines/llm/engine'
import { summarizeLong } from '../src/engines/llm/summarize'
import { MEETING_TRUTH, MEETING_VOICES, meetingWav } from '../test/fixtures/meeting-voices'
import { MEETING_SCRIPT } from '../test/fixtures/spoken-meeting'
import { wavFromPcm } from '../test/fixtures/wav'
import { createTestApp } from '../test/helpers/app'
import { tempDir } from '../test/helpers/process'
import { spokenMeeting } from './lib/heard'
import { HOST, READER, twoPersonRecording, type SpokenTurn } from './lib/two-person'

const builtin = createBuiltinEngine()
const t = createTestApp({ env: { NOTESVC_WORKERS: '2', NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
await t.services.workers.start()
const token = await t.key({ plan: 'pro' })
const dir = tempDir('notesvc-bench-doubt-')

interface Recording {
  name: string
  fileName: string
  wav: Uint8Array
  /** who said what when, from the script */
  turns: SpokenTurn[]
  /** the names and facts a reader of the script would list */
  truth: { attendees: string[]; decisions: string[]; owners: string[] }
}

const { wav: meeting, turns: meetingTurns } = meetingWav()
const twoPerson = twoPersonRecording(dir.path)
const oneVoice = spokenMeeting(dir.path)
const wavOf = (samples: Float32Array) => wavFromPcm(Int16Array.from(samples, x => Math.round(Math.max(-1, Math.min(1, x)) * 32767)), 16_000)
const recordings: Recording[] = [
  {
    name: "issue 23's meeting, four espeak-ng voices",
    fileName: 'planning-meeting.wav',
    wav: meeting,
    turns: meetingTurns.map((x, i) => ({ ...x, text: MEETING_VOICES[i]!.text })),
    truth: { attendees: MEETING_TRUTH.attendees, decisions: MEETING_TRUTH.decisions, owners: MEETING_TRUTH.actionItems.map(a => a.owner) },
  },
  {
    name: 'two people: a LibriVox reader and an espeak-ng host',
    fileName: 'reading-group.wav',
    wav: wavOf(twoPerson.samples),
    turns: twoPerson.turns,
    truth: { attendees: [HOST, READER], decisions: [], owners: ['Anna'] },
  },
  {
    name: 'the spoken meeting of test/fixtures/spoken-meeting.ts, one espeak-ng voice',
    fileName: 'weekly-sync.wav',
    wav: wavOf(oneVoice.samples),
    turns: oneVoice.turns,
    // MEETING_SCRIPT: "Maria, Tom and Lars are here today, and Anna joins us"; "Tom will…", "Lars will…", "Maria will…"
    truth: { attendees: ['Maria', 'Tom', 'Lars', 'Anna'], decisions: ['move the launch to Friday', 'buy two new servers in March'], owners: ['Tom', 'Lars', 'Maria'] },
  },
]
if (!MEETING_SCRIPT.includes('Maria will write a plan')) throw new Error('test/fixtures/spoken-meeting.ts changed: update the truth above')

async function uploaded(r: Recording): Promise<string> {
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: r.fileName, contentType: 'audio/wav', fileSize: r.wav.length, styleId: 'meeting-notes' } })).body
  await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: r.wav as unknown as BodyInit, headers: up.headers }))
  await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
  for (;;) {
    const s = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
    if (s.isComplete || s.hasError) return up.noteId
    await Bun.sleep(200)
  }
}

const notesOf = (out: { structuredContent: Record<string, unknown> }) => out.structuredContent['meeting-notes'] as MeetingNotes & { summary: string }
const action = (a: ActionItem) => `${a.task} (owner ${a.owner ?? 'none'}, due ${a.due ?? 'none'})`

function show(label: string, out: Pick<SummaryOutput, 'title' | 'summary' | 'structuredContent'>): void {
  const m = notesOf(out)
  console.log(`${label}\n  title:        ${out.title}\n  summary:      ${out.summary}`)
  console.log(`  attendees:    ${JSON.stringify(m.attendees)}`)
  console.log(`  decisions:    ${m.decisions.length ? m.decisions.map(d => `\n    - ${d}`).join('') : 'none'}`)
  console.log(`  action items: ${m.actionItems.length ? m.actionItems.map(a => `\n    - ${action(a)}`).join('') : 'none'}`)
}

/**
 * The script as an edited transcript: each turn's text as a person types it (a capital, a full stop:
 * the LibriVox references have neither), its words spread over the turn, heard for sure.
 */
function corrected(turns: SpokenTurn[]): TranscriptSegment[] {
  return turns.map(turn => {
    const text = `${turn.text.charAt(0).toUpperCase()}${turn.text.slice(1)}`.replace(/([^.?!])$/, '$1.')
    const words = text.split(/\s+/).map(w => w.replace(/[^\p{L}\p{N}'’-]/gu, '')).filter(Boolean)
    const step = (turn.end - turn.start) / words.length
    return {
      start: turn.start, end: turn.end, text, ...(turn.speaker ? { speaker: turn.speaker } : {}),
      words: words.map((word, i) => ({ word, start: turn.start + i * step, end: turn.start + (i + 1) * step, confidence: 1 })),
    }
  })
}

try {
  for (const r of recordings) {
    console.log(`\n=== ${r.name} (${r.fileName}, ${r.turns.at(-1)!.end.toFixed(1)} s)`)
    const started = performance.now()
    const id = await uploaded(r)
    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    const row = (await t.services.notes.getById(id))!
    const stored = (await t.services.notes.namedSegmentsOf(row)) ?? []
    const words = stored.flatMap(s => s.words ?? [])
    console.log(`upload → ${note.status} in ${((performance.now() - started) / 1000).toFixed(1)} s; stored: ${words.filter(w => typeof w.confidence === 'number').length} of ${words.length} words with a confidence, ${words.filter(w => (w.confidence ?? 1) < 0.7).length} below 0.7`)

    const ignoring = stored.map(s => ({ ...s, words: s.words?.map(({ confidence: _, ...w }) => w) }))
    const before = await summarizeLong(builtin, { text: row.original_transcription ?? '', styleId: 'meeting-notes', segments: ignoring })
    show('\nBEFORE (confidences ignored):', before)
    show('\nAFTER (the note through the API):', note)
    const [b, a] = [notesOf(before), notesOf(note)]
    const dropped = <T>(xs: T[], ys: T[], key: (x: T) => string) => xs.filter(x => !ys.some(y => key(y) === key(x)))
    console.log(`  dropped:      ${dropped(b.decisions, a.decisions, d => d).length} decisions, ${dropped(b.actionItems, a.actionItems, action).length} action items, owners ${JSON.stringify(dropped(b.actionItems.map(x => x.owner).filter(Boolean), a.actionItems.map(x => x.owner).filter(Boolean), o => o!))}, attendees ${JSON.stringify(dropped(b.attendees, a.attendees, n => n))}`)
    const named = await summarizeLong(builtin, { text: row.original_transcription ?? '', styleId: 'meeting-notes', segments: stored, fileName: r.fileName })
    console.log(`  title with the file name given: ${named.title}`)

    const script = corrected(r.turns)
    const again = await summarizeLong(builtin, { text: script.map(s => s.text).join(' '), styleId: 'meeting-notes', segments: script, fileName: r.fileName })
    show('\nCORRECTED (the script, confidence 1, speakers named) summarized again:', again)
    const m = notesOf(again)
    const owners = m.actionItems.map(x => x.owner).filter((o): o is string => o !== null)
    console.log(`  against the script: attendees ${m.attendees.filter(n => r.truth.attendees.includes(n)).length}/${r.truth.attendees.length}, decisions ${r.truth.decisions.filter(d => m.decisions.some(x => x.toLowerCase().includes(d.toLowerCase()))).length}/${r.truth.decisions.length}, action items with their owner ${r.truth.owners.filter(o => owners.includes(o)).length}/${r.truth.owners.length}, owners not in the script: ${JSON.stringify(owners.filter(o => !r.truth.owners.includes(o)))}`)
    const everyOwner = [b, a, m].flatMap(x => x.actionItems.map(y => y.owner))
    console.log(`  "Homeless" as an owner: before ${b.actionItems.some(x => x.owner === 'Homeless') ? 'yes' : 'no'}, after ${a.actionItems.some(x => x.owner === 'Homeless') ? 'yes' : 'no'} (owners seen: ${JSON.stringify([...new Set(everyOwner)])})`)
  }
} finally {
  await t.services.workers.stop()
  dir.remove()
}
process.exit(0)
