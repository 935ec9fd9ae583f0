import { makeWav } from '../fixtures/wav'
import type { createTestApp } from './app'

/** what the seeding needs of a test app (createTestApp's, or a server fixture's own) */
type TestApp = Pick<ReturnType<typeof createTestApp>, 'app' | 'call' | 'services'>

function check(ok: boolean, what: string, answer: unknown): void {
  if (!ok) throw new Error(`${what}: ${JSON.stringify(answer)}`)
}

/** What a finished note to share holds: its title, summary, two speakers and timed segments. */
export interface NoteContent {
  title: string
  summary: string
  speakers: { label: string; name: string | null }[]
  segments: { start: number; end: number; text: string; speaker: string }[]
}

export const MEETING: NoteContent = {
  title: 'Quarterly planning with Northwind',
  summary: 'We agreed to ship the export feature in March.',
  speakers: [{ label: 'A', name: 'Alice Marsh' }, { label: 'B', name: 'Bob Okafor' }],
  segments: [
    { start: 0, end: 2.5, text: 'Good morning, let us look at the roadmap.', speaker: 'A' },
    { start: 2.5, end: 5, text: 'The export feature can ship in March.', speaker: 'B' },
    { start: 5, end: 8, text: 'Then March it is.', speaker: 'A' },
  ],
}

/**
 * A note made from an uploaded recording (a WAV of `seconds`), finished with `content` as processing
 * would leave it: the recording stored, the transcript with its speakers and times, the summary.
 */
export async function finishedNoteWithRecording(t: TestApp, key: string, content: NoteContent = MEETING, seconds = 8): Promise<{ noteId: string; wav: Uint8Array }> {
  const wav = makeWav({ seconds })
  const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'meeting.wav', contentType: 'audio/wav', fileSize: wav.length } })
  check(up.status === 201, 'POST /v1/uploads', up.body)
  const put = await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit }))
  check(put.status === 200, 'the upload\'s PUT', put.status)
  const noteId: string = up.body.noteId
  const transcript = content.segments.map(s => s.text).join(' ')
  await t.services.notes.saveTranscript(noteId, {
    transcript, language: 'en', segments: content.segments,
    speakers: content.speakers.map(s => ({ label: s.label, name: s.name, engine: null, embedding: null, profileId: null })),
  })
  await t.services.notes.finish(noteId, { summary: content.summary, structuredContent: null, language: 'en' })
  const named = await t.call('PATCH', `/v1/notes/${noteId}`, { token: key, body: { title: content.title } })
  check(named.status === 200, 'PATCH the title', named.body)
  return { noteId, wav }
}

/** Markup and script in a shown field: each would count a run in `window.__runs` (or call alert) if it ever ran. */
const ATTACKS = [
  '<script>window.__runs=(window.__runs||0)+1;alert("script")</script>',
  '"><img src=x onerror="window.__runs=(window.__runs||0)+1;alert(\'img\')">',
  "'><svg onload=\"window.__runs=(window.__runs||0)+1\">",
  'javascript:window.__runs=(window.__runs||0)+1;alert("url")',
]

/** A note whose every field the share page shows is hostile (title, summary, speakers' names, each segment). */
export const HOSTILE: NoteContent = {
  title: `Title ${ATTACKS.join(' ')}`.slice(0, 500),
  summary: `Summary ${ATTACKS.join('\n')} [link](${ATTACKS[3]})`,
  speakers: [{ label: 'A', name: ATTACKS[1]! }, { label: 'B', name: ATTACKS[0]! }],
  segments: ATTACKS.map((text, i) => ({ start: i * 2, end: i * 2 + 2, text, speaker: i % 2 ? 'B' : 'A' })),
}
