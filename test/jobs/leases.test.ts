import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { leaseOf, LeaseLostError, type JobsRepo, type WorkerRow } from '../../src/jobs/repo'
import { createPresence, liveWorkers } from '../../src/jobs/presence'
import { SqliteStore } from '../../src/db/store'
import { fixedClock } from '../../src/clock'
import { run, tempDir } from '../helpers/process'
import { queueDb } from '../helpers/queue'
import { backEnds } from '../helpers/backends'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

const dir = tempDir('notesvc-leases-')
afterAll(() => dir.remove())

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString()
const LEASE = 60

/** Claims as `owner` at `seconds` after T0, on a lease of LEASE seconds. */
const claimAt = (jobs: JobsRepo, owner: string, seconds: number) => jobs.claim(owner, iso(seconds), iso(seconds + LEASE))

for (const b of backEnds) {
  /** A queue of `jobs` jobs, with two stores on it (two workers' views). */
  const setup = async (jobs = 1) => {
    const s = await queueDb(b.name, dir.path, jobs, iso(0))
    opened.push(s)
    return s
  }
  const opened: { close(): Promise<void> }[] = []
  afterAll(async () => { for (const s of opened.splice(0)) await s.close().catch(() => {}) })

  describe.skipIf(b.skip)(`job leases (the repository, two stores on one database) on ${b.name}`, () => {
    test('a claim takes the job with a lease: owner, attempt 1, expiry; nobody else gets it while the lease runs', async () => {
      const s = await setup()
      const job = (await claimAt(s.a, 'wrk_a', 0))!
      expect(job).toMatchObject({ id: 'job_0000', status: 'running', attempts: 1, lease_owner: 'wrk_a', lease_expires_at: iso(LEASE) })
      expect(await claimAt(s.b, 'wrk_b', 1)).toBeNull()
      expect(await claimAt(s.b, 'wrk_b', LEASE - 1)).toBeNull()
      expect(await s.b.anyDue(iso(LEASE - 1))).toBe(false)
      expect(await s.b.anyDue(iso(LEASE))).toBe(true)
    })

    test('a heartbeat extends the lease: the job stays with its worker past the first expiry', async () => {
      const s = await setup()
      const lease = leaseOf((await claimAt(s.a, 'wrk_a', 0))!)
      const row: WorkerRow = { id: 'wrk_a', host: 'h', pid: 1, pid_namespace: null, slots: 1, started_at: iso(0), heartbeat_at: iso(40) }
      expect(await s.a.heartbeat(row, [lease], iso(40 + LEASE))).toEqual([])
      expect((await s.a.get(lease.id))!.lease_expires_at).toBe(iso(100))
      expect(await claimAt(s.b, 'wrk_b', LEASE + 1)).toBeNull()
      expect(await claimAt(s.b, 'wrk_b', 100)).toMatchObject({ lease_owner: 'wrk_b', attempts: 2 })
    })

    test('an expired lease is claimable again by another worker, as the next attempt', async () => {
      const s = await setup()
      await claimAt(s.a, 'wrk_a', 0)
      const taken = (await claimAt(s.b, 'wrk_b', LEASE))!
      expect(taken).toMatchObject({ id: 'job_0000', status: 'running', attempts: 2, lease_owner: 'wrk_b', lease_expires_at: iso(2 * LEASE) })
    })

    test('fenced writes of the old owner are refused and write nothing; the new owner\'s are made', async () => {
      const s = await setup()
      const old = (await claimAt(s.a, 'wrk_a', 0))!
      const now = (await claimAt(s.b, 'wrk_b', LEASE + 5))!
      const oldLease = leaseOf(old)
      const row: WorkerRow = { id: 'wrk_a', host: 'h', pid: 1, pid_namespace: null, slots: 1, started_at: iso(0), heartbeat_at: iso(70) }

      // the old owner wakes up late: a stage, its result with the job's end, its failure, a retry, a heartbeat
      await expect(s.a.fenced(oldLease, iso(70), s.mark(s.db, old.id, 'a: stage'))).rejects.toThrow(LeaseLostError)
      await expect(s.a.end(oldLease, 'done', null, iso(70), s.mark(s.db, old.id, 'a: result'))).rejects.toThrow(LeaseLostError)
      await expect(s.a.end(oldLease, 'failed', 'late', iso(70), s.mark(s.db, old.id, 'a: refund'))).rejects.toThrow(LeaseLostError)
      expect(await s.a.retry(oldLease, iso(70), 'late', iso(70))).toBe(false)
      expect(await s.a.heartbeat(row, [oldLease], iso(130))).toEqual([oldLease])
      expect(await s.marks()).toEqual([])
      expect(await s.a.get(old.id)).toMatchObject({ status: 'running', attempts: 2, lease_owner: 'wrk_b', lease_expires_at: iso(LEASE + 5 + LEASE) })

      // the new owner's writes go through, and the job's end with its result is one transaction
      await s.b.fenced(leaseOf(now), iso(80), s.mark(s.other, now.id, 'b: stage'))
      await s.b.end(leaseOf(now), 'done', null, iso(90), s.mark(s.other, now.id, 'b: result'))
      expect(await s.marks()).toEqual([{ job_id: 'job_0000', by: 'b: stage' }, { job_id: 'job_0000', by: 'b: result' }])
      expect(await s.a.get(old.id)).toMatchObject({ status: 'done', attempts: 2, lease_owner: 'wrk_b', lease_expires_at: null })
      // once ended, not even its own run writes again
      await expect(s.b.end(leaseOf(now), 'done', null, iso(91), s.mark(s.other, now.id, 'b: twice'))).rejects.toThrow(LeaseLostError)
      expect(await s.marks()).toHaveLength(2)
    })

    test('a write that fails inside the fenced transaction leaves the job running under its lease, nothing written', async () => {
      const s = await setup()
      const job = (await claimAt(s.a, 'wrk_a', 0))!
      await expect(s.a.end(leaseOf(job), 'done', null, iso(1), async () => {
        await s.mark(s.db, job.id, 'half')()
        throw new Error('disk full')
      })).rejects.toThrow('disk full')
      expect(await s.marks()).toEqual([])
      expect(await s.a.get(job.id)).toMatchObject({ status: 'running', lease_owner: 'wrk_a', attempts: 1 })
    })

    // (SQLite runs one write transaction at a time: the claim and the end cannot overlap there)
    test.if(b.name === 'postgres')('a run\'s end and another node\'s claim of the same row at the same moment: exactly one wins, and the rows agree', async () => {
      const s = await setup()
      const old = (await claimAt(s.a, 'wrk_a', 0))!
      // the new claim commits while the old run's end is being attempted from the other store
      const [taken, ended] = await Promise.all([
        claimAt(s.b, 'wrk_b', LEASE + 1),
        s.a.end(leaseOf(old), 'done', null, iso(LEASE + 1), s.mark(s.db, old.id, 'a: result')).then(() => 'ended', () => 'refused'),
      ])
      // exactly one of the two won; whichever did, the row and the marks agree
      const row = (await s.a.get(old.id))!
      if (ended === 'ended') {
        expect(taken).toBeNull()
        expect(row).toMatchObject({ status: 'done', lease_owner: 'wrk_a', attempts: 1 })
        expect(await s.marks()).toEqual([{ job_id: old.id, by: 'a: result' }])
      } else {
        expect(taken).toMatchObject({ lease_owner: 'wrk_b', attempts: 2 })
        expect(row).toMatchObject({ status: 'running', lease_owner: 'wrk_b', attempts: 2 })
        expect(await s.marks()).toEqual([])
      }
    })

    test('a retry gives the lease up: queued again, due at its time, claimable then by anyone', async () => {
      const s = await setup()
      const job = (await claimAt(s.a, 'wrk_a', 0))!
      expect(await s.a.retry(leaseOf(job), iso(2), 'hiccup', iso(1))).toBe(true)
      expect(await s.a.get(job.id)).toMatchObject({ status: 'queued', lease_owner: null, lease_expires_at: null, last_error: 'hiccup', attempts: 1 })
      expect(await claimAt(s.b, 'wrk_b', 1)).toBeNull()
      expect(await claimAt(s.b, 'wrk_b', 2)).toMatchObject({ lease_owner: 'wrk_b', attempts: 2 })
    })

    test('a run whose lease ran out is taken first, then queued jobs oldest first', async () => {
      const s = await setup(3)
      expect((await claimAt(s.a, 'wrk_a', 0))!.id).toBe('job_0000')
      expect((await claimAt(s.b, 'wrk_b', LEASE + 1))!.id).toBe('job_0000')
      expect((await claimAt(s.b, 'wrk_b', LEASE + 1))!.id).toBe('job_0001')
      expect((await claimAt(s.b, 'wrk_b', LEASE + 1))!.id).toBe('job_0002')
      expect(await claimAt(s.b, 'wrk_b', LEASE + 1)).toBeNull()
    })

    test('a takeover is counted when a lease runs out or its worker is found gone, never for a retry or a shutdown release', async () => {
      const s = await setup(1)
      const first = (await claimAt(s.a, 'wrk_a', 0))!
      expect(first).toMatchObject({ id: 'job_0000', attempts: 1, takeovers: 0 })
      // its worker died: the lease runs out and another claims it
      const taken = (await claimAt(s.b, 'wrk_b', LEASE))!
      expect(taken).toMatchObject({ id: 'job_0000', attempts: 2, takeovers: 1, lease_owner: 'wrk_b' })
      // wrk_b's process is found gone by a restart on its host: released, counted
      expect(await s.a.releaseOwner('wrk_b', iso(LEASE + 1))).toBe(1)
      expect(await s.a.get('job_0000')).toMatchObject({ status: 'queued', takeovers: 2, lease_owner: null })
      // a retry and a release at shutdown give the lease up alive: not counted
      const third = (await claimAt(s.a, 'wrk_c', LEASE + 2))!
      expect(third).toMatchObject({ id: 'job_0000', attempts: 3, takeovers: 2 })
      expect(await s.a.retry(leaseOf(third), iso(LEASE + 2), 'interrupted by shutdown', iso(LEASE + 2))).toBe(true)
      expect(await s.a.get('job_0000')).toMatchObject({ status: 'queued', attempts: 3, takeovers: 2 })
    })

    test.if(b.name === 'sqlite')('the claim reads the queue\'s index: no scan, no sort, however long the queue', async () => {
      const s = await setup()
      const plan = (s.db as SqliteStore).db.query<{ detail: string }, (string | number)[]>(`EXPLAIN QUERY PLAN ${s.a.claimSql}`).all('wrk_a', iso(LEASE), iso(0), iso(0), 1, iso(0), 1, 1)
      const text = plan.map(p => p.detail).join('\n')
      expect(text).toContain('SEARCH jobs USING INDEX jobs_ready (status=? AND run_after<?)')
      expect(text).not.toMatch(/SCAN jobs|TEMP B-TREE/)
    })

    test('two claimers never get the same job: 4 processes claim 400 jobs at the same instant', async () => {
      const s = await setup(400)
      await s.close()
      const startAt = Date.now() + 1500
      const outs = await Promise.all(['w1', 'w2', 'w3', 'w4'].map(w => run(['bun', 'run', 'test/fixtures/claim-worker.ts', s.target, w, String(startAt)])))
      for (const o of outs) expect(o.code).toBe(0)
      const claimed = outs.map(o => JSON.parse(o.stdout) as string[])
      const all = claimed.flat()
      console.log(`${b.name}: claims per process: ${claimed.map(c => c.length).join(', ')} (400 jobs)`)
      expect(all).toHaveLength(400)
      expect(new Set(all).size).toBe(400)
      // they did claim side by side, not one after another
      expect(claimed.filter(c => c.length > 0).length).toBeGreaterThanOrEqual(2)
    }, 30_000)
  })

  describe.skipIf(b.skip)(`worker presence on ${b.name}`, () => {
    test('live workers are those with a heartbeat within two leases, less local ones whose process is gone; a gone local worker\'s jobs return to the queue at the next start, a live one\'s and another host\'s stay', async () => {
      const s = await setup(3)
      const clock = fixedClock(iso(0))
      const leaseMs = LEASE * 1000
      const identity = (id: string, pid: number, host = 'h1') => ({ id, host, pid, pidNamespace: 'pid:[1]', isAlive: (p: number) => p === 100 || p === 300 })
      const gone = createPresence({ jobs: s.a, clock, me: identity('wrk_gone', 200), slots: 1, leaseMs })
      const alive = createPresence({ jobs: s.a, clock, me: identity('wrk_alive', 300), slots: 2, leaseMs })
      const remote = createPresence({ jobs: s.a, clock, me: identity('wrk_remote', 200, 'h2'), slots: 1, leaseMs })
      // (each start looks for gone local workers: wrk_gone, started last, finds none)
      await alive.arrive()
      await remote.arrive()
      await gone.arrive()
      // seen from another machine, every heartbeat counts; seen from h1 (pid 100), wrk_gone's process is not there
      const elsewhere = { host: 'h0', pid: 100, pidNamespace: 'pid:[1]', isAlive: () => true }
      const onH1 = identity('wrk_observer', 100)
      expect(await liveWorkers(s.a, clock, leaseMs, elsewhere)).toBe(3)
      expect(await liveWorkers(s.a, clock, leaseMs, onH1)).toBe(2)
      const j1 = (await s.a.claim('wrk_gone', iso(0), iso(LEASE)))!
      const j2 = (await s.a.claim('wrk_remote', iso(0), iso(LEASE)))!
      const j3 = (await s.a.claim('wrk_alive', iso(0), iso(LEASE)))!

      clock.advance(2 * leaseMs + 1)
      await alive.beat([])
      expect(await liveWorkers(s.a, clock, leaseMs, elsewhere)).toBe(1)
      expect(await liveWorkers(s.a, clock, leaseMs, onH1)).toBe(1)

      // a restart on h1 (pid 100): wrk_gone (pid 200 on h1) is gone, so its job is queued again now;
      // wrk_remote runs on h2, where pids of h1 say nothing: its job waits for its lease; wrk_alive's
      // process is there: its job stays with it
      const restarted = createPresence({ jobs: s.b, clock, me: identity('wrk_new', 100), slots: 1, leaseMs })
      expect(await restarted.arrive()).toBe(1)
      expect(await s.a.get(j1.id)).toMatchObject({ status: 'queued', lease_owner: null })
      expect(await s.a.get(j2.id)).toMatchObject({ status: 'running', lease_owner: 'wrk_remote' })
      expect(await s.a.get(j3.id)).toMatchObject({ status: 'running', lease_owner: 'wrk_alive' })
      expect((await s.a.workers.list()).map(w => w.id).sort()).toEqual(['wrk_alive', 'wrk_new', 'wrk_remote'])
      expect((await s.a.workers.list()).find(w => w.id === 'wrk_alive')).toMatchObject({ pid: 300, slots: 2 })
      await restarted.leave()
      expect((await s.a.workers.list()).map(w => w.id).sort()).toEqual(['wrk_alive', 'wrk_remote'])
    })
  })
}
