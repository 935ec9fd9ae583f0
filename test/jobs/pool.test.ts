import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { systemClock, type Clock } from '../../src/clock'
import { databaseClock } from '../../src/jobs/database-clock'
import { createWorkerPool } from '../../src/jobs/worker'
import { createJobKinds, PermanentJobError, type JobHandler, type JobKind } from '../../src/jobs/kinds'
import { createJobWakeup } from '../../src/jobs/wakeup'
import { leaseOf, type JobsRepo } from '../../src/jobs/repo'
import type { RetryPolicy } from '../../src/jobs/queue'
import { tempDir, until } from '../helpers/process'
import { queueDb } from '../helpers/queue'
import { backEnds } from '../helpers/backends'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

const dir = tempDir('notesvc-pool-')
afterAll(() => dir.remove())

/** Log lines kept in memory. */
function memoryLog() {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = []
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => { lines.push({ level, msg, ...fields }) }
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

function pool(jobs: JobsRepo, handler: JobHandler, o: { workers?: number; leaseMs?: number; onFailure?: () => void; id?: string; pollMs?: number; wakeup?: ReturnType<typeof createJobWakeup>; clock?: Clock; retries?: RetryPolicy; kind?: Partial<JobKind> } = {}) {
  const mem = memoryLog()
  /** how each run ended, as the metrics are told (notesvc_jobs_total) */
  const outcomes: string[] = []
  // one kind of one stage, as the queue helper queues them
  const kinds = createJobKinds()
  kinds.add({ kind: 'process_upload', stages: [{ name: 'run', run: handler }], onFailure: o.onFailure ?? (() => {}), ...o.kind })
  const p = createWorkerPool({
    jobs, clock: o.clock ?? systemClock, log: mem.log, workers: o.workers ?? 1, leaseMs: o.leaseMs ?? 600, pollMs: o.pollMs, wakeup: o.wakeup, retries: o.retries,
    kinds,
    identity: { id: o.id ?? 'wrk_pool', host: 'test', pid: process.pid, pidNamespace: null, isAlive: () => true },
    onOutcome: outcome => outcomes.push(outcome),
  })
  return { ...p, lines: mem.lines, outcomes }
}

type Queue = Awaited<ReturnType<typeof queueDb>>

/** Another worker takes the job as if this one had been paused past its lease (its clock ahead). */
function takeOver(q: Queue) {
  const later = Date.now() + 60_000
  return q.b.claim('wrk_other', new Date(later).toISOString(), new Date(later + 60_000).toISOString())
}

for (const b of backEnds) describe.skipIf(b.skip)(`the worker pool under leases on ${b.name}`, () => {
  test('a run that lost its lease is told to stop, and neither its result nor its end is written', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    let started = false
    let stopReason: unknown = null
    const p = pool(q.a, async (job, run) => {
      started = true
      await run.write(q.mark(q.db, job.id, 'stage'))
      await new Promise<void>(resolve => run.signal.addEventListener('abort', () => resolve(), { once: true }))
      stopReason = run.signal.reason
      // a handler that carries on regardless: its result is refused
      return q.mark(q.db, job.id, 'result')
    })
    await p.start()
    await until('the job runs', () => started)
    const taken = (await takeOver(q))!
    expect(taken).toMatchObject({ id: 'job_0000', attempts: 2, lease_owner: 'wrk_other' })
    await until('the pool lets the run go', () => p.busy() === 0)
    await p.stop()
    expect(String(stopReason)).toContain('no longer holds the lease')
    expect(await q.marks()).toEqual([{ job_id: 'job_0000', by: 'stage' }])
    expect(await q.a.get('job_0000')).toMatchObject({ status: 'running', attempts: 2, lease_owner: 'wrk_other' })
    expect(p.lines.filter(l => l.level !== 'info').map(l => l.msg)).toEqual(['job no longer held by this run (another worker took it after its lease ran out, or its note was deleted); nothing of this run was written'])
    await q.close()
  })

  test('a run that fails for good after losing its lease neither fails the job nor refunds', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    let started = false
    let failures = 0
    const p = pool(q.a, async (_job, run) => {
      started = true
      await new Promise<void>(resolve => run.signal.addEventListener('abort', () => resolve(), { once: true }))
      throw new PermanentJobError('media_unreadable', 'late failure')
    }, { onFailure: () => failures++ })
    await p.start()
    await until('the job runs', () => started)
    await takeOver(q)
    await until('the pool lets the run go', () => p.busy() === 0)
    await p.stop()
    expect(failures).toBe(0)
    expect(await q.a.get('job_0000')).toMatchObject({ status: 'running', lease_owner: 'wrk_other', last_error: null })
    await q.close()
  })

  test('heartbeats keep a long run\'s lease: a job running for 5 leases stays with its worker and finishes once', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    // 600 ms: a heartbeat every 200 ms keeps it even when a loaded machine stalls the loop a few
    // hundred ms (with 300 ms it was lost once under load, and the loop below never ended)
    const leaseMs = 600
    let runs = 0
    const p = pool(q.a, async (job) => {
      runs++
      await Bun.sleep(5 * leaseMs)
      return q.mark(q.db, job.id, 'result')
    }, { leaseMs })
    await p.start()
    // the pool's own first claim first (under load it can come after a claim by the loop below, which
    // then takes a job nobody held: not what is tested here)
    await until('the pool claims the job', async () => ((await q.a.get('job_0000'))?.lease_owner === 'wrk_pool' ? true : null))
    // another worker polling all along never gets it
    const other: string[] = []
    while ((await q.a.get('job_0000'))!.status !== 'done' && other.length === 0) {
      const at = new Date()
      const got = await q.b.claim('wrk_other', at.toISOString(), new Date(at.getTime() + leaseMs).toISOString())
      if (got) other.push(got.id)
      await Bun.sleep(50)
    }
    await p.stop()
    expect(other).toEqual([])
    expect(runs).toBe(1)
    expect(await q.marks()).toEqual([{ job_id: 'job_0000', by: 'result' }])
    expect(await q.a.get('job_0000')).toMatchObject({ status: 'done', attempts: 1, lease_owner: 'wrk_pool' })
    await q.close()
  })

  test('a job whose worker died (claimed, then no heartbeat) is taken by this pool once the lease runs out, and finished once', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    // a worker on the other store claims it for 400 ms and is never heard from again
    const at = new Date()
    const dead = (await q.b.claim('wrk_dead', at.toISOString(), new Date(at.getTime() + 400).toISOString()))!
    const runs: number[] = []
    const p = pool(q.a, async job => { runs.push(job.attempts) }, { pollMs: 100 })
    await p.start()
    await until('the job is done', async () => (await q.a.get(dead.id))?.status === 'done')
    await p.stop()
    expect(runs).toEqual([2])
    expect(await q.a.get(dead.id)).toMatchObject({ status: 'done', attempts: 2, lease_owner: 'wrk_pool' })
    // the metrics: one run started on a job taken over, then done
    expect(p.outcomes).toEqual(['taken_over', 'done'])
    await q.close()
  })

  test('the metrics are told each run\'s end: a transient failure retried, then one for good failed', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    let runs = 0
    const p = pool(q.a, async () => {
      runs++
      throw runs === 1 ? new Error('engine hiccup') : new PermanentJobError('media_unreadable', 'not audio')
    }, { pollMs: 50, retries: { delaysMs: [10], maxAttempts: 3, giveUpAfterMs: Number.POSITIVE_INFINITY } })
    await p.start()
    await until('the job failed', () => p.outcomes.includes('failed'))
    await p.stop()
    // a wrong one-line change (retried counted as failed, or a retry not told) changes this list
    expect(p.outcomes).toEqual(['retried', 'failed'])
    await q.close()
  })

  test('a kind\'s own retry policy: two runs, then failed for good, where the pool\'s default would make a third', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    let runs = 0
    let failures = 0
    const p = pool(q.a, async () => {
      runs++
      throw new Error('engine hiccup')
    }, { pollMs: 50, onFailure: () => failures++, kind: { retries: { delaysMs: [10], maxAttempts: 2, giveUpAfterMs: Number.POSITIVE_INFINITY } } })
    await p.start()
    await until('the job failed', () => p.outcomes.includes('failed'))
    await p.stop()
    expect([runs, failures, p.outcomes]).toEqual([2, 1, ['retried', 'failed']])
    expect(await q.a.get('job_0000')).toMatchObject({ status: 'failed', attempts: 2, last_error: 'engine hiccup' })
    await q.close()
  })

  test('a kind of two stages: the first one\'s result is written with the row\'s next stage, a retry starts at the stage that failed, and the failure rule is told which', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    const ran: string[] = []
    const told: string[] = []
    const p = pool(q.a, async () => {}, {
      pollMs: 50,
      kind: {
        stages: [
          { name: 'first', run: async job => { ran.push('first'); return q.mark(q.db, job.id, 'first') } },
          { name: 'second', run: async () => { ran.push('second'); throw new Error('engine hiccup') } },
        ],
        retries: { delaysMs: [10], maxAttempts: 3, giveUpAfterMs: Number.POSITIVE_INFINITY },
        onFailure: (_job, _err, stage) => { told.push(stage.name) },
      },
    })
    await p.start()
    await until('the job failed', () => p.outcomes.includes('failed'))
    await p.stop()
    expect(ran).toEqual(['first', 'second', 'second', 'second'])
    expect(await q.marks()).toEqual([{ job_id: 'job_0000', by: 'first' }])
    expect(told).toEqual(['second'])
    expect(await q.a.get('job_0000')).toMatchObject({ status: 'failed', stage: 'second', attempts: 3, last_error: 'engine hiccup' })
    await q.close()
  })

  test('stopping gives running jobs back to the queue at once and leaves the workers table', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    let started = false
    const p = pool(q.a, async (_job, run) => {
      started = true
      await new Promise((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason), { once: true }))
    })
    await p.start()
    await until('the job runs', () => started)
    expect((await q.a.workers.list()).map(w => w.id)).toEqual(['wrk_pool'])
    await p.stop()
    expect(await q.a.get('job_0000')).toMatchObject({ status: 'queued', lease_owner: null, lease_expires_at: null, last_error: 'interrupted by shutdown' })
    expect((await q.a.workers.list())).toEqual([])
    await q.close()
  })

  test.if(b.name === 'sqlite')('a job queued through another connection (another process) is picked up within half a second, with no claim while nothing is due', async () => {
    const q = await queueDb(b.name, dir.path, 0, new Date().toISOString())
    const done: number[] = []
    let claims = 0
    const counted: JobsRepo = { ...q.a, claim: (...args) => { claims++; return q.a.claim(...args) } }
    const p = pool(counted, async () => { done.push(performance.now()) })
    await p.start()
    await Bun.sleep(700)
    // idle with nothing due: no claim (no write lock taken), only reads
    expect(claims).toBe(0)
    const queuedAt = performance.now()
    await q.b.enqueue('job_x', 'note_1', 'process_upload', new Date().toISOString())
    await until('the job is done', async () => (await q.a.get('job_x'))?.status === 'done')
    await p.stop()
    const latency = done[0]! - queuedAt
    console.log(`picked up ${latency.toFixed(0)} ms after another connection queued it`)
    expect(latency).toBeLessThan(500)
    await q.close()
  })

  test.if(b.name === 'postgres')('a job queued through one store (one node) wakes the idle worker of a pool on another store at once, by NOTIFY, not by its poll', async () => {
    const q = await queueDb(b.name, dir.path, 0, new Date().toISOString())
    // the poll (what looks for jobs due with time alone) would first look a minute after the start:
    // a job done before then was found through the notification
    const POLL_MS = 60_000
    const wakeup = createJobWakeup()
    const done: string[] = []
    let claims = 0
    const counted: JobsRepo = { ...q.a, claim: (...args) => { claims++; return q.a.claim(...args) } }
    const p = pool(counted, async job => { done.push(job.id) }, { pollMs: POLL_MS, wakeup })
    const startedAt = Date.now()
    await p.start()
    await until('the worker is idle', () => wakeup.idle() === 1)
    expect(claims).toBe(0)

    // another node queues it; nothing in this process is told but through PostgreSQL
    await q.b.enqueue('job_x', 'note_1', 'process_upload', new Date().toISOString())
    await until('the job is done', async () => (await q.a.get('job_x'))?.status === 'done', POLL_MS / 2)
    const job = (await q.a.get('job_x'))!
    expect(done).toEqual(['job_x'])
    expect(job).toMatchObject({ status: 'done', lease_owner: 'wrk_pool', attempts: 1 })
    expect(Date.parse(job.updated_at) - startedAt).toBeLessThan(POLL_MS)
    // and a job queued in a transaction that rolls back wakes nobody to find anything
    await q.other.transaction(async () => {
      await q.b.enqueue('job_y', 'note_1', 'process_upload', new Date().toISOString())
      throw new Error('rolled back')
    }).catch(() => {})
    expect(await q.a.get('job_y')).toBeNull()
    await p.stop()
    expect(claims).toBe(1)
    await q.close()
  })

  test.if(b.name === 'postgres')('machines whose clocks disagree by a minute agree on the database\'s time: a job queued on the one ahead is claimed at once by an idle worker on the one behind', async () => {
    const q = await queueDb(b.name, dir.path, 0, new Date().toISOString())
    const ahead: Clock = { now: () => new Date(Date.now() + 30_000) }
    const behind: Clock = { now: () => new Date(Date.now() - 30_000) }
    const POLL_MS = 120_000
    const wakeup = createJobWakeup()
    const p = pool(q.a, async () => {}, { pollMs: POLL_MS, wakeup, clock: behind })
    await p.start()
    await until('the worker is idle', () => wakeup.idle() === 1)
    // the node ahead queues it in the database's time, as services.ts does
    const queuing = databaseClock(q.b, ahead)
    await queuing.fresh()
    const { at, runAfter } = queuing.queueTimes()
    expect(Math.abs(Date.parse(at) - Date.now())).toBeLessThan(5_000)
    await q.b.enqueue('job_x', 'note_1', 'process_upload', at, runAfter)
    // by its own clock the worker would see the job due in a minute, after its poll; it is taken now
    await until('the job is done', async () => (await q.a.get('job_x'))?.status === 'done', 20_000)
    await p.stop()
    expect(await q.a.get('job_x')).toMatchObject({ status: 'done', attempts: 1, lease_owner: 'wrk_pool' })
    await q.close()
  })

  test('with 0 workers the pool takes no job and does not register', async () => {
    const q = await queueDb(b.name, dir.path, 1, new Date().toISOString(), { oneSqliteConnection: true })
    const p = pool(q.a, async () => {}, { workers: 0 })
    expect(await p.start()).toBe(0)
    await Bun.sleep(300)
    await p.stop()
    expect((await q.a.get('job_0000'))!.status).toBe('queued')
    expect((await q.a.workers.list())).toEqual([])
    expect(leaseOf((await q.a.get('job_0000'))!).owner).toBeNull()
    await q.close()
  })
})

