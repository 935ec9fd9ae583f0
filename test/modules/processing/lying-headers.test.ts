import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { recordingEngine } from '../../helpers/engines'
import { tempDir } from '../../helpers/process'
import { LYING_KINDS, lyingRecordings, type LyingRecording } from '../../fixtures/lying-media'
import { findMediaTools } from '../../../src/engines/media/ffmpeg'

/**
 * POST /v1/transcriptions (a recording fetched from its URL) with a header that lies about its length
 * (issue 29, item 6): charged on the audio it holds, the audio transcribed; a header that cannot be
 * true is refused with what is wrong, nothing charged.
 */
setDefaultTimeout(60_000)

const PRO_GRANT = 2000
const dir = tempDir('notesvc-lying-urls-')
let lying: LyingRecording[] = []
const rec = recordingEngine()
const t = createTestApp({ engines: { asr: () => rec.engine }, env: { NOTESVC_ALLOW_PRIVATE_URLS: '1' } })
const host = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: req => {
  const r = lying.find(l => `/${l.fileName}` === new URL(req.url).pathname)
  return r ? new Response(r.bytes as BodyInit, { headers: { 'content-type': r.contentType } }) : new Response('missing', { status: 404 })
} })
beforeAll(async () => {
  lying = await lyingRecordings(dir.path, findMediaTools({}).ffmpeg!)
})
afterAll(() => {
  host.stop(true)
  dir.remove()
})

describe('createTranscription of a lying recording', () => {
  test.each(LYING_KINDS.map((kind, i) => [kind, i] as const))('%s', async (_, i) => {
    const r = lying[i]!
    const token = await t.key({ email: `url-lying-${i}@example.com`, plan: 'pro' })
    const res = await t.call('POST', '/v1/transcriptions', { token, body: { audioUrl: `http://127.0.0.1:${host.port}/${r.fileName}`, timeoutSeconds: 60 } })
    const usage = (await t.call('GET', '/v1/usage', { token })).body
    if (r.trueSeconds === null) {
      expect({ kind: r.kind, status: res.status, code: res.body.error?.code }).toEqual({ kind: r.kind, status: 502, code: 'upstream_failure' })
      expect(res.body.error.message).toMatch(/^The media could not be read as audio: .*its header says the audio has \d samples a second, which no recording has .*Nothing was charged\.$/)
      expect({ recent: usage.recent, left: usage.balance.totalRemaining }).toEqual({ recent: [], left: PRO_GRANT })
      return
    }
    const credits = Math.ceil(r.trueSeconds / 60)
    expect({ kind: r.kind, status: res.status, charged: res.body.creditsCharged, left: res.headers.get('x-credits-remaining') }).toEqual({ kind: r.kind, status: 200, charged: credits, left: String(PRO_GRANT - credits) })
    expect(Math.abs(res.body.durationSeconds - r.trueSeconds)).toBeLessThan(0.1)
  })
})
