import { describe, expect, test } from 'bun:test'
import { createAsrScheduler } from '../../../src/engines/asr/scheduler'

describe('ASR chunk slots', () => {
  test('a job that holds no slot is served before the waiting chunks of a job that holds them all', async () => {
    const s = createAsrScheduler(2)
    const long = { job: 'meeting', account: 'a' }
    const held = [await s.acquire(long), await s.acquire(long)]
    const order: string[] = []
    const waits = [
      s.acquire(long).then(r => { order.push('meeting'); return r }),
      s.acquire(long).then(r => { order.push('meeting'); return r }),
      s.acquire({ job: 'memo', account: 'a' }).then(r => { order.push('memo'); return r }),
    ]
    expect(s.stats()).toEqual({ running: 2, waiting: 3 })
    held[0]!()
    await Bun.sleep(0)
    expect(order).toEqual(['memo'])
    held[1]!()
    await Bun.sleep(0)
    expect(order).toEqual(['memo', 'meeting'])
    for (const w of [waits[2]!, waits[0]!, waits[1]!]) (await w)()
    expect(s.stats()).toEqual({ running: 0, waiting: 0 })
  })

  test('one account cannot keep every slot while another account waits', async () => {
    const s = createAsrScheduler(2)
    const a1 = { job: 'a1', account: 'alice' }
    const a2 = { job: 'a2', account: 'alice' }
    const held = [await s.acquire(a1), await s.acquire(a2)]
    const order: string[] = []
    const waits = [
      s.acquire(a1).then(r => { order.push('a1'); return r }),
      s.acquire({ job: 'a3', account: 'alice' }).then(r => { order.push('a3'); return r }),
      s.acquire({ job: 'b1', account: 'bob' }).then(r => { order.push('b1'); return r }),
    ]
    held[0]!()
    await Bun.sleep(0)
    // a3 holds no slot either, but its account holds one: bob's job goes first
    expect(order).toEqual(['b1'])
    held[1]!()
    await Bun.sleep(0)
    expect(order).toEqual(['b1', 'a3'])
    for (const w of [waits[2]!, waits[1]!, waits[0]!]) (await w)()
    expect(s.stats()).toEqual({ running: 0, waiting: 0 })
  })

  test("a memo's last chunk goes before a long job's next one, though the memo holds a slot and the long job none", async () => {
    // the pipeline's case: a 601-s recording in chunks of 42.9 s holds both slots, one more chunk
    // decoded and waiting; a 21-s memo of the same account comes in as two chunks of 10.5 s
    const s = createAsrScheduler(2)
    let meetingLeft = 601
    let memoLeft = 21
    const meeting = { job: 'meeting', account: 'a', remainingSeconds: () => meetingLeft }
    const memo = { job: 'memo', account: 'a', remainingSeconds: () => memoLeft }
    const order: string[] = []
    const grant = (owner: typeof meeting, seconds: number) => s.acquire(owner).then(release => {
      order.push(owner.job)
      if (owner === meeting) meetingLeft -= seconds
      else memoLeft -= seconds
      return release
    })
    const meeting1 = await grant(meeting, 42.9)
    const meeting2 = await grant(meeting, 42.9)
    const meeting3 = grant(meeting, 42.9)
    const memo1 = grant(memo, 10.5)
    const memo2 = grant(memo, 10.5)
    await Bun.sleep(0)
    expect(order).toEqual(['meeting', 'meeting'])

    meeting1()
    await Bun.sleep(0)
    expect(order.slice(2)).toEqual(['memo'])
    // the meeting's chunk done, its next one decoded and waiting beside its third
    const meeting4 = grant(meeting, 42.9)
    meeting2()
    await Bun.sleep(0)
    expect(order.slice(2)).toEqual(['memo', 'memo'])
    ;(await memo1)()
    await Bun.sleep(0)
    expect(order.slice(2)).toEqual(['memo', 'memo', 'meeting'])
    ;(await memo2)()
    for (const w of [meeting3, meeting4]) (await w)()
    expect(s.stats()).toEqual({ running: 0, waiting: 0 })
  })

  test("another account's share comes before a shorter job: the account holding fewer slots is served first", async () => {
    const s = createAsrScheduler(2)
    const memo = { job: 'memo', account: 'alice', remainingSeconds: () => 10 }
    const meeting = { job: 'meeting', account: 'bob', remainingSeconds: () => 3600 }
    const held = [await s.acquire(memo), await s.acquire(meeting)]
    const order: string[] = []
    const waits = [
      s.acquire(memo).then(r => { order.push('memo'); return r }),
      s.acquire(meeting).then(r => { order.push('meeting'); return r }),
    ]
    held[1]!()
    await Bun.sleep(0)
    // bob now holds none, alice one: bob's long job goes before alice's short one
    expect(order).toEqual(['meeting'])
    held[0]!()
    await Bun.sleep(0)
    expect(order).toEqual(['meeting', 'memo'])
    for (const w of waits) (await w)()
    expect(s.stats()).toEqual({ running: 0, waiting: 0 })
  })

  test('a waiting request that is aborted leaves the queue', async () => {
    const s = createAsrScheduler(1)
    const release = await s.acquire({ job: 'j', account: 'a' })
    const stop = new AbortController()
    const waiting = s.acquire({ job: 'k', account: 'a' }, stop.signal)
    stop.abort(new Error('job cancelled'))
    await expect(waiting).rejects.toThrow('job cancelled')
    expect(s.stats()).toEqual({ running: 1, waiting: 0 })
    release()
    expect(s.stats()).toEqual({ running: 0, waiting: 0 })
  })
})

