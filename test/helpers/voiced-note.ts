import { makeWav } from '../fixtures/wav'
import type { createTestApp } from './app'

type TestApp = Pick<ReturnType<typeof createTestApp>, 'app' | 'call' | 'services'>

/**
 * A finished note made from an uploaded recording whose one speaker (A) has a voice print, then named
 * `speakerName`: naming it remembers the voice as a speaker profile and makes a transcript revision.
 * (shared-note.ts's notes have speakers without prints, which naming does not remember.)
 */
export async function voicedNote(t: TestApp, key: string, o: { title: string; text: string; speakerName: string }): Promise<{ noteId: string; uploadId: string }> {
  const wav = makeWav({ seconds: 2 })
  const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'meeting.wav', contentType: 'audio/wav', fileSize: wav.length } })
  if (up.status !== 201) throw new Error(`POST /v1/uploads: ${up.text}`)
  const put = await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit }))
  if (put.status !== 200) throw new Error(`the upload's PUT: ${put.status}`)
  const noteId: string = up.body.noteId
  await t.services.notes.saveTranscript(noteId, {
    transcript: o.text, language: 'en', segments: [{ start: 0, end: 2, text: o.text, speaker: 'A' }],
    speakers: [{ label: 'A', name: null, engine: 'builtin', embedding: [1, 0.5], profileId: null }],
  })
  await t.services.notes.finish(noteId, { summary: `${o.title}: summary.`, structuredContent: null, language: 'en' })
  for (const [path, body] of [[`/v1/notes/${noteId}`, { title: o.title }], [`/v1/notes/${noteId}/speakers/A`, { name: o.speakerName }]] as const) {
    const res = await t.call('PATCH', path, { token: key, body })
    if (res.status !== 200) throw new Error(`PATCH ${path}: ${res.text}`)
  }
  return { noteId, uploadId: noteId }
}
