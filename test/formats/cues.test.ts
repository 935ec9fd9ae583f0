import { describe, expect, test } from 'bun:test'
import { segmentCues, twoLines, type CueSource, type TimedCue } from '../../src/formats/cues'
import { LIBRIVOX_HEARD } from '../fixtures/librivox-heard'

// Cues cut from what PocketSphinx heard in real speech (test/fixtures/librivox-heard.ts).

/** the 64-word, 21 s segment PocketSphinx heard, with its word times */
const long = LIBRIVOX_HEARD[2]!
const r3 = (x: number) => Math.round(x * 1000) / 1000
const shown = (cues: TimedCue[]) => cues.map(c => ({ start: r3(c.start), end: r3(c.end), lines: c.lines }))

/** Every bound a cue must keep, and every word kept in order. */
function expectScreenable(seg: CueSource, cues: TimedCue[]) {
  expect(cues.flatMap(c => c.lines).join(' ')).toBe(seg.text.split(/\s+/).filter(Boolean).join(' '))
  let previousEnd = seg.start
  for (const c of cues) {
    const what = JSON.stringify(c)
    expect(c.lines.length, what).toBeLessThanOrEqual(2)
    for (const l of c.lines) expect(l.length, what).toBeLessThanOrEqual(42)
    expect(c.end - c.start, what).toBeLessThanOrEqual(7)
    expect(c.end - c.start, what).toBeGreaterThanOrEqual(1)
    expect(c.start, what).toBeGreaterThanOrEqual(previousEnd)
    previousEnd = c.end
  }
  expect(cues[0]!.start).toBe(seg.start)
  expect(cues.at(-1)!.end).toBe(seg.end)
}

describe('cues from PocketSphinx word times', () => {
  test('a 64-word, 21 s segment: cues of at most 2 lines of 42 characters and 1 to 7 s, cut at the one pause of 0.5 s or more', () => {
    expect(long.words.length).toBe(64)
    expect(long.end - long.start).toBeGreaterThan(20)
    const cues = segmentCues(long)
    expectScreenable(long, cues)
    // the only gap of 0.5 s or more between two words is after "himself" (24.27 -> 24.83): a cue ends there
    expect(shown(cues)).toEqual([
      { start: 10.3, end: 13.85, lines: ['less to be rather cold', 'hearted and rather selfish is'] },
      { start: 13.86, end: 17.77, lines: ['to be oldest those happy', 'married to more amiable woman'] },
      { start: 17.78, end: 20.49, lines: ['he might have been made still', 'more respectable that he'] },
      { start: 20.5, end: 24.27, lines: ['was he might even have been', 'made a real blow himself'] },
      { start: 24.83, end: 28.06, lines: ['at mr john guess would have', 'been at leisure to consider'] },
      { start: 28.07, end: 31.26, lines: ['how much there might be', 'prickly in his power to do for'] },
    ])
  })

  test('sentence ends come first: the same words and times, punctuated, give cues ending at each full stop', () => {
    const text = long.text
      .replace('amiable woman he', 'amiable woman. he')
      .replace('that he was he', 'that he was. he')
      .replace('blow himself at', 'blow himself. at')
    const seg = { ...long, text }
    const cues = segmentCues(seg)
    expectScreenable(seg, cues)
    expect(shown(cues)).toEqual([
      { start: 10.3, end: 13.85, lines: ['less to be rather cold', 'hearted and rather selfish is'] },
      { start: 13.86, end: 17.77, lines: ['to be oldest those happy', 'married to more amiable woman.'] },
      { start: 17.78, end: 21.11, lines: ['he might have been made still', 'more respectable that he was.'] },
      { start: 21.55, end: 24.27, lines: ['he might even have been', 'made a real blow himself.'] },
      { start: 24.83, end: 28.06, lines: ['at mr john guess would have', 'been at leisure to consider'] },
      { start: 28.07, end: 31.26, lines: ['how much there might be', 'prickly in his power to do for'] },
    ])
  })

  test('a sentence end that would leave a piece under 1 s is not cut at: "and." stays with what follows', () => {
    const first = LIBRIVOX_HEARD[0]! // 24 words, 6.9 s, 115 characters: more than one cue holds
    const seg = { ...first, text: first.text.replace(/^and mr/, 'and. mr') }
    const cues = segmentCues(seg)
    expectScreenable(seg, cues)
    expect(cues[0]!.lines[0]).toStartWith('and. mr')
  })

  test('a tighter maximum (2 s) still keeps every cue at 1 s or more: no cut leaves a piece shorter when another does not', () => {
    const cues = segmentCues(LIBRIVOX_HEARD[0]!, { maxCueSeconds: 2 })
    expect(shown(cues)).toEqual([
      { start: 0.15, end: 1.83, lines: ['and mr john guess what and'] },
      { start: 1.84, end: 2.89, lines: ['then at leisure to'] }, // not "then at leisure" (0.87 s)
      { start: 2.9, end: 3.9, lines: ['consider how'] },
      { start: 3.94, end: 5.45, lines: ['much there might be greatly'] },
      { start: 5.46, end: 7.07, lines: ['in his power to do how about'] },
    ])
  })

  test('a piece under 1 s that no cut avoids is joined to its neighbour when the two fit, and left when they do not', () => {
    // constructed: "well then", a pause, then 14 words in 1.56 s (too many characters for one cue, too
    // fast for any cut to leave 1 s on both sides)
    const fast = 'the quarterly numbers look considerably better than anticipated because everyone worked incredibly hard'.split(' ')
    const words = [{ word: 'well', start: 0, end: 0.6 }, { word: 'then', start: 0.6, end: 1.5 }, ...fast.map((word, i) => ({ word, start: 2 + i * 0.12, end: 2.12 + i * 0.12 }))]
    const cues = segmentCues({ start: 0, end: 3.56, text: words.map(w => w.word).join(' '), words })
    expect(shown(cues)).toEqual([
      { start: 0, end: 2.84, lines: ['well then the quarterly numbers', 'look considerably better than'] }, // 0.84 s joined to "well then"
      { start: 2.84, end: 3.56, lines: ['anticipated because everyone', 'worked incredibly hard'] }, // 0.72 s: joined, 112 characters would not fit
    ])
  })

  test('a segment that fits is one cue at the segment\'s times', () => {
    const seg = LIBRIVOX_HEARD[1]!
    expect(shown(segmentCues(seg))).toEqual([{ start: 7.27, end: 9.77, lines: ['he was not until this blows young man'] }])
  })
})

