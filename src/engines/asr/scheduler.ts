import { availableParallelism } from 'node:os'

/**
 * Slots for speech recognition, one scheduler per process (`NOTESVC_ASR_SLOTS`), shared by every batch
 * job's chunks and every live stream's decoding: at most `slots` chunks run at once, and at most `slots`
 * live decodes.
 *
 * Batch, fair between jobs: when a slot frees, the waiting chunk chosen is the one whose account holds
 * the fewest slots now, then whose job has the least audio left to start (shortest remaining first,
 * when the jobs say), then whose job holds the fewest, then the one whose account and job were served
 * longest ago (round-robin). So a 20-second memo submitted while a two-hour meeting holds every slot
 * gets the next free one and the one after it (its second chunk goes before the meeting's next, though
 * the memo then holds a slot and the meeting none: the memo no longer waits for its own first chunk,
 * the meeting waits one memo chunk), and one account running many jobs cannot keep the slots while
 * another account waits (the account's share comes before the job's remaining audio). Within one
 * account a steady stream of shorter jobs can hold a long one back; never another account's. A slot is
 * held for one chunk only, so a long job gives its slots back between chunks.
 *
 * Live beside batch (docs/decisions.md, "Live and batch share the ASR slots"): a live stream asks for
 * a slot for each few hundred ms of audio it decodes (tens of ms of a core), a chunk holds one for
 * seconds and cannot be interrupted, so:
 * - a live decode never waits for a chunk, only for other decodes: at most `slots` decodes run at once,
 *   and `slots - 1` while a chunk waits (so live never takes every slot from batch);
 * - a chunk starts only while fewer than `slots` decodes and chunks together run, and a free slot goes
 *   to a live request first: under continuous live demand a waiting chunk gets a slot as soon as live
 *   is down to `slots - 1`, and batch then holds one slot, live the others; under light live demand
 *   batch holds every slot and the decodes run beside its chunks (the cores shared by the system);
 * - with one slot they take turns: while a chunk waits, a live request goes first only once it has
 *   waited through a chunk, so a chunk waits for at most one grant per stream and a stream for at most
 *   one chunk.
 *
 * Written here rather than taken from a library: the npm limiters (p-limit, p-queue, bottleneck) are
 * FIFO or priority queues; none picks the next waiter by what the other waiters' owners hold now.
 */
export interface AsrScheduler {
  readonly slots: number
  /** Waits for a slot for one chunk of `job` (of `account`); call the returned function to give it back. */
  acquire(owner: SlotOwner, signal?: AbortSignal): Promise<() => void>
  /**
   * Waits for a slot to decode the next few hundred ms of one live stream's audio; call the returned
   * function when it is decoded. One request at a time per stream.
   */
  acquireLive(): Promise<() => void>
  /** chunks and live decodes running (live ones may run beside `slots` chunks), and requests waiting (for tests and logs) */
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

interface BatchWaiter {
  owner: SlotOwner
  seq: number
  grant: (release: () => void) => void
}

interface LiveWaiter {
  /** chunks that had ended when it asked (with one slot: it goes before a waiting chunk once one more has) */
  batchEndsBefore: number
  grant: (release: () => void) => void
}

/** The default number of slots: the machine's cores (what `os.availableParallelism()` reports). */
export function defaultAsrSlots(): number {
  return Math.max(1, Math.min(64, availableParallelism()))
}

export function createAsrScheduler(slots: number = defaultAsrSlots()): AsrScheduler {
  if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`ASR slots must be a whole number of at least 1, not ${slots}`)
  return new SlotScheduler(slots)
}

class SlotScheduler implements AsrScheduler {
  readonly #batch: BatchWaiter[] = []
  readonly #live: LiveWaiter[] = []
  readonly #heldByJob = new Map<string, number>()
  readonly #heldByAccount = new Map<string, number>()
  /** when each job and account was last given a slot (a counter, not a clock) */
  readonly #lastServed = new Map<string, number>()
  #batchRunning = 0
  #liveRunning = 0
  #batchEnds = 0
  #seq = 0
  #turn = 0