/**
 * Fake owners driven by hand: each grant is held until the test gives it back, so every order below is
 * the scheduler's, not a timer's. A stream with continuous demand asks again as soon as it gives back.
 */
function harness(slots: number) {
  const s = createAsrScheduler(slots)
  /** who was granted a slot, in order */
  const log: string[] = []
  const held: Array<{ name: string; live: boolean; release: () => void }> = []
  let batchWaiting = 0
  let mostLiveWhileBatchWaited = 0
  const liveHeld = () => held.filter(h => h.live).length

  function stream(name: string) {
    const ask = (): Promise<void> => s.acquireLive().then(release => {
      log.push(name)
      held.push({ name, live: true, release })
      if (batchWaiting > 0) mostLiveWhileBatchWaited = Math.max(mostLiveWhileBatchWaited, liveHeld())
    })
    return { name, ask }
  }
  function chunk(owner: { job: string; account: string; remainingSeconds?: () => number }, signal?: AbortSignal) {
    batchWaiting++
    return s.acquire(owner, signal).then(
      release => {
        batchWaiting--
        log.push(owner.job)
        held.push({ name: owner.job, live: false, release })
      },
      err => {
        batchWaiting--
        throw err
      },
    )
  }
  /** gives back the oldest slot `name` holds; a stream passed as `again` asks for its next one at once */
  async function release(name: string, again?: { ask: () => Promise<void> }) {
    const i = held.findIndex(h => h.name === name)
    if (i < 0) throw new Error(`${name} holds no slot`)
    held.splice(i, 1)[0]!.release()
    if (again) void again.ask()
    await Bun.sleep(0)
  }
  /** the stream that has held its slot longest gives it back and asks again */
  const nextLiveGrant = (streams: Array<{ name: string; ask: () => Promise<void> }>) => {
    const oldest = held.find(h => h.live)!
    return release(oldest.name, streams.find(st => st.name === oldest.name))
  }
  return { s, log, stream, chunk, release, nextLiveGrant, mostLiveWhileBatchWaited: () => mostLiveWhileBatchWaited }
}

