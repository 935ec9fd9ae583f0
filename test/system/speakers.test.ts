import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parse as parseVtt } from 'node-webvtt'
import OpenAI, { toFile } from 'openai'
import type { TranscriptionDiarized } from 'openai/resources/audio/transcriptions'
import { diarizationError } from '../../bench/lib/der'
import { conversation, realVoices } from '../fixtures/conversation'
import { wavFromPcm } from '../fixtures/wav'
import { createTestApp } from '../helpers/app'

/**
 * Who said what, end to end with the default engines (PocketSphinx, the builtin diarization and
 * summary engines): a conversation of two real people (pocketsphinx-testdata's LibriVox reader and
 * its playing-cards speaker, test/fixtures/conversation.ts) uploaded through the API, read back in
 * the formats a person uses, through the official `openai` client as diarized_json, then a speaker
 * renamed and found in the subtitles, the summary and search.
 */
let t: ReturnType<typeof createTestApp>
let server: ReturnType<typeof Bun.serve>
let token: string
let noteId: string
let wav: Uint8Array
let truth: { start: number; end: number; speaker: number }[]

const int16 = (f: Float32Array) => Int16Array.from(f, x => Math.max(-32768, Math.min(32767, Math.round(x * 32767))))

beforeAll(async () => {
  const v = realVoices()
  const c = conversation([v.librivox, v.cards], { seconds: 40, seed: 23, turn: [3, 6] })
  wav = wavFromPcm(int16(c.samples), 16_000)
  truth = c.truth
  t = createTestApp({ env: { NOTESVC_WORKERS: '2', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
  await t.services.workers.start()
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
  token = await t.key({ plan: 'pro' })
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'two people.wav', contentType: 'audio/wav', fileSize: wav.length, styleId: 'meeting-notes', speakers: 2 } })).body
  const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
  for (let i = 0; i < 600; i++) {
    const s = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
    if (s.isComplete || s.hasError) break
    await Bun.sleep(100)
  }
  noteId = up.noteId
}, 120_000)
afterAll(async () => {
  server?.stop(true)
  await t?.services.workers.stop()
})

describe('a recording of two people', () => {
  test('the note has both speakers, and the transcript says who said what as the recording does', async () => {
    expect((await t.call('GET', `/v1/notes/${noteId}/status`, { token })).body.status).toBe('Done')
    const speakers = (await t.call('GET', `/v1/notes/${noteId}/speakers`, { token })).body.data
    expect(speakers.map((s: { id: string; displayName: string }) => [s.id, s.displayName])).toEqual([['A', 'Speaker A'], ['B', 'Speaker B']])
    const json = (await t.call('GET', `/v1/notes/${noteId}/transcript`, { token })).body
    expect(json.speakers).toEqual([{ id: 'A', name: 'Speaker A', suggestion: null }, { id: 'B', name: 'Speaker B', suggestion: null }])
    const verbose = (await t.call('GET', `/v1/notes/${noteId}/transcript?format=verbose_json`, { token })).body
    const hyp = verbose.segments.map((s: { start: number; end: number; speakerId: string }) => ({ start: s.start, end: s.end, speaker: s.speakerId.charCodeAt(0) - 65 }))
    // the transcript's segments (PocketSphinx's times) against who really spoke: most of the speech right
    expect(diarizationError(truth, hyp).der).toBeLessThan(0.3)
  })

  test('VTT: voice spans for both, valid for a strict parser', async () => {
    const vtt = (await t.call('GET', `/v1/notes/${noteId}/transcript?format=vtt`, { token })).text
    expect(vtt).toContain('<v Speaker A>')
    expect(vtt).toContain('<v Speaker B>')
    expect(parseVtt(vtt, { strict: true }).valid).toBe(true)
  })

  test('diarized_json through the official openai client: OpenAI\'s shape, the names given in order of first speech', async () => {
    const openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: token, maxRetries: 0 })
    // the client's create() has no overload for diarized_json: its answer is read as OpenAI's TranscriptionDiarized type
    const r = (await openai.audio.transcriptions.create({
      file: await toFile(wav, 'call.wav', { type: 'audio/wav' }), model: 'gpt-4o-transcribe-diarize', response_format: 'diarized_json', known_speaker_names: ['Elinor', 'Dealer'],
    })) as unknown as TranscriptionDiarized
    expect(r.task).toBe('transcribe')
    expect(r.usage).toEqual({ type: 'duration', seconds: r.duration })
    expect(r.duration).toBeGreaterThan(35)
    expect(new Set(r.segments.map(s => s.speaker))).toEqual(new Set(['Elinor', 'Dealer']))
    expect(r.segments[0]!.speaker).toBe('Elinor')
    for (const s of r.segments) {
      expect(s.type).toBe('transcript.text.segment')
      expect(s.id).toMatch(/^seg_\d+$/)
      expect(s.end).toBeGreaterThan(s.start)
    }
    expect(r.segments.map(s => s.text).join(' ')).toBe(r.text)
  }, 60_000)

  test('renamed once: the name is in the SRT, the summary\'s attendees, and search by speaker finds what they said', async () => {
    const verbose = (await t.call('GET', `/v1/notes/${noteId}/transcript?format=verbose_json`, { token })).body
    const saidBy = (id: string) => new Set<string>(verbose.segments.filter((s: { speakerId: string }) => s.speakerId === id).flatMap((s: { text: string }) => s.text.split(' ')))
    const aWords = saidBy('A')
    const bWords = saidBy('B')
    const onlyA = [...aWords].find(w => w.length >= 5 && !bWords.has(w))!
    expect(onlyA).toBeDefined()
    expect((await t.call('PATCH', `/v1/notes/${noteId}/speakers/A`, { token, body: { name: 'Elinor' } })).status).toBe(200)
    const srt = (await t.call('GET', `/v1/notes/${noteId}/transcript?format=srt`, { token })).text
    expect(srt).toContain('Elinor: ')
    expect(srt).not.toContain('Speaker A')
    const note = (await t.call('GET', `/v1/notes/${noteId}`, { token })).body
    expect(note.structuredContent['meeting-notes'].attendees).toEqual(['Elinor', 'Speaker B'])
    const found = async (speaker: string) => (await t.call('GET', `/v1/notes?q=${onlyA}&speaker=${speaker}`, { token })).body.data.map((n: { id: string }) => n.id)
    expect(await found('Elinor')).toEqual([noteId])
    expect(await found('Speaker%20B')).toEqual([])
  })
})
