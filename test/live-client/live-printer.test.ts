import { expect, test } from 'bun:test'
import { clockTime, createLivePrinter } from '../../src/live-client/live-printer'

function terminal(isTTY: boolean, columns?: number) {
  const written: string[] = []
  return { written, write: (text: string) => void written.push(text), isTTY, columns }
}

test('times of final lines: tenths of a second, minutes and seconds, hours from an hour on', () => {
  expect([0, 7.07, 61.25, 599.96, 3600, 3725.4].map(clockTime)).toEqual(['00:00.0', '00:07.1', '01:01.3', '10:00.0', '1:00:00.0', '1:02:05.4'])
})

test('on a terminal a long partial shows its end on one line of the terminal\'s width; the same partial twice is written once', () => {
  const out = terminal(true)
  const err = terminal(true, 30)
  const p = createLivePrinter(out, err)
  p.partial('he was not an ill disposed young man who')
  p.partial('he was not an ill disposed young man who')
  expect(err.written).toEqual(['\r\x1b[2K… …ill disposed young man who'])
  expect('… …ill disposed young man who'.length).toBe(29)
  p.final('he was not an ill disposed young man', 7.8, 11.58)
  expect(err.written.at(-1)).toBe('\r\x1b[2K')
  expect(out.written).toEqual(['[00:07.8 → 00:11.6] he was not an ill disposed young man\n'])
})

test('not a terminal: partials are plain lines; an empty final (noise) prints nothing; a notice is its own line', () => {
  const out = terminal(false)
  const err = terminal(false)
  const p = createLivePrinter(out, err)
  p.partial('and')
  p.partial('and mr')
  p.final('', 0, 1)
  p.final('and mister john', null, null)
  p.notice('Note note_1 (Summarizing)')
  expect(err.written).toEqual(['… and\n', '… and mr\n', 'Note note_1 (Summarizing)\n'])
  expect(out.written).toEqual(['and mister john\n'])
})
