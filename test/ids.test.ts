import { expect, test } from 'bun:test'
import { createIdGenerator } from '../src/ids'

test('ids carry their prefix, sort by time, and within one millisecond in the order they were made', () => {
  let t = Date.UTC(2026, 10, 22)
  const ids = createIdGenerator(() => t)
  const made = Array.from({ length: 1000 }, () => ids.next('note'))
  t += 1
  made.push(ids.next('note'))
  for (const id of made) expect(id).toMatch(/^note_[0-9a-hjkmnp-tv-z]{26}$/)
  expect([...made].sort()).toEqual(made)
  expect(new Set(made).size).toBe(made.length)
})

test('two generators in the same millisecond do not collide', () => {
  const a = createIdGenerator(() => 1)
  const b = createIdGenerator(() => 1)
  const all = new Set([...Array.from({ length: 100 }, () => a.next('use')), ...Array.from({ length: 100 }, () => b.next('use'))])
  expect(all.size).toBe(200)
})
