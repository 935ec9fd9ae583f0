import { availableParallelism } from 'node:os'

/**
 * Chunk slots for speech recognition, shared by every job of the process (`NOTESVC_ASR_SLOTS`): at
 * most `slots` chunks are transcribed at once, whichever jobs they belong to.
 *
 * Fair: when a slot frees, the waiting request chosen is the one whose account holds the fewest slots
 * now, then whose job has the least audio left to start (shortest remaining first, when the jobs say),
 * then whose job holds the fewest, then the one whose account and job were served longest ago
 * (round-robin). So a 20-second memo submitted while a two-hour meeting holds every slot gets the next
 * free one and the one after it (its second chunk goes before the meeting's next, though the memo then
 * holds a slot and the meeting none: the memo no longer waits for its own first chunk, the meeting waits
 * one memo chunk), and one account running many jobs cannot keep the slots while another account waits
 * (the account's share comes before the job's remaining audio). Within one account a steady stream of
 * shorter jobs can hold a long one back; never another account's. A slot is held for one chunk only, so
 * a long job gives its slots back between chunks.
 *
 * Written here rather than taken from a library: the npm limiters (p-limit, p-queue, bottleneck) are
 * FIFO or priority queues; none picks the next waiter by what the other waiters' owners hold now.
 */
export interface AsrScheduler {
  readonly slots: number
  /** Waits for a slot for one chunk of `job` (of `account`); call the returned function to give it back. */
  acquire(owner: SlotOwner, signal?: AbortSignal): Promise<() => void>
  /** slots in use, and requests waiting (for tests and logs) */
  stats(): { running: number; waiting: number }
}

export interface SlotOwner {
  job: string
  account: string
  /**
   * Seconds of the job's audio not yet given a slot, the waiting request's chunk included; asked when a
   * slot frees. Without it (or Infinity: not yet known) the job counts as longer than any that says.
   */
  remainingSeconds?: () => number
}

interface Waiter {
  owner: SlotOwner
  seq: number
  grant: (release: () => void) => void
}

/** The default number of slots: the machine's cores (what `os.availableParallelism()` reports). */
export function defaultAsrSlots(): number {
  return Math.max(1, Math.min(64, availableParallelism()))
}

export function createAsrScheduler(slots: number = defaultAsrSlots()): AsrScheduler {
  if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`ASR slots must be a whole number of at least 1, not ${slots}`)
  const waiting: Waiter[] = []
  const heldByJob = new Map<string, number>()
  const heldByAccount = new Map<string, number>()
  /** when each job and account was last given a slot (a counter, not a clock) */
  const lastServed = new Map<string, number>()
  let running = 0
  let seq = 0
  let turn = 0

  const held = (m: Map<string, number>, k: string) => m.get(k) ?? 0
  const bump = (m: Map<string, number>, k: string, d: number) => {
    const n = held(m, k) + d
    if (n === 0) m.delete(k)
    else m.set(k, n)
  }

  /**
   * The fairest waiter: fewest slots held by its account, then least audio left in its job, then fewest
   * slots held by its job, then served longest ago, then oldest.
   */
  function pick(): number {
    let best = 0
    const key = (w: Waiter) => [
      held(heldByAccount, w.owner.account),
      w.owner.remainingSeconds?.() ?? Infinity,
      held(heldByJob, w.owner.job),
      lastServed.get(`a:${w.owner.account}`) ?? -1,
      lastServed.get(`j:${w.owner.job}`) ?? -1,
      w.seq,
    ]
    let bestKey = key(waiting[0]!)
    for (let i = 1; i < waiting.length; i++) {
      const k = key(waiting[i]!)
      for (let j = 0; j < k.length; j++) {
        if (k[j]! < bestKey[j]!) {
          best = i
          bestKey = k
          break
        }
        if (k[j]! > bestKey[j]!) break
      }
    }
    return best
  }

  function give(owner: SlotOwner): () => void {
    running++
    bump(heldByJob, owner.job, 1)
    bump(heldByAccount, owner.account, 1)
    turn++
    lastServed.set(`a:${owner.account}`, turn)
    lastServed.set(`j:${owner.job}`, turn)
    let released = false
    return () => {
      if (released) return
      released = true
      running--
      bump(heldByJob, owner.job, -1)
      bump(heldByAccount, owner.account, -1)
      if (!heldByJob.has(owner.job) && !waiting.some(w => w.owner.job === owner.job)) lastServed.delete(`j:${owner.job}`)
      dispatch()
    }
  }

  function dispatch() {
    while (running < slots && waiting.length > 0) {
      const [w] = waiting.splice(pick(), 1)
      w!.grant(give(w!.owner))
    }
  }

  return {
    slots,
    acquire(owner, signal) {
      signal?.throwIfAborted()
      if (running < slots && waiting.length === 0) return Promise.resolve(give(owner))
      return new Promise((resolve, reject) => {
        const w: Waiter = {
          owner,
          seq: seq++,
          grant: release => {
            signal?.removeEventListener('abort', onAbort)
            resolve(release)
          },
        }
        const onAbort = () => {
          const i = waiting.indexOf(w)
          if (i >= 0) waiting.splice(i, 1)
          reject(signal!.reason)
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        waiting.push(w)
        dispatch()
      })
    },
    stats: () => ({ running, waiting: waiting.length }),
  }
}
