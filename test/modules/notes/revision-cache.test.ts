import { describe, expect, test } from 'bun:test'
import { RevisionCache } from '../../../src/modules/notes/revision-cache'

describe('RevisionCache', () => {
  test('a value is given back only for the revision it was stored at', () => {
    const c = new RevisionCache(1000)
    c.set(7, 3, 'seven at 3')
    expect([c.get(7, 3), c.get(7, 4), c.get(8, 3)]).toEqual(['seven at 3', undefined, undefined])
    c.set(7, 4, 'seven at 4')
    expect([c.get(7, 3), c.get(7, 4), c.size]).toEqual([undefined, 'seven at 4', 1])
  })

  test('past its budget in characters, the oldest values go first, down to nine tenths of it', () => {
    const c = new RevisionCache(100)
    const v = (ch: string) => ch.repeat(30)
    c.set(1, 1, v('a'))
    c.set(2, 1, v('b'))
    c.set(3, 1, v('c')) // 90 characters: all kept
    expect([c.get(1, 1), c.get(2, 1), c.get(3, 1)].map(x => x?.[0])).toEqual(['a', 'b', 'c'])
    c.set(4, 1, v('d')) // 120 > 100: drop a (90 left, at most 90 allowed)
    expect([c.get(1, 1), c.get(2, 1), c.get(3, 1), c.get(4, 1)].map(x => x?.[0])).toEqual([undefined, 'b', 'c', 'd'])
    c.set(2, 2, v('B')) // replacing keeps the count right: still 90
    expect([c.size, c.get(2, 2)?.[0], c.get(3, 1)?.[0]]).toEqual([3, 'B', 'c'])
  })
})
