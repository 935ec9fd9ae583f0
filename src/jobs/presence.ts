import { readlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import type { Clock } from '../clock'
import type { JobsRepo, Lease, WorkerRow } from './repo'

/** A worker process as the `workers` table names it, and how to tell whether a local process lives. */
export interface WorkerIdentity {
  id: string
  host: string
  pid: number
  /** the process's pid namespace (`/proc/self/ns/pid`): pids of one host compare only within one */
  pidNamespace: string | null
  isAlive(pid: number): boolean
}

function pidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    return null
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** A process that reads the `workers` table: where it runs, and how it tells whether a process there lives. */
export type Observer = Omit<WorkerIdentity, 'id'> & { id?: string }

export function thisObserver(): Observer {
  return { host: hostname(), pid: process.pid, pidNamespace: pidNamespace(), isAlive }
}

export function thisProcess(id: string): WorkerIdentity {
  return { id, ...thisObserver() }
}

/**
 * Whether the worker of `w` is known to be gone, as `me` can tell: only for a process of its own host
 * and pid namespace (pids elsewhere say nothing), whose pid no longer runs or is `me`'s own (a row of
 * an earlier process that had this pid).
 */
function goneLocally(w: WorkerRow, me: Observer): boolean {
  if (w.id === me.id || w.host !== me.host || w.pid_namespace !== me.pidNamespace) return false
  return w.pid === me.pid || !me.isAlive(w.pid)
}

/** A worker process is live while its last heartbeat is within two leases: since this instant. */
const liveSince = (now: Date, leaseMs: number): string => new Date(now.getTime() - 2 * leaseMs).toISOString()

/**
 * The live worker processes as `me` sees them: a heartbeat within two leases, and, where `me` can
 * tell (same host and pid namespace), the process still running. A worker killed on this machine
 * (kill -9, a crash) stops counting at once rather than two leases later; one on another machine
 * counts until its heartbeat is that old.
 */
export async function liveWorkerRows(jobs: JobsRepo, now: Date, leaseMs: number, me: Observer): Promise<WorkerRow[]> {
  return (await jobs.workers.heartbeatSince(liveSince(now, leaseMs))).filter(w => !goneLocally(w, me))
}

/** How many worker processes are live, as `me` sees them. */
export async function liveWorkers(jobs: JobsRepo, clock: Clock, leaseMs: number, me: Observer): Promise<number> {
  return (await liveWorkerRows(jobs, clock.now(), leaseMs, me)).length
}

/** A worker row not seen for this long is removed at the next start of any worker. */
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000

/**
 * One worker process's presence: its row in `workers` (written by every heartbeat), the leases of
 * the jobs it runs (extended by the same heartbeat), and at start the jobs of local workers that are
 * gone (same host and pid namespace, process no longer there: a crash or `kill -9` before a restart),
 * which go back to the queue at once instead of after their lease.
 */
export function createPresence(o: { jobs: JobsRepo; clock: Clock; me: WorkerIdentity; slots: number; leaseMs: number }) {
  const { jobs, clock, me } = o
  const startedAt = clock.now().toISOString()
  const row = (at: string): WorkerRow => ({
    id: me.id, host: me.host, pid: me.pid, pid_namespace: me.pidNamespace, slots: o.slots, started_at: startedAt, heartbeat_at: at,
  })
  return {
    /** Registers this process; returns how many jobs of gone local workers went back to the queue. */
    async arrive(): Promise<number> {
      const now = clock.now()
      const at = now.toISOString()
      await jobs.heartbeat(row(at), [], at)
      let released = 0
      for (const w of await jobs.workers.list()) {
        if (w.id === me.id) continue
        // a pid this process now has belonged to a process that is gone
        const gone = goneLocally(w, me)
        const forgotten = w.heartbeat_at < new Date(now.getTime() - FORGET_AFTER_MS).toISOString()
        if (!gone && !forgotten) continue
        released += await jobs.releaseOwner(w.id, at)
        await jobs.workers.remove(w.id)
      }
      return released
    },
    /** The row's heartbeat and the leases of `running`, in one transaction; returns the leases lost. */
    beat(running: Lease[]): Promise<Lease[]> {
      const now = clock.now()
      return jobs.heartbeat(row(now.toISOString()), running, new Date(now.getTime() + o.leaseMs).toISOString())
    },
    async leave(): Promise<void> {
      await jobs.workers.remove(me.id)
    },
  }
}
