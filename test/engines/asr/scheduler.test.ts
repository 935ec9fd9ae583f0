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
