import { afterEach, describe, expect, test } from 'bun:test'
import { startCluster, type Cluster } from '../helpers/cluster'
import { postgresUnavailable } from '../helpers/postgres'

/**
 * `GET /v1/health?detail` counts the job workers that are alive, for real: a `serve` (NOTESVC_WORKERS=0,
 * the API alone) and one `notesvc worker` process, the worker killed with -9 (no goodbye written to
 * the `workers` table, its last heartbeat still recent). With a lease of 30 s the heartbeat rule
 * alone would count the dead worker for another minute; a worker of this machine whose process is
 * gone is not live, and health says so at once.
 */
const LEASE_SECONDS = 30
/** how long health may take to notice: far less than the two leases a heartbeat stays recent */
const NOTICED_WITHIN_MS = 5000
const pgSkip = postgresUnavailable()

let cluster: Cluster | null = null
afterEach(async () => {
  await cluster?.stop()
  cluster = null
})

for (const backEnd of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backEnd === 'postgres' && pgSkip !== null)(`on ${backEnd}: serve (API only) and one worker process`, () => {
    test('the only worker killed with -9: health reports 0 live workers within seconds, not two leases later', async () => {
      cluster = await startCluster({ backEnd, nodes: 1, workers: 1, leaseSeconds: LEASE_SECONDS, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
      const health = async () => (await (await fetch(`${cluster!.nodes[0]!.base}/v1/health?detail`)).json()) as { database: string; workers: number }
      expect(await health()).toMatchObject({ database: backEnd, workers: 1 })

      const worker = cluster.workers[0]!
      worker.proc.kill('SIGKILL')
      await worker.proc.exited // reaped: no zombie left holding the pid
      const killedAt = Date.now()
      let workers = (await health()).workers
      while (workers !== 0 && Date.now() - killedAt < NOTICED_WITHIN_MS) {
        await Bun.sleep(100)
        workers = (await health()).workers
      }
      expect(workers).toBe(0)
      // the row is still there, its heartbeat recent: what is known is that its process is gone
      const rows = await cluster.store.all<{ pid: number | string }>('SELECT pid FROM workers')
      expect(rows.map(r => Number(r.pid))).toEqual([worker.pid])
    }, 90_000)
  })
}
