import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { recordingEngine } from '../../helpers/engines'
import { tempDir } from '../../helpers/process'
import { makeWav } from '../../fixtures/wav'
import { LYING_KINDS, lyingRecordings, type LyingRecording } from '../../fixtures/lying-media'
import { findMediaTools } from '../../../src/engines/media/ffmpeg'

/**
 * An upload whose header lies about its length (issue 29, item 6), through POST /v1/uploads, the PUT
 * and POST …/complete: charged on the audio it holds, which is the audio transcribed, never on its
 * header's claim (a 6 s file claiming 100,000 s was charged 1,667 credits, a 2-minute one claiming a
 * third of a second 1); a header that cannot be true (1 Hz) is refused before anything is charged,
 * and the upload stays open for the right file.
 */
setDefaultTimeout(60_000)

const PRO_GRANT = 2000
const dir = tempDir('notesvc-lying-uploads-')
let lying: LyingRecording[] = []
const rec = recordingEngine()
const t = createTestApp({ engines: { asr: () => rec.engine }, env: { NOTESVC_WORKERS: '1', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
beforeAll(async () => {
  lying = await lyingRecordings(dir.path, findMediaTools({}).ffmpeg!)
  await t.services.workers.start()
})
afterAll(async () => {
  await t.services.workers.stop()
  dir.remove()
})

const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, 'http://localhost')

async function uploaded(token: string, r: { fileName: string; contentType: string; bytes: Uint8Array }) {
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: r.fileName, contentType: r.contentType, fileSize: r.bytes.length } })).body
  const put = await t.app.handle(new Request(local(up.uploadUrl), { method: 'PUT', body: r.bytes as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  return up as { noteId: string; uploadUrl: string; headers: Record<string, string> }
}

async function settled(token: string, noteId: string) {
  for (let i = 0; i < 600; i++) {
    const s = (await t.call('GET', `/v1/notes/${noteId}/status`, { token })).body
    if (s.status !== 'Summarizing') return s
    await Bun.sleep(50)
  }
  throw new Error(`note ${noteId} still processing`)
}

describe('completing an upload whose header lies', () => {
  test.each(LYING_KINDS.map((kind, i) => [kind, i] as const))('%s: charged on the audio it holds, or refused with nothing charged', async (_, i) => {
    const r = lying[i]!
    const token = await t.key({ email: `lying-${i}@example.com`, plan: 'pro' })
    const up = await uploaded(token, r)
    const done = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
    const usage = (await t.call('GET', '/v1/usage', { token })).body
    if (r.trueSeconds === null) {
      expect({ kind: r.kind, status: done.status, code: done.body.error?.code }).toEqual({ kind: r.kind, status: 400, code: 'invalid_request' })
      expect(done.body.error.message).toMatch(/cannot be transcribed: .*its header says the audio has \d samples a second, which no recording has .*Nothing was charged; PUT a playable recording to the uploadUrl again and complete the upload/)
      expect(done.body.error.details).toEqual([{ field: 'file', issue: expect.stringContaining('samples a second') }])
      expect({ kind: r.kind, recent: usage.recent, left: usage.balance.totalRemaining }).toEqual({ kind: r.kind, recent: [], left: PRO_GRANT })
      // the upload is still open: the right file, then completion, charged on its length
      const right = makeWav({ seconds: 6.33, sampleRate: 16_000 })
      expect((await t.app.handle(new Request(local(up.uploadUrl), { method: 'PUT', body: right as BodyInit, headers: up.headers }))).status).toBe(200)
      const again = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
      expect({ status: again.status, charged: again.body.creditsCharged, seconds: again.body.durationSeconds }).toEqual({ status: 202, charged: 1, seconds: 6.33 })
      return
    }
    const credits = Math.ceil(r.trueSeconds / 60)
    expect({ kind: r.kind, status: done.status, charged: done.body.creditsCharged, left: done.headers.get('x-credits-remaining') })
      .toEqual({ kind: r.kind, status: 202, charged: credits, left: String(PRO_GRANT - credits) })
    expect(Math.abs(done.body.durationSeconds - r.trueSeconds)).toBeLessThan(0.1)
    expect(usage.recent.map((u: { credits: number }) => u.credits)).toEqual([credits])
    // what was charged is what was transcribed
    const before = rec.calls.length
    expect((await settled(token, up.noteId)).status).toBe('Done')
    const heard = rec.calls.slice(before).reduce((n, c) => n + c.samples, 0) / 16_000
    expect({ kind: r.kind, heardAsCharged: Math.abs(heard - done.body.durationSeconds) < 0.1 }).toEqual({ kind: r.kind, heardAsCharged: true })
  })
})
