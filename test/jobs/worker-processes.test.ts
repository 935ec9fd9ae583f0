import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { apiClient, firstStartKey, freePort, ROOT, startServer, tempDir, until } from '../helpers/process'
import { speechWav } from '../fixtures/speech'

const LEASE_SECONDS = 3

/** A `notesvc worker` process, with its log lines as they come. */
function startWorker(env: Record<string, string>) {
  const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'worker'], { cwd: ROOT, env: { ...process.env, ...env, NOTESVC_WORKERS: '1' }, stdout: 'ignore', stderr: 'pipe' })
  const lines: { msg: string; [k: string]: unknown }[] = []
  void (async () => {
    let rest = ''
    for await (const chunk of proc.stderr as unknown as AsyncIterable<Uint8Array>) {
      rest += new TextDecoder().decode(chunk)
      const parts = rest.split('\n')
      rest = parts.pop()!
      for (const l of parts) if (l.startsWith('{')) lines.push(JSON.parse(l))
    }
  })()
  return { proc, lines }
}

/**
 * Workers as their own processes, for real: a `serve` with NOTESVC_WORKERS=0 (the API alone) and two
 * `notesvc worker` processes on one data folder, PocketSphinx transcribing real speech. Every write of
 * a transcript is counted by a trigger in the database itself, whichever process makes it. A worker
 * that dies (kill -9) loses its job once its lease runs out; one that is only paused (SIGSTOP) past
 * its lease and then resumes finds its lease taken and writes nothing.
 */
