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
