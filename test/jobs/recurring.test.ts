/**
 * Recurring work on the leased queue (src/jobs/recurring.ts), on both back ends: one run at a time
 * across processes, put back in the queue due at its next time when it ends (also when it failed),
 * and taken over by another process once the lease of one that died runs out.
 */
import { describe, expect, test } from 'bun:test'
import { backEnds } from '../helpers/backends'
import { fixedClock } from '../../src/clock'
import { silentLogger } from '../../src/log'
import { createRecurringJobs, runIfDue, scheduleRecurring } from '../../src/jobs/recurring'
import { until } from '../helpers/process'

const T0 = '2026-06-01T00:00:00.000Z'
const HOUR = 3_600_000

for (const b of backEnds) describe.skipIf(b.skip)(`recurring tasks on ${b.name}`, () => {
  test('one run at a time: a second process finds the row held; the end requeues it an interval later', async () => {
    const store = await b.open()
    try {
      const rows = createRecurringJobs(store)
      const clock = Object.assign(fixedClock(T0), { fresh: async () => {} })
      await rows.ensure('sweep', T0, T0)
      let release!: () => void
      const held = new Promise<void>(r => { release = r })
      let runs = 0
      const task = { id: 'sweep', everyMs: HOUR, run: async () => { runs++; await held } }
      const first = runIfDue({ rows, clock, owner: 'wrk_a', leaseMs: 60_000, log: silentLogger }, task)
      await until('the first run holds the row', async () => (await rows.get('sweep'))?.status === 'running')
      // another node at the same moment: not claimed, not run
      expect(await runIfDue({ rows, clock, owner: 'wrk_b', leaseMs: 60_000, log: silentLogger }, task)).toEqual({ ran: false })
      release()
      expect((await first).ran).toBe(true)
      expect(runs).toBe(1)
      const row = (await rows.get('sweep'))!
      expect({ status: row.status, run_after: row.run_after, lease_owner: row.lease_owner, last_error: row.last_error }).toEqual({ status: 'queued', run_after: '2026-06-01T01:00:00.000Z', lease_owner: null, last_error: null })
      // not due again before its time
      expect(await runIfDue({ rows, clock, owner: 'wrk_b', leaseMs: 60_000, log: silentLogger }, task)).toEqual({ ran: false })
      clock.set('2026-06-01T01:00:00.000Z')
      expect((await runIfDue({ rows, clock, owner: 'wrk_b', leaseMs: 60_000, log: silentLogger }, { ...task, run: async () => { runs++ } })).ran).toBe(true)
      expect(runs).toBe(2)
    } finally {
      await store.close()
    }
  })

  test('a process that died mid-run: its lease runs out and another takes the row over', async () => {
    const store = await b.open()
    try {
      const rows = createRecurringJobs(store)
      await rows.ensure('sweep', T0, T0)
      // the dead process's claim, never renewed nor ended
      expect((await rows.claim('wrk_dead', T0, '2026-06-01T00:01:00.000Z', 1)).length).toBe(1)
      const clock = Object.assign(fixedClock('2026-06-01T00:00:30.000Z'), { fresh: async () => {} })
      const task = { id: 'sweep', everyMs: HOUR, run: async () => {} }
      expect((await runIfDue({ rows, clock, owner: 'wrk_b', leaseMs: 60_000, log: silentLogger }, task)).ran).toBe(false)
      clock.set('2026-06-01T00:01:00.000Z')
      expect((await runIfDue({ rows, clock, owner: 'wrk_b', leaseMs: 60_000, log: silentLogger }, task)).ran).toBe(true)
      expect((await rows.get('sweep'))!.takeovers).toBe(1)
    } finally {
      await store.close()
    }
  })

  test('a failed run keeps its error and is due again at its next time; the schedule runs a due row by itself', async () => {
    const store = await b.open()
    try {
      const rows = createRecurringJobs(store)
      const clock = Object.assign(fixedClock(T0), { fresh: async () => {} })
      await rows.ensure('sweep', T0, T0)
      const failing = { id: 'sweep', everyMs: HOUR, run: async () => { throw new Error('S3 answered 503') } }
      await expect(runIfDue({ rows, clock, owner: 'wrk_a', leaseMs: 60_000, log: silentLogger }, failing)).rejects.toThrow('S3 answered 503')
      const row = (await rows.get('sweep'))!
      expect([row.status, row.run_after, row.last_error]).toEqual(['queued', '2026-06-01T01:00:00.000Z', 'S3 answered 503'])

      clock.set('2026-06-01T01:00:00.000Z')
      let ran = 0
      const stop = scheduleRecurring({ rows, clock, owner: 'wrk_a', leaseMs: 60_000, log: silentLogger, pollMs: 20, firstAfterMs: HOUR }, { id: 'sweep', everyMs: HOUR, run: async () => { ran++ } })
      await until('the schedule ran the due row', () => ran === 1 || null)
      await stop()
      expect((await rows.get('sweep'))!.last_error).toBeNull()
    } finally {
      await store.close()
    }
  })
})