describe('serve (API only) and two worker processes on one data folder', () => {
  test('uploads all finish, each charged once; a worker killed with -9 (or paused) mid-transcription loses the job after its lease to the other, which finishes it once', async () => {
    const dir = tempDir('notesvc-workers-')
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = {
      NOTESVC_DATA_DIR: dir.path, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
      NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000', PORT: String(port),
    }
    const t0 = performance.now()
    const serve = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env: { ...env, NOTESVC_WORKERS: '0' } })
    const workers = [startWorker(env), startWorker(env)]
    const db = new Database(join(dir.path, 'notesvc.db'))
    try {
      const key = await firstStartKey(serve.proc.stdout)
      const call = apiClient(base, key)
      db.exec('PRAGMA busy_timeout = 5000')
      db.exec(`CREATE TABLE test_transcript_writes (note_id TEXT, at TEXT);
        CREATE TRIGGER test_count_transcript_writes AFTER UPDATE OF original_transcription ON note_bodies
        BEGIN INSERT INTO test_transcript_writes VALUES (new.note_id, strftime('%Y-%m-%dT%H:%M:%fZ')); END`)
      const writesOf = (noteId: string) => db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM test_transcript_writes WHERE note_id = ?').get(noteId)!.n
      const jobOf = (noteId: string) => db.query<{ status: string; attempts: number; lease_owner: string | null }, [string]>('SELECT status, attempts, lease_owner FROM jobs WHERE note_id = ?').get(noteId)
      const pidOf = (workerId: string) => db.query<{ pid: number }, [string]>('SELECT pid FROM workers WHERE id = ?').get(workerId)?.pid
      const health = async () => (await (await fetch(`${base}/v1/health?detail`)).json()) as { database: string; workers: number }

      expect(await until('both workers heartbeat', async () => (await health()).workers === 2, 20_000)).toBe(true)
      expect(await health()).toMatchObject({ database: 'sqlite', workers: 2 })
      const before = (await call('GET', '/v1/usage')).body.balance.totalRemaining as number

      const upload = async (seconds: number) => {
        const wav = speechWav(seconds)
        const up = (await call('POST', '/v1/uploads', { fileName: `speech-${seconds}.wav`, contentType: 'audio/wav', fileSize: wav.length })).body
        expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
        const done = await call('POST', `/v1/uploads/${up.noteId}/complete`)
        expect(done.status).toBe(202)
        return { noteId: up.noteId as string, credits: done.body.creditsCharged as number }
      }
      const finished = (noteId: string) => until(`note ${noteId} Done`, async () => {
        const s = (await call('GET', `/v1/notes/${noteId}/status`)).body
        if (s.status === 'Error') throw new Error(`note ${noteId} failed: ${JSON.stringify(s)}`)
        return s.status === 'Done'
      }, 60_000)

      // 1. four uploads through the API, all transcribed by the two worker processes
      const t1 = performance.now()
      const batch = await Promise.all([6, 6, 6, 6].map(upload))
      for (const u of batch) await finished(u.noteId)
      const batchSeconds = (performance.now() - t1) / 1000
      const owners = batch.map(u => jobOf(u.noteId)!.lease_owner!)
      for (const u of batch) {
        expect(jobOf(u.noteId)).toMatchObject({ status: 'done', attempts: 1 })
        expect(writesOf(u.noteId)).toBe(1)
        expect((await call('GET', `/v1/notes/${u.noteId}`)).body.originalTranscription.split(' ').length).toBeGreaterThan(5)
      }
      // both took part: four jobs of a second or more each, and an idle worker looks every quarter second
      expect(new Set(owners).size).toBe(2)

      // 2. kill -9 of the worker that holds a job while it transcribes
      const long = await upload(20)
      const holder = await until('a worker holds the job', () => jobOf(long.noteId)?.lease_owner, 20_000)
      await until('transcribing', async () => (await call('GET', `/v1/notes/${long.noteId}/status`)).body.processingStage === 'transcribing', 20_000)
      const victim = workers.find(w => w.proc.pid === pidOf(holder))!
      expect(victim).toBeDefined()
      const killedAt = performance.now()
      victim.proc.kill('SIGKILL')
      await victim.proc.exited
      const survivor = workers.find(w => w !== victim)!
      const taken = await until('the other worker takes the job over', () => {
        const j = jobOf(long.noteId)!
        return j.lease_owner !== holder && j.attempts === 2 ? j : null
      }, 30_000)
      const takeoverSeconds = (performance.now() - killedAt) / 1000
      expect(pidOf(taken.lease_owner!)).toBe(survivor.proc.pid)
      await finished(long.noteId)
      const doneSeconds = (performance.now() - killedAt) / 1000
      expect(jobOf(long.noteId)).toMatchObject({ status: 'done', attempts: 2, lease_owner: taken.lease_owner })
      expect(writesOf(long.noteId)).toBe(1)
      expect((await call('GET', `/v1/notes/${long.noteId}`)).body.originalTranscription.split(' ').length).toBeGreaterThan(20)

      // 3. a worker paused (SIGSTOP) while it transcribes loses the job after its lease; the other
      // finishes it; resumed (SIGCONT) after that, the paused one finds its lease gone and writes nothing
      const third = startWorker(env)
      workers.push(third)
      await until('the third worker runs', () => third.lines.some(l => l.msg === 'notesvc worker started'), 20_000)
      const late = await upload(12)
      const pausedId = await until('a worker holds the job', () => jobOf(late.noteId)?.lease_owner, 20_000)
      await until('transcribing', async () => (await call('GET', `/v1/notes/${late.noteId}/status`)).body.processingStage === 'transcribing', 20_000)
      const paused = workers.find(w => w.proc.pid === pidOf(pausedId))!
      const running = workers.find(w => w !== paused && w !== victim)!
      paused.proc.kill('SIGSTOP')
      const pausedAt = performance.now()
      await finished(late.noteId)
      const lateDoneSeconds = (performance.now() - pausedAt) / 1000
      const doneRow = db.query<{ updated_at: string }, [string]>('SELECT updated_at FROM notes WHERE id = ?').get(late.noteId)!
      expect(jobOf(late.noteId)).toMatchObject({ status: 'done', attempts: 2 })
      expect(pidOf(jobOf(late.noteId)!.lease_owner!)).toBe(running.proc.pid)
      paused.proc.kill('SIGCONT')
      await until('the resumed worker gives the run up', () => paused.lines.some(l => String(l.msg).startsWith('job no longer held by this run')), 20_000)
      expect(writesOf(late.noteId)).toBe(1)
      expect(db.query<{ updated_at: string }, [string]>('SELECT updated_at FROM notes WHERE id = ?').get(late.noteId)).toEqual(doneRow)
      expect(jobOf(late.noteId)).toMatchObject({ status: 'done', attempts: 2 })

      // every upload charged exactly once, nothing refunded, and the rows account for the balance
      const usage = (await call('GET', '/v1/usage?limit=100')).body
      const rows = usage.recent as { operation: string; credits: number; noteId: string }[]
      const all = [...batch, long, late]
      expect(rows.map(r => r.operation).sort()).toEqual(all.map(() => 'completeUpload'))
      expect(rows.map(r => r.noteId).sort()).toEqual(all.map(u => u.noteId).sort())
      for (const u of all) expect(rows.find(r => r.noteId === u.noteId)!.credits).toBe(u.credits)
      const charged = rows.reduce((sum, r) => sum + r.credits, 0)
      expect(before - usage.balance.totalRemaining).toBe(charged)

      // the live workers stop cleanly on SIGTERM; then none is counted live
      for (const w of [survivor, third]) w.proc.kill('SIGTERM')
      for (const w of [survivor, third]) {
        expect(await w.proc.exited).toBe(0)
        expect(w.lines.map(l => l.msg)).toContain('notesvc worker stopped')
      }
      expect(await until('no live worker', async () => (await health()).workers === 0, 4 * LEASE_SECONDS * 1000 + 5000)).toBe(true)

      console.log([
        `worker processes: 2 (NOTESVC_JOB_LEASE_SECONDS=${LEASE_SECONDS}), serve with NOTESVC_WORKERS=0`,
        `batch: ${batch.length} uploads of ${batch.map(u => `${u.credits} credit`).join(', ')} Done in ${batchSeconds.toFixed(1)} s; jobs per worker: ${[...new Set(owners)].map(o => owners.filter(x => x === o).length).join(' + ')}`,
        `kill -9 of pid ${victim.proc.pid} while transcribing: taken over by pid ${survivor.proc.pid} after ${takeoverSeconds.toFixed(1)} s, Done ${doneSeconds.toFixed(1)} s after the kill; transcript writes 1, attempts 2`,
        `SIGSTOP of pid ${paused.proc.pid} while transcribing: Done by pid ${running.proc.pid} ${lateDoneSeconds.toFixed(1)} s later; after SIGCONT the paused worker wrote nothing (transcript writes 1)`,
        `usage: ${rows.length} completeUpload rows, ${charged} credits = balance ${before} → ${usage.balance.totalRemaining}; whole test ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      ].join('\n'))
      expect(takeoverSeconds).toBeGreaterThanOrEqual(LEASE_SECONDS - 1)
    } finally {
      for (const w of workers) {
        w.proc.kill('SIGCONT')
        w.proc.kill('SIGKILL')
      }
      await serve.stop()
      db.close()
      dir.remove()
    }
  }, 120_000)
})