  constructor(readonly slots: number) {}

  acquire(owner: SlotOwner, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted()
    return new Promise((resolve, reject) => {
      const w: BatchWaiter = {
        owner,
        seq: this.#seq++,
        grant: release => {
          signal?.removeEventListener('abort', onAbort)
          resolve(release)
        },
      }
      const onAbort = () => {
        const i = this.#batch.indexOf(w)
        if (i >= 0) this.#batch.splice(i, 1)
        reject(signal!.reason)
        // live may have been held to `slots - 1` for it
        this.#dispatch()
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#batch.push(w)
      this.#dispatch()
    })
  }

  acquireLive(): Promise<() => void> {
    return new Promise(resolve => {
      this.#live.push({ batchEndsBefore: this.#batchEnds, grant: resolve })
      this.#dispatch()
    })
  }

  stats() {
    return { running: this.#batchRunning + this.#liveRunning, waiting: this.#batch.length + this.#live.length }
  }

  #dispatch(): void {
    for (;;) {
      if (this.#live.length && this.#liveMayStart(this.#live[0]!)) {
        this.#live.shift()!.grant(this.#giveLive())
      } else if (this.#batch.length && this.#batchRunning + this.#liveRunning < this.slots) {
        const [w] = this.#batch.splice(this.#pickBatch(), 1)
        w!.grant(this.#giveBatch(w!.owner))
      } else return
    }
  }

  /** The oldest live request, unless `slots` decodes run (`slots - 1` while a chunk waits; with one slot: turns). */
  #liveMayStart(w: LiveWaiter): boolean {
    if (!this.#batch.length) return this.#liveRunning < this.slots
    if (this.slots === 1) return this.#liveRunning === 0 && w.batchEndsBefore < this.#batchEnds
    return this.#liveRunning < this.slots - 1
  }

  #giveLive(): () => void {
    this.#liveRunning++
    let released = false
    return () => {
      if (released) return
      released = true
      this.#liveRunning--
      this.#dispatch()
    }
  }

  #giveBatch(owner: SlotOwner): () => void {
    this.#batchRunning++
    bump(this.#heldByJob, owner.job, 1)
    bump(this.#heldByAccount, owner.account, 1)
    this.#turn++
    this.#lastServed.set(`a:${owner.account}`, this.#turn)
    this.#lastServed.set(`j:${owner.job}`, this.#turn)
    let released = false
    return () => {
      if (released) return
      released = true
      this.#batchRunning--
      this.#batchEnds++
      bump(this.#heldByJob, owner.job, -1)
      bump(this.#heldByAccount, owner.account, -1)
      if (!this.#heldByJob.has(owner.job) && !this.#batch.some(w => w.owner.job === owner.job)) this.#lastServed.delete(`j:${owner.job}`)
      this.#dispatch()
    }
  }

  /**
   * The fairest waiting chunk: fewest slots held by its account, then least audio left in its job, then
   * fewest slots held by its job, then served longest ago, then oldest.
   */
  #pickBatch(): number {
    const key = (w: BatchWaiter) => [
      held(this.#heldByAccount, w.owner.account),
      w.owner.remainingSeconds?.() ?? Infinity,
      held(this.#heldByJob, w.owner.job),
      this.#lastServed.get(`a:${w.owner.account}`) ?? -1,
      this.#lastServed.get(`j:${w.owner.job}`) ?? -1,
      w.seq,
    ]
    let best = 0
    let bestKey = key(this.#batch[0]!)
    for (let i = 1; i < this.#batch.length; i++) {
      const k = key(this.#batch[i]!)
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
}

const held = (m: Map<string, number>, k: string) => m.get(k) ?? 0

function bump(m: Map<string, number>, k: string, d: number) {
  const n = held(m, k) + d
  if (n === 0) m.delete(k)
  else m.set(k, n)
}
