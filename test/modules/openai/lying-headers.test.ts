import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { recordingEngine } from '../../helpers/engines'
import { tempDir } from '../../helpers/process'
import { LYING_KINDS, lyingRecordings, type LyingRecording } from '../../fixtures/lying-media'
import { findMediaTools } from '../../../src/engines/media/ffmpeg'

/**
 * POST /v1/audio/transcriptions (multipart) with a recording whose header lies about its length
 * (issue 29, item 6): the 402 check and the charge use the audio the file holds, which is what is
 * transcribed, and `duration` says so; a header that cannot be true is a 400 naming what is wrong,
 * with nothing charged.
 */
setDefaultTimeout(60_000)

const PRO_GRANT = 2000
const dir = tempDir('notesvc-lying-openai-')
let lying: LyingRecording[] = []
const rec = recordingEngine()
const t = createTestApp({ engines: { asr: () => rec.engine }, env: { NOTESVC_DIARIZATION: 'off' } })
beforeAll(async () => {
  lying = await lyingRecordings(dir.path, findMediaTools({}).ffmpeg!)
})
afterAll(() => dir.remove())

describe('a lying recording sent to the OpenAI-compatible route', () => {
  test.each(LYING_KINDS.map((kind, i) => [kind, i] as const))('%s', async (_, i) => {
    const r = lying[i]!
    const token = await t.key({ email: `openai-lying-${i}@example.com`, plan: 'pro' })
    const form = new FormData()
    form.append('file', new Blob([r.bytes as BlobPart], { type: r.contentType }), r.fileName)
    form.append('model', 'whisper-1')
    form.append('response_format', 'verbose_json')
    const res = await t.app.handle(new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } }))
    const body = (await res.json()) as any
    const usage = (await t.call('GET', '/v1/usage', { token })).body
    if (r.trueSeconds === null) {
      expect({ kind: r.kind, status: res.status, code: body.error?.code }).toEqual({ kind: r.kind, status: 400, code: 'invalid_request' })
      expect(body.error.message).toMatch(/file: is not audio or video that ffmpeg can read: .*its header says the audio has \d samples a second, which no recording has .*Nothing was charged\.$/)
      expect({ recent: usage.recent, left: usage.balance.totalRemaining }).toEqual({ recent: [], left: PRO_GRANT })
      return
    }
    const credits = Math.ceil(r.trueSeconds / 60)
    expect({ kind: r.kind, status: res.status, charged: usage.recent.map((u: { credits: number }) => u.credits) }).toEqual({ kind: r.kind, status: 200, charged: [credits] })
    expect(Math.abs(body.duration - r.trueSeconds)).toBeLessThan(0.1)
  })
})
