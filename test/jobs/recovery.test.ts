import { describe, expect, test } from 'bun:test'
import { freePort, startServer, tempDir } from '../helpers/process'
import { speechWav } from '../fixtures/speech'

/**
 * The durable queue against a real crash: a server (its own process, real PocketSphinx on real
 * speech) is killed with SIGKILL while it transcribes; a new server on the same data folder resumes the
 * job, finishes it, and the upload stays charged exactly once.
 */
describe('kill -9 while transcribing', () => {
  test('the job resumes after restart, finishes, and is charged once', async () => {
    const dir = tempDir('notesvc-crash-')
    const env = { NOTESVC_DATA_DIR: dir.path, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_RATE_LIMITS: 'read=100000' }
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    let server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env: { ...env, PORT: String(port) } })
    try {
      const reader = server.proc.stdout.getReader()
      let out = ''
      while (!/live key: +\S+/.test(out)) out += new TextDecoder().decode((await reader.read()).value)
      reader.releaseLock()
      const key = /live key: +(\S+)/.exec(out)![1]!
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
        return { status: res.status, body: (await res.json()) as any }
      }

      const wav = speechWav(90)
      const up = (await call('POST', '/v1/uploads', { fileName: 'chapter.wav', contentType: 'audio/wav', fileSize: wav.length })).body
      expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
      const done = await call('POST', `/v1/uploads/${up.noteId}/complete`)
      expect(done.status).toBe(202)
      const credits = Math.ceil(done.body.durationSeconds / 60)
      expect(credits).toBeGreaterThanOrEqual(2)
      expect(done.body.creditsCharged).toBe(credits)

      // wait until it is transcribing, then kill the process outright
      for (let i = 0; ; i++) {
        const s = (await call('GET', `/v1/notes/${up.noteId}/status`)).body
        if (s.processingStage === 'transcribing') break
        if (i > 500) throw new Error(`never reached transcribing: ${JSON.stringify(s)}`)
        await Bun.sleep(20)
      }
      server.proc.kill('SIGKILL')
      await server.proc.exited

      server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env: { ...env, PORT: String(port) } })
      let status: any
      for (let i = 0; i < 1200; i++) {
        status = (await call('GET', `/v1/notes/${up.noteId}/status`)).body
        if (status.status !== 'Summarizing') break
        await Bun.sleep(100)
      }
      expect(status).toMatchObject({ status: 'Done', isComplete: true })
      const note = (await call('GET', `/v1/notes/${up.noteId}`)).body
      expect(note.originalTranscription.split(' ').length).toBeGreaterThan(60)
      const usage = (await call('GET', '/v1/usage')).body
      expect(usage.recent.map((r: any) => [r.operation, r.credits])).toEqual([['completeUpload', credits]])
      expect(usage.balance.totalRemaining).toBe(60 - credits)
    } finally {
      await server.stop()
      dir.remove()
    }
  }, 180_000)
})
