/**
 * The voice suggestion flow (issue 31), through the API with the engines a fresh install has
 * (PocketSphinx when present, the builtin diarization), on recordings of bench/voices.ts's set (40 s,
 * made as that bench makes them):
 *
 *   6  (session 1)  en-us+m3 at pitch 20 and en-029+m2: both named, Tom and Clara, remembered
 *   12 (session 2)  en-029+m2 again (other words, more hiss) and the LibriVox reader: Clara offered,
 *                   confirmed; the same recording uploaded again: offered, dismissed
 *   2  (session 1)  the commands speaker and en-us+m3 at pitch 45 (the same synthetic voice as Tom, 6 %
 *                   higher): different voices, nothing offered
 *
 * For each new recording it prints every speaker found (the true voice it mostly is), the similarity
 * of its print to each remembered voice (read from the database), and what the API offers.
 *
 *   bun run bench/voice-suggestions.ts
 */
import { similarity, RECOGNITION_THRESHOLDS } from '../src/engines/diarization/recognise'
import { wavFromPcm } from '../test/fixtures/wav'
import { createTestApp } from '../test/helpers/app'
import { tempDir } from '../test/helpers/process'
import { VOICES, voiceSet, type SetRecording } from './lib/voice-set'

interface Speaker { id: string; name: string | null; displayName: string; seconds: number; profileId: string | null; suggestion: { profileId: string; name: string; similarity: number } | null }

const dir = tempDir('notesvc-suggest-')
const t = createTestApp({ env: { NOTESVC_WORKERS: '1', NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
await t.services.workers.start()
const token = await t.key({ plan: 'pro' })
const [two, six, twelve] = voiceSet(dir.path, { seconds: 40, only: [2, 6, 12] }) as [SetRecording, SetRecording, SetRecording]
const wavOf = (samples: Float32Array) => wavFromPcm(Int16Array.from(samples, x => Math.round(Math.max(-1, Math.min(1, x)) * 32767)), 16_000)
console.log(`builtin threshold ${RECOGNITION_THRESHOLDS.builtin} (bench/voices.ts)\n`)

async function upload(name: string, r: SetRecording): Promise<string> {
  const wav = wavOf(r.samples)
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: name, contentType: 'audio/wav', fileSize: wav.length } })).body
  await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
  for (;;) {
    const s = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
    if (s.isComplete || s.hasError) break
    await Bun.sleep(200)
  }
  return up.noteId
}

/** Each speaker label of the note as the true voice whose turns its segments overlap most. */
async function voicesOf(id: string, r: SetRecording): Promise<Map<string, string>> {
  const segments = (await t.call('GET', `/v1/notes/${id}/transcript?format=verbose_json`, { token })).body.segments as { start: number; end: number; speakerId?: string }[]
  const shared = new Map<string, number[]>()
  for (const s of segments) {
    if (!s.speakerId) continue
    const row = shared.get(s.speakerId) ?? shared.set(s.speakerId, r.voices.map(() => 0)).get(s.speakerId)!
    for (const x of r.truth) row[x.speaker]! += Math.max(0, Math.min(s.end, x.end) - Math.max(s.start, x.start))
  }
  return new Map([...shared].map(([label, row]) => [label, VOICES[r.voices[row.indexOf(Math.max(...row))]!]!.name]))
}

/** The note's speakers: the true voice, the similarity to each remembered voice, and what is offered. */
async function show(title: string, id: string, r: SetRecording): Promise<Speaker[]> {
  const speakers = (await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data as Speaker[]
  const truth = await voicesOf(id, r)
  const prints = new Map((await t.store.all<{ label: string; embedding: string }>('SELECT label, embedding FROM note_speakers WHERE note_id = ?', [id])).map(p => [p.label, JSON.parse(p.embedding) as number[]]))
  const profiles = (await t.store.all<{ name: string; embedding: string }>('SELECT name, embedding FROM speaker_profiles ORDER BY name')).map(p => ({ name: p.name, print: JSON.parse(p.embedding) as number[] }))
  console.log(`${title}`)
  for (const s of speakers) {
    const scores = profiles.map(p => `${p.name} ${similarity(prints.get(s.id)!, p.print).toFixed(3)}`).join(', ')
    const offered = s.suggestion ? `suggestion ${JSON.stringify(s.suggestion)}` : 'suggestion null'
    console.log(`  ${s.id} (${truth.get(s.id) ?? '?'}, ${s.seconds} s): name ${JSON.stringify(s.name)}, ${offered}${scores ? `; similarity to ${scores}` : ''}`)
  }
  return speakers
}

const first = await upload('recording-6.wav', six)
const firstVoices = await voicesOf(first, six)
await show('recording 6 (nothing remembered yet):', first, six)
for (const [label, voice] of firstVoices) {
  const name = voice === 'en-029+m2 p40' ? 'Clara' : 'Tom'
  const r = await t.call('PATCH', `/v1/notes/${first}/speakers/${label}`, { token, body: { name } })
  console.log(`  PATCH speakers/${label} {"name":"${name}"} → ${r.status}, profileId ${r.body.profileId}`)
}

const second = await upload('recording-12.wav', twelve)
const offered = await show('\nrecording 12 (en-029+m2 again, other words, more hiss):', second, twelve)
for (const s of offered.filter(x => x.suggestion)) {
  const r = await t.call('POST', `/v1/notes/${second}/speakers/${s.id}/suggestion`, { token, body: { accept: true }, headers: { 'if-match': '"0"' } })
  console.log(`  POST speakers/${s.id}/suggestion {"accept":true} → ${r.status} ETag ${r.headers.get('etag')}: ${JSON.stringify(r.body)}`)
}
await show('  after confirming:', second, twelve)

const again = await upload('recording-12-again.wav', twelve)
const offeredAgain = await show('\nrecording 12 uploaded again (after the confirmation):', again, twelve)
for (const s of offeredAgain.filter(x => x.suggestion)) {
  const r = await t.call('POST', `/v1/notes/${again}/speakers/${s.id}/suggestion`, { token, body: { accept: false } })
  console.log(`  POST speakers/${s.id}/suggestion {"accept":false} → ${r.status}: ${JSON.stringify(r.body)}`)
  const twice = await t.call('POST', `/v1/notes/${again}/speakers/${s.id}/suggestion`, { token, body: { accept: false } })
  console.log(`  the same again → ${twice.status} ${twice.body.error.code}: ${twice.body.error.message}`)
}

const third = await upload('recording-2.wav', two)
await show('\nrecording 2 (the commands speaker, en-us+m3 at pitch 45: neither remembered):', third, two)

await t.services.workers.stop()
dir.remove()
process.exit(0)
