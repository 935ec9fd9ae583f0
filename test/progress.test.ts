import { describe, expect, test } from 'bun:test'
import { createProgressBar } from '../src/progress'

describe('progress bar', () => {
  test('redraws in place on a terminal, and writes a line per tenth elsewhere', () => {
    const tty: string[] = []
    const bar = createProgressBar('x', s => tty.push(s), true)
    bar.update({ received: 5, total: 10 })
    bar.done()
    expect(tty[0]).toStartWith('\rx  50% [###############...............] 0.0/0.0 MB')
    expect(tty.at(-1)).toBe('\n')
    const log: string[] = []
    const plain = createProgressBar('x', s => log.push(s), false)
    for (let i = 0; i <= 100; i++) plain.update({ received: i, total: 100 })
    expect(log).toHaveLength(11)
  })
})
