import { describe, expect, test } from 'bun:test'
import { chunked } from '../../../src/engines/asr/chunked'

describe('chunking', () => {
  test('blocks of any size become chunks of exactly the chunk size, the last one shorter, offsets in order', async () => {
    async function* blocks() {
      let v = 0
      for (const n of [3, 7, 1, 10, 4]) yield Float32Array.from({ length: n }, () => v++)
    }
    const chunks = []
    for await (const c of chunked(blocks(), 8)) chunks.push({ offset: c.offsetSamples, values: [...c.samples] })
    expect(chunks).toEqual([
      { offset: 0, values: [0, 1, 2, 3, 4, 5, 6, 7] },
      { offset: 8, values: [8, 9, 10, 11, 12, 13, 14, 15] },
      { offset: 16, values: [16, 17, 18, 19, 20, 21, 22, 23] },
      { offset: 24, values: [24] },
    ])
  })
})
