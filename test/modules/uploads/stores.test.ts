import { describe, expect, test } from 'bun:test'
import { createUploadsRepo } from '../../../src/modules/uploads/repo'
import { backEnds } from '../../helpers/backends'
import { createTestApp } from '../../helpers/app'
import { closedAfterAll } from '../../helpers/closing'

/** The web library's two reads beside the API (recording lengths, a recording's bytes) on each store. */
const opened = closedAfterAll()

for (const b of backEnds) describe.skipIf(b.skip)(`the library's reads on ${b.name}`, () => {
  test('recording lengths of completed uploads, of this library only; the bytes of a recording, whole and in part', async () => {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store })
    const key = await t.key({ email: 'lengths@example.com' })
    const upload = async (name: string) => (await t.call('POST', '/v1/uploads', { token: key, body: { fileName: name, contentType: 'audio/wav' } })).body as { noteId: string; uploadUrl: string }
    const done = await upload('done.wav')
    const waiting = await upload('waiting.wav')
    // the file arrives through the signed PUT; a completion with a known length, as completeUpload records it
    const bytes = new Uint8Array(1000).map((_, i) => i % 251)
    const put = await t.app.handle(new Request(done.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', headers: { 'content-type': 'audio/wav' }, body: bytes }))
    expect(put.status).toBe(200)
    await createUploadsRepo(store).markCompleted({ note_id: done.noteId, completed_at: new Date().toISOString(), duration_seconds: 75.5, credits_charged: 2, usage_id: null })

    const account = (await t.services.accounts.verifyApiKey(key))!.accountId
    const live = { accountId: account, sandbox: false }
    expect(await t.services.uploads.durations(live, [done.noteId, waiting.noteId, 'note_unknown'])).toEqual({ [done.noteId]: 75.5 })
    expect(await t.services.uploads.durations({ accountId: account, sandbox: true }, [done.noteId])).toEqual({})
    expect(await t.services.uploads.durations({ accountId: 'acc_other', sandbox: false }, [done.noteId])).toEqual({})
    expect(await t.services.uploads.durations(live, [])).toEqual({})

    const media = await t.services.uploads.media(live, done.noteId)
    expect([media.contentType, media.size]).toEqual(['audio/wav', 1000])
    expect(new Uint8Array(await new Response(await t.services.uploads.readMedia(media.key)).arrayBuffer())).toEqual(bytes)
    expect([...new Uint8Array(await new Response(await t.services.uploads.readMedia(media.key, { start: 10, end: 13 })).arrayBuffer())]).toEqual([10, 11, 12, 13])
    await expect(t.services.uploads.media(live, waiting.noteId)).rejects.toThrow('has no uploaded recording')
  })
})