describe('cues without word times (whisper.cpp)', () => {
  test('the long segment\'s text is cut the same way; each piece gets the segment\'s time in proportion to its characters', () => {
    const seg = { start: long.start, end: long.end, text: long.text }
    const cues = segmentCues(seg)
    expectScreenable(seg, cues)
    expect(shown(cues)).toEqual([
      { start: 10.3, end: 15.3, lines: ['less to be rather cold hearted and rather', 'selfish is to be oldest those happy'] },
      { start: 15.3, end: 18.12, lines: ['married to more amiable', 'woman he might have'] },
      { start: 18.12, end: 20.748, lines: ['been made still more respectable that he'] },
      { start: 20.748, end: 25.94, lines: ['was he might even have been made a real', 'blow himself at mr john guess would have'] },
      { start: 25.94, end: 31.26, lines: ['been at leisure to consider how much there', 'might be prickly in his power to do for'] },
    ])
    // each word counts with the space after it: a piece's share is its characters + its words
    const total = seg.text.length + 1
    for (const c of cues) {
      const chars = c.lines.join(' ').length + 1
      expect(c.end - c.start).toBeCloseTo(((seg.end - seg.start) * chars) / total, 9)
    }
  })
})

describe('two lines', () => {
  test('balanced: the longer line as short as it can be, the top one the shorter on a tie', () => {
    expect(twoLines('was he might even have been made a real blow himself'.split(' '), 42)).toEqual(['was he might even have been', 'made a real blow himself'])
    // 'aa' / 'bb cc' or 'aa bb' / 'cc': the same longer line; the shorter goes on top
    expect(twoLines(['aa', 'bb', 'cc'], 5)).toEqual(['aa', 'bb cc'])
    expect(twoLines('one two three'.split(' '), 42)).toEqual(['one two three'])
    expect(twoLines(Array(30).fill('word'), 42)).toBeNull()
  })
})
