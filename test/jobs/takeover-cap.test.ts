import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { speechWav } from '../fixtures/speech'
import { apiClient, firstStartKey, freePort, ROOT, startServer, tempDir, until } from '../helpers/process'

/**
 * A recording that kills its worker every time. `serve` runs the API alone (NOTESVC_WORKERS=0); the
 * test plays the supervisor that starts a worker process again whenever one dies (as systemd's
 * Restart=always would). Each worker (test/fixtures/poisoned-worker.ts) is killed with SIGKILL the
 * moment its engine is handed the audio. With the default cap of 3, the job's third dead worker is the
 * last: the next worker to claim it fails it instead of running it, the note says why, and the credits
 * come back; no later worker starts it again.
 */
describe('a job whose worker dies every time', () => {
  test('ends Error after 3 dead workers (the default cap), refunded, and is never run again', async () => {
    const dir = tempDir('notesvc-takeovers-')
    const marks = join(dir.path, 'runs-reaching-the-engine')
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = {
      NOTESVC_DATA_DIR: dir.path, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_JOB_LEASE_SECONDS: '30',
      NOTESVC_WORKERS: '1', PORT: String(port), POISON_MARKS: marks,
    }
    const serve = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env: { ...env, NOTESVC_WORKERS: '0' } })
    const spawned: ReturnType<typeof Bun.spawn>[] = []
    const startWorker = () => {
      const proc = Bun.spawn(['bun', 'run', 'test/fixtures/poisoned-worker.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'ignore' })
      spawned.push(proc)
      return proc
    }
    const runs = () => (existsSync(marks) ? readFileSync(marks, 'utf8').trim().split('\n').length : 0)
    const db = new Database(join(dir.path, 'notesvc.db'))
    db.exec('PRAGMA busy_timeout = 5000')
    try {
      const key = await firstStartKey(serve.proc.stdout)
      const call = apiClient(base, key)
      const before = (await call('GET', '/v1/usage')).body.balance.totalRemaining as number
      const wav = speechWav(20)
      const up = (await call('POST', '/v1/uploads', { fileName: 'poison.wav', contentType: 'audio/wav', fileSize: wav.length })).body
      expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
      const completed = await call('POST', `/v1/uploads/${up.noteId}/complete`)
      expect(completed.status).toBe(202)
      expect(completed.body.creditsCharged).toBe(1)
      expect((await call('GET', '/v1/usage')).body.balance.totalRemaining).toBe(before - 1)

      // The supervisor: a new worker each time the last one died, until one stays up.
      const exits: (number | null)[] = []
      let survivor: ReturnType<typeof Bun.spawn> | null = null
      const settled = async () => (await call('GET', `/v1/notes/${up.noteId}/status`)).body.status !== 'Summarizing'
      while (!survivor && exits.length < 6) {
        const w = startWorker()
        const outcome = await until('the worker to die or the note to settle', async () => (w.exitCode !== null || w.signalCode ? 'died' : (await settled()) ? 'settled' : null), 60_000, 100)
        if (outcome === 'died') exits.push(w.signalCode === 'SIGKILL' ? 9 : w.exitCode)
        else survivor = w
      }
      expect(exits).toEqual([9, 9, 9])
      expect(runs()).toBe(3)

      const status = (await call('GET', `/v1/notes/${up.noteId}/status`)).body
      expect(status).toMatchObject({ status: 'Error', hasError: true, errorCode: 'internal' })
      expect(status.errorMessage).toContain('stopped 3 times because the worker running it died')
      expect((await call('GET', '/v1/usage')).body.balance.totalRemaining).toBe(before)
      const usage = (await call('GET', '/v1/usage')).body.recent.map((r: any) => [r.operation, r.credits])
      expect(usage).toContainEqual(['refund:completeUpload', -1])
      const job = db.query<{ status: string; takeovers: number; attempts: number }, [string]>('SELECT status, takeovers, attempts FROM jobs WHERE note_id = ?').get(up.noteId)!
      expect(job).toEqual({ status: 'failed', takeovers: 3, attempts: 4 })

      // No further attempt: a fresh worker beats, looks at the queue, and leaves the job alone.
      survivor!.kill('SIGTERM')
      await survivor!.exited
      const later = startWorker()
      await until('the fresh worker to heartbeat', () => db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM workers WHERE pid = ?').get(later.pid)!.n > 0, 20_000)
      await Bun.sleep(1500) // three of its idle looks at the queue (every 500 ms on SQLite)
      expect(later.exitCode).toBeNull()
      expect(runs()).toBe(3)
      expect(db.query<{ status: string; attempts: number }, [string]>('SELECT status, attempts FROM jobs WHERE note_id = ?').get(up.noteId)).toEqual({ status: 'failed', attempts: 4 })
    } finally {
      for (const p of spawned) p.kill('SIGKILL')
      await serve.stop()
      db.close()
      dir.remove()
    }
  }, 120_000)
})
