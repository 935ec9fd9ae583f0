import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { apiClient, firstStartKey, freePort, startServer, statusOnceProcessed, tempDir } from '../helpers/process'
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
      const key = await firstStartKey(server.proc.stdout)
      const call = apiClient(base, key)

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
      const status = await statusOnceProcessed(async () => (await call('GET', `/v1/notes/${up.noteId}/status`)).body, 100, 1200)
      expect(status).toMatchObject({ status: 'Done', isComplete: true })
      const note = (await call('GET', `/v1/notes/${up.noteId}`)).body
      expect(note.originalTranscription.split(' ').length).toBeGreaterThan(60)
      const usage = (await call('GET', '/v1/usage')).body
      expect(usage.recent.map((r: any) => [r.operation, r.credits])).toEqual([['completeUpload', credits]])
      // the first start's owner is on the pro plan: 2000 credits a month
      expect(usage.balance.totalRemaining).toBe(2000 - credits)
    } finally {
      await server.stop()
      dir.remove()
    }
  }, 180_000)
})

describe('kill -9 during an upload PUT', () => {
  test('the half-written temporary file is kept while its upload URL lives, removed at the next start after that (logged), and the upload still works', async () => {
    const dir = tempDir('notesvc-crash-put-')
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { NOTESVC_DATA_DIR: dir.path, NOTESVC_LLM: 'builtin', PORT: String(port) }
    const start = () => startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env })
    const uploads = join(dir.path, 'media', 'uploads')
    const parts = () => (existsSync(uploads) ? readdirSync(uploads).filter(f => f.endsWith('.part')) : [])
    /** The JSON log lines a stopped server wrote. */
    const logOf = async (s: Awaited<ReturnType<typeof start>>) =>
      (await new Response(s.proc.stderr).text()).split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l) as { msg: string; files?: number; bytes?: number })
    let server = await start()
    try {
      const key = await firstStartKey(server.proc.stdout)
      const up = (await (await fetch(`${base}/v1/uploads`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ fileName: 'long.wav', contentType: 'audio/wav' }),
      })).json()) as { noteId: string; uploadUrl: string; headers: Record<string, string> }

      // a PUT that sends 4 MB and then stalls, as a slow client would; the server is killed meanwhile
      const body = new ReadableStream<Uint8Array>({ start(c) { for (let i = 0; i < 4; i++) c.enqueue(new Uint8Array(1 << 20)) } })
      const put = fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body, duplex: 'half' } as RequestInit).catch(err => err as Error)
      for (let i = 0; !(parts().length === 1 && statSync(join(uploads, parts()[0]!)).size > 0); i++) {
        if (i > 1000) throw new Error('the PUT never reached the disk')
        await Bun.sleep(10)
      }
      server.proc.kill('SIGKILL')
      await server.proc.exited
      expect(await put).toBeInstanceOf(Error)
      const part = join(uploads, parts()[0]!)
      const bytes = statSync(part).size

      // restarted within the hour: the upload may still be retried, so its leftover stays
      server = await start()
      await server.stop()
      expect(parts()).toHaveLength(1)
      expect((await logOf(server)).filter(l => l.msg.includes('interrupted uploads'))).toEqual([])

      // an hour and more later (the file's time moved back): the next start removes it, and says so
      // on one line, before it serves anything
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
      utimesSync(part, twoHoursAgo, twoHoursAgo)
      server = await start()
      expect(parts()).toEqual([])
      const res = await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: new Uint8Array(1000) })
      expect(res.status).toBe(200)
      await server.stop()
      const log = await logOf(server)
      const reclaimed = log.filter(l => l.msg.includes('interrupted uploads'))
      expect(reclaimed).toEqual([expect.objectContaining({ msg: 'removed the temporary files of interrupted uploads', files: 1, bytes })])
      expect(log.indexOf(reclaimed[0]!)).toBeLessThan(log.findIndex(l => l.msg === 'notesvc listening'))
    } finally {
      await server.stop()
      dir.remove()
    }
  }, 120_000)
})
