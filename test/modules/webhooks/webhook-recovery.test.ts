import { describe, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { apiClient, firstStartKey, freePort, startServer, statusOnceProcessed, tempDir } from '../../helpers/process'
import { speechWav } from '../../fixtures/speech'

/**
 * The webhook outbox against a real crash: a server (its own process, real PocketSphinx on real
 * speech) finishes a note while the receiver is down, so the event cannot be delivered; the server is
 * killed with SIGKILL; the receiver comes up; a new server on the same data folder delivers the event,
 * signed, exactly as it was written with the note's final state.
 */
describe('kill -9 after a note is done, before its webhook is delivered', () => {
  test('the event is delivered after restart: nothing lost', async () => {
    const dir = tempDir('notesvc-webhook-crash-')
    const port = await freePort()
    const receiverPort = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { NOTESVC_DATA_DIR: dir.path, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off', NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_RATE_LIMITS: 'read=100000', PORT: String(port) }
    const start = () => startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env })
    const received: { headers: Record<string, string>; body: string }[] = []
    let receiver: ReturnType<typeof Bun.serve> | null = null
    let server = await start()
    try {
      const key = await firstStartKey(server.proc.stdout)
      const call = apiClient(base, key)

      // the receiver's port has nothing listening yet
      const hook = await call('POST', '/v1/webhooks', { url: `http://127.0.0.1:${receiverPort}/hooks`, events: ['note.completed'] })
      expect(hook.status).toBe(201)

      const wav = speechWav(8)
      const up = (await call('POST', '/v1/uploads', { fileName: 'memo.wav', contentType: 'audio/wav', fileSize: wav.length })).body
      expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
      expect((await call('POST', `/v1/uploads/${up.noteId}/complete`)).status).toBe(202)
      const status = await statusOnceProcessed(async () => (await call('GET', `/v1/notes/${up.noteId}/status`)).body, 50, 1200)
      expect(status).toMatchObject({ status: 'Done', isComplete: true })

      // the deliveries log once it lists `attempts` attempts (polled 50 ms apart, for up to 10 s): an
      // attempt is logged once the receiver's answer (or the refused connection) is back
      const logOnce = async (attempts: number): Promise<any[]> => {
        let log: any[] = []
        for (let i = 0; i < 200 && log.length < attempts; i++) {
          log = (await call('GET', `/v1/webhooks/${hook.body.id}/deliveries`)).body.data
          if (log.length < attempts) await Bun.sleep(50)
        }
        return log
      }

      // the note is final; the first attempt finds nothing listening; then kill the server outright
      const first = await logOnce(1)
      expect(first).toMatchObject([{ attempt: 1, status: 'failed', responseCode: null }])
      server.proc.kill('SIGKILL')
      await server.proc.exited
      expect(received).toEqual([])

      receiver = Bun.serve({
        hostname: '127.0.0.1',
        port: receiverPort,
        async fetch(req) {
          received.push({ headers: Object.fromEntries(req.headers), body: await req.text() })
          return new Response('ok')
        },
      })
      server = await start()
      // the retry after a refused connection is due 5 s after the first attempt
      for (let i = 0; i < 400 && received.length === 0; i++) await Bun.sleep(50)
      expect(received).toHaveLength(1)
      const event = new Webhook(hook.body.secret).verify(received[0]!.body, received[0]!.headers)
      expect(event).toEqual({ type: 'note.completed', timestamp: expect.any(String), data: { noteId: up.noteId, status: 'Done', errorCode: null } })

      // logged a moment after the receiver has the event
      const log = await logOnce(2)
      expect(log.map((d: any) => [d.attempt, d.status, d.responseCode, d.messageId])).toEqual([
        [2, 'delivered', 200, received[0]!.headers['webhook-id']],
        [1, 'failed', null, received[0]!.headers['webhook-id']],
      ])
      console.log(`webhook after kill -9: ${log.length} attempt(s): ${log.map((d: any) => `${d.attempt} ${d.status}`).reverse().join(', ')}`)
    } finally {
      await server.stop()
      receiver?.stop(true)
      dir.remove()
    }
  }, 120_000)
})