describe('live streams beside batch chunks', () => {
  test('a live decode never waits for a chunk: with chunks in every slot it runs at once beside them; while a chunk waits, live decodes one at a time (slots - 1)', async () => {
    const h = harness(2)
    for (const job of ['meeting', 'lecture', 'meeting', 'lecture']) void h.chunk({ job, account: job })
    await Bun.sleep(0)
    expect(h.log).toEqual(['meeting', 'lecture'])
    const [s1, s2] = ['s1', 's2'].map(h.stream)
    void s1!.ask()
    void s2!.ask()
    await Bun.sleep(0)
    expect(h.log).toEqual(['meeting', 'lecture', 's1'])
    expect(h.s.stats()).toEqual({ running: 3, waiting: 3 })
    // 20 grants in a row, one stream after the other, while both jobs' chunks run and wait
    for (let i = 0; i < 10; i++) {
      await h.release('s1', s1)
      await h.release('s2', s2)
    }
    expect(h.log.slice(3)).toEqual(Array(10).fill(['s2', 's1']).flat())
    expect(h.s.stats()).toEqual({ running: 3, waiting: 3 })
    expect(h.mostLiveWhileBatchWaited()).toBe(1)
  })

  test('a free slot goes to a waiting live request before a waiting chunk when either may take it', async () => {
    const h = harness(3)
    const streams = ['s1', 's2', 's3'].map(h.stream)
    void streams[0]!.ask()
    void streams[1]!.ask()
    for (let i = 0; i < 2; i++) void h.chunk({ job: 'meeting', account: 'a' })
    void streams[2]!.ask()
    await Bun.sleep(0)
    // every slot taken (two decodes, a chunk); s3 waits (two decodes while a chunk waits), and a chunk
    expect(h.log).toEqual(['s1', 's2', 'meeting'])
    await h.release('s1')
    expect(h.log.slice(3)).toEqual(['s3'])
    expect(h.s.stats()).toEqual({ running: 3, waiting: 1 })
  })

  test('batch never starves under continuous live demand: 3 streams always asking, a 5-chunk job gets a slot whenever a chunk of it ends, and the streams go on meanwhile', async () => {
    const h = harness(2)
    const streams = ['s1', 's2', 's3'].map(h.stream)
    for (const st of streams) void st.ask()
    await Bun.sleep(0)
    // no chunk waits: live may take every slot
    expect(h.log).toEqual(['s1', 's2'])
    for (let i = 0; i < 5; i++) void h.chunk({ job: 'meeting', account: 'a' })
    await Bun.sleep(0)
    await h.nextLiveGrant(streams)
    // the first slot a stream gives back goes to the chunk, not to s3, which asked before it
    expect(h.log.at(-1)).toBe('meeting')
    const liveGrantsPerChunk: number[] = []
    for (let chunk = 1; chunk <= 5; chunk++) {
      const before = h.log.length
      for (let i = 0; i < 9; i++) await h.nextLiveGrant(streams)
      liveGrantsPerChunk.push(h.log.length - before)
      const ended = h.log.length
      await h.release('meeting')
      // the slot the chunk gave back goes to the job's next chunk at once (live holds its one slot)
      if (chunk < 5) expect(h.log[ended]).toBe('meeting')
    }
    expect(h.log.filter(n => n === 'meeting')).toHaveLength(5)
    // the streams kept their slot while the chunks ran: every grant given back was given again, in turn
    expect(liveGrantsPerChunk).toEqual([9, 9, 9, 9, 9])
    expect(h.log.filter(n => n !== 'meeting').slice(0, 12)).toEqual(['s1', 's2', 's3', 's1', 's2', 's3', 's1', 's2', 's3', 's1', 's2', 's3'])
    expect(h.mostLiveWhileBatchWaited()).toBe(1)
  })

  test('with one slot they take turns: after each chunk, every stream that waited through it decodes once, then the next chunk', async () => {
    const h = harness(1)
    const streams = ['s1', 's2'].map(h.stream)
    void streams[0]!.ask()
    await Bun.sleep(0)
    for (let i = 0; i < 3; i++) void h.chunk({ job: 'meeting', account: 'a' })
    void streams[1]!.ask()
    await Bun.sleep(0)
    expect(h.log).toEqual(['s1'])
    // s1 asks again at once each time; it has not waited through a chunk, so the chunk goes first
    await h.release('s1', streams[0])
    expect(h.log).toEqual(['s1', 'meeting'])
    for (let round = 0; round < 2; round++) {
      await h.release('meeting')
      await h.nextLiveGrant(streams)
      await h.nextLiveGrant(streams)
    }
    // the last chunk runs and none waits: a stream decodes beside it
    expect(h.log).toEqual(['s1', 'meeting', 's2', 's1', 'meeting', 's2', 's1', 'meeting', 's2'])
    expect(h.mostLiveWhileBatchWaited()).toBe(1)
  })

  test("the short-behind-long rule holds while a stream decodes: a memo's two chunks go before a long job's next ones", async () => {
    const h = harness(2)
    const live = h.stream('live')
    void live.ask()
    let meetingLeft = 601
    let memoLeft = 21
    const meeting = { job: 'meeting', account: 'a', remainingSeconds: () => meetingLeft }
    const memo = { job: 'memo', account: 'a', remainingSeconds: () => memoLeft }
    const chunk = (owner: typeof meeting, seconds: number) => h.chunk(owner).then(() => {
      if (owner === meeting) meetingLeft -= seconds
      else memoLeft -= seconds
    })
    for (let i = 0; i < 3; i++) void chunk(meeting, 42.9)
    await Bun.sleep(0)
    expect(h.log).toEqual(['live', 'meeting'])
    void chunk(memo, 10.5)
    void chunk(memo, 10.5)
    await Bun.sleep(0)
    for (let i = 0; i < 3; i++) await h.release('live', live)
    await h.release('meeting')
    for (let i = 0; i < 3; i++) await h.release('live', live)
    await h.release('memo')
    for (let i = 0; i < 3; i++) await h.release('live', live)
    await h.release('memo')
    expect(h.log.filter(n => n !== 'live')).toEqual(['meeting', 'memo', 'memo', 'meeting'])
    // and the stream decoded on throughout
    expect(h.log.filter(n => n === 'live')).toHaveLength(10)
  })

  test('a waiting chunk that is cancelled lets live take the slot it kept from live at once', async () => {
    const h = harness(2)
    const [s1, s2] = ['s1', 's2'].map(h.stream)
    void h.chunk({ job: 'meeting', account: 'a' })
    void s1!.ask()
    const stop = new AbortController()
    const cancelled = h.chunk({ job: 'memo', account: 'b' }, stop.signal)
    void s2!.ask()
    await Bun.sleep(0)
    // a chunk waits, so live decodes one at a time
    expect(h.log).toEqual(['meeting', 's1'])
    stop.abort(new Error('job cancelled'))
    await expect(cancelled).rejects.toThrow('job cancelled')
    expect(h.log).toEqual(['meeting', 's1', 's2'])
  })
})
