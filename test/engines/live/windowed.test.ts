/**
 * The windowed live recognizer (src/engines/live/windowed.ts, agreement.ts) as pure code: the engine is
 * a fake decoder that answers from a script (deterministic data) and records what it was asked to
 * decode, so the sliding window, the LocalAgreement-2 commits, the order of events and the per-turn
 * mode (the remote engine's) are checked word by word. The real whisper.cpp is in whisper-live.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { LocalAgreement, wordsOf, type TimedText } from '../../../src/engines/live/agreement'
import type { LiveEvent } from '../../../src/engines/live/index'
import { DEFAULT_TURN_DETECTION } from '../../../src/engines/live/turns'
import { openWindowedRecognizer, type WindowedSettings } from '../../../src/engines/live/windowed'

const RATE = 16_000
/** a voiced 10-ms frame's worth of a 200 Hz tone at about -9 dBFS, and near silence (-66 dBFS) */
const voiced = (seconds: number) => Int16Array.from({ length: Math.round(seconds * RATE) }, (_, i) => Math.round(12_000 * Math.sin((2 * Math.PI * 200 * i) / RATE)))
const quiet = (seconds: number) => Int16Array.from({ length: Math.round(seconds * RATE) }, (_, i) => (i % 2 ? 16 : -16))
/** speech-like audio: 200-ms syllables and 100-ms dips (the dips keep the detector's noise floor down, as pauses between syllables do) */
function speech(seconds: number): Int16Array {
  const out = new Int16Array(Math.round(seconds * RATE))
  for (let at = 0; at < out.length; at += 0.3 * RATE) {
    out.set(voiced(0.2).subarray(0, out.length - at), at)
    if (at + 0.2 * RATE < out.length) out.set(quiet(0.1).subarray(0, out.length - at - 0.2 * RATE), at + 0.2 * RATE)
  }
  return out
}
const concat = (...parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0)
  return out
}
/** lets queued decodes (which resolve at once) run */
const settle = () => new Promise(resolve => setTimeout(resolve, 0))

interface Call { seconds: number; prompt: string }

/** A recognizer whose decoder answers `answer(call)`; its events and the decoder's calls are recorded. */
function open(answer: (call: Call, index: number) => TimedText[] | Promise<TimedText[]>, settings: Partial<WindowedSettings> = {}) {
  const calls: Call[] = []
  const events: LiveEvent[] = []
  const r = openWindowedRecognizer({
    decode: async (samples, prompt) => {
      const call = { seconds: samples.length / RATE, prompt }
      calls.push(call)
      return answer(call, calls.length - 1)
    },
    turnDetection: null,
    window: { maxSeconds: 15, stepSeconds: 1 },
    ...settings,
  })
  r.on(e => void (e.type !== 'ready' && events.push(e)))
  const push = (pcm: Int16Array) => {
    for (let at = 0; at < pcm.length; at += 320) r.push(pcm.subarray(at, at + 320))
  }
  return { r, calls, events, push }
}

/** one segment whose words are `text`'s, each 0.25 s long from `start` */
const said = (text: string, start = 0): TimedText => ({ text, start, end: start + 0.25 * text.split(' ').length })
const partials = (events: LiveEvent[]) => events.filter(e => e.type === 'partial').map(e => (e as { text: string }).text)
const kinds = (events: LiveEvent[]) => events.map(e => `${e.type}${'item' in e ? ` ${e.item}` : ''}`)

describe('LocalAgreement-2', () => {
  test('a word is committed once two consecutive decodes agree on it; what only one says stays provisional', () => {
    const a = new LocalAgreement()
    const hyp = (text: string) => wordsOf([said(text)], 0)
    expect(a.insert(hyp('the cat')).map(w => w.text)).toEqual([])
    expect(a.insert(hyp('the cat sad')).map(w => w.text)).toEqual(['the', 'cat'])
    // "sad" was heard once and is now "sat": nothing new agreed
    expect(a.insert(hyp('The cat sat on')).map(w => w.text)).toEqual([])
    expect(a.text()).toBe('the cat sat on')
    expect(a.insert(hyp('the cat sat on the')).map(w => w.text)).toEqual(['sat', 'on'])
    expect(a.committed.map(w => w.text)).toEqual(['the', 'cat', 'sat', 'on'])
    expect(a.tail.map(w => w.text)).toEqual(['the'])
    // case and punctuation do not make a different word
    expect(a.insert(hyp('the cat sat on The, mat')).map(w => w.text)).toEqual(['The,'])
  })

  test('a window that starts inside the committed words: their repetition is dropped, the words after it compared', () => {
    const a = new LocalAgreement()
    a.insert(wordsOf([said('one two three four')], 0))
    a.insert(wordsOf([said('one two three four five')], 0))
    expect(a.committed.map(w => w.text)).toEqual(['one', 'two', 'three', 'four'])
    // the next window starts at 0.5 s: "three four" again (times a little off), then new words
    a.insert(wordsOf([said('three four five six', 0)], 0.45))
    expect(a.committed.map(w => w.text)).toEqual(['one', 'two', 'three', 'four', 'five'])
    expect(a.text()).toBe('one two three four five six')
  })

  test('words get their segment\'s time in proportion to their length', () => {
    expect(wordsOf([{ text: ' ab cdef', start: 1, end: 4 }], 10)).toEqual([
      { text: 'ab', start: 11, end: 12 },
      { text: 'cdef', start: 12, end: 14 },
    ])
  })
})

describe('whisper.cpp\'s mode: a sliding window', () => {
  test('every second of new audio the turn is decoded again; partials are the committed words then the provisional tail; the final is the whole turn decoded once more', async () => {
    const script = ['the cat', 'the cat sad', 'The cat sat on', 'the cat sat on the']
    const { r, calls, events, push } = open(({ seconds }, i) => [said(i < script.length ? script[i]! : `${seconds} s: the cat sat on the mat.`)])
    for (let s = 0; s < 4; s++) {
      push(speech(1))
      await settle()
    }
    r.commit()
    await r.close()
    expect(calls.map(c => c.seconds)).toEqual([1, 2, 3, 4, 4])
    expect(partials(events)).toEqual(['the cat', 'the cat sad', 'the cat sat on', 'the cat sat on the'])
    expect(events.at(-1)).toEqual({ type: 'final', item: 0, text: '4 s: the cat sat on the mat.', start: 0, end: 4, words: [] })
  })

  test('a turn longer than the window: each decode hears at most 15 s, the window moves to a committed boundary, and the words before it become the prompt', async () => {
    // a perfect listener of a script of one word every 0.5 s, which always mishears the last word it hears
    const word = (i: number) => `w${i}`
    let pushed = 0
    const { r, calls, events, push } = open(({ seconds }, index) => {
      const from = pushed - seconds
      const heard: string[] = []
      for (let i = Math.ceil(from / 0.5); (i + 1) * 0.5 <= pushed; i++) heard.push(word(i))
      if (heard.length) heard[heard.length - 1] = `misheard${index}`
      // segments of four words, times relative to the window
      const segments: TimedText[] = []
      const first = Math.ceil(from / 0.5)
      for (let k = 0; k < heard.length; k += 4) {
        const start = (first + k) * 0.5 - from
        segments.push({ text: heard.slice(k, k + 4).join(' '), start, end: start + 0.5 * Math.min(4, heard.length - k) })
      }
      return segments
    }, { prompt: 'Dashwood' })
    for (let s = 0; s < 24; s++) {
      push(speech(1))
      pushed += 1
      await settle()
    }
    r.commit()
    await r.close()
    const windows = calls.slice(0, -1)
    expect(windows.length).toBe(24)
    expect(Math.max(...windows.map(c => c.seconds))).toBeLessThanOrEqual(15)
    // once the turn is past 15 s the window starts later than the turn
    const slid = windows.filter((c, i) => c.seconds < i + 1)
    expect(slid.length).toBeGreaterThan(5)
    // its start is a segment's end (every 2 s here: four words), never inside a word
    for (const c of slid) {
      const i = windows.indexOf(c)
      const start = i + 1 - c.seconds
      expect(start % 2).toBeCloseTo(0, 6)
      // the session's prompt, then the committed words before the window
      const before = Array.from({ length: start / 0.5 }, (_, k) => word(k)).join(' ')
      expect(c.prompt.startsWith('Dashwood ')).toBe(true)
      const context = c.prompt.slice('Dashwood '.length)
      expect(context.length).toBeLessThanOrEqual(200)
      expect(before.endsWith(context)).toBe(true)
      expect(context.split(' ')[0]).toMatch(/^w\d+$/)
      expect(context.split(' ').at(-1)).toBe(word(start / 0.5 - 1))
    }
    // the committed words never change: every partial starts with the script's words in order
    const last = partials(events).at(-1)!.split(' ')
    const expected = Array.from({ length: 46 }, (_, k) => word(k))
    expect(last.slice(0, 46)).toEqual(expected)
    // the final: the whole turn (24 s) decoded once
    expect(calls.at(-1)!.seconds).toBe(24)
  })

  test('an engine slower than real time: decodes are not queued behind each other, the next one takes the audio as it is then', async () => {
    let release!: () => void
    const gate = new Promise<void>(resolve => (release = resolve))
    const { r, calls, push } = open(async (_, i) => {
      if (i === 0) await gate
      return [said('hello there')]
    })
    push(speech(1))
    await settle()
    for (let s = 0; s < 4; s++) push(speech(1))
    await settle()
    expect(calls.map(c => c.seconds)).toEqual([1])
    release()
    await settle()
    push(speech(0.02))
    await settle()
    r.commit()
    await r.close()
    // the second decode heard all 5 s at once; then the final
    expect(calls.map(c => c.seconds)).toEqual([1, 5.02, 5.02])
  })
})

describe('the remote engine\'s mode: one decode per turn', () => {
  test('without turn detection a turn ends at a commit, or after 30 s without one (its audio is never held without bound)', async () => {
    const { r, calls, events, push } = open(({ seconds }) => [said(`${seconds} s`)], { window: null })
    push(speech(70))
    r.commit()
    await r.close()
    expect(calls.map(c => c.seconds)).toEqual([30, 30, 10])
    expect(events.map(e => e.type === 'final' && [e.item, e.start, e.end, e.text])).toEqual([[0, 0, 30, '30 s'], [1, 30, 60, '30 s'], [2, 60, 70, '10 s']])
  })

  test('turns found by the energy detector: no partials, each turn decoded once when it ends, its final before the next turn\'s first event', async () => {
    let release!: () => void
    const gate = new Promise<void>(resolve => (release = resolve))
    const { r, calls, events, push } = open(async ({ seconds }, i) => {
      if (i === 0) await gate
      return [said(`turn ${i} of ${seconds.toFixed(2)} s`)]
    }, { window: null, turnDetection: DEFAULT_TURN_DETECTION })
    push(concat(quiet(1), speech(3), quiet(1), speech(2), quiet(1)))
    await settle()
    // the first turn's decode has not answered: the second turn's events wait behind its final
    expect(kinds(events)).toEqual(['speechStarted 0', 'speechStopped 0'])
    release()
    await r.close()
    expect(kinds(events)).toEqual(['speechStarted 0', 'speechStopped 0', 'final 0', 'speechStarted 1', 'speechStopped 1', 'final 1'])
    expect(partials(events)).toEqual([])
    expect(calls.length).toBe(2)
    const [f0, f1] = events.filter(e => e.type === 'final') as Extract<LiveEvent, { type: 'final' }>[]
    // a turn: the padding before the speech (300 ms and the 30 ms that confirmed it), the speech (to its last syllable at 3.9 s), the 500 ms of silence that ended it
    expect(f0!.start).toBeCloseTo(0.7, 1)
    expect(f0!.end).toBeCloseTo(4.4, 1)
    expect(f0!.text).toBe(`turn 0 of ${(f0!.end - f0!.start).toFixed(2)} s`)
    expect(f1!.start).toBeCloseTo(4.7, 1)
    // the final's prompt is what was said before (the first turn's text)
    expect(calls[1]!.prompt).toBe(f0!.text)
  })

  test('a commit with no turn in progress is answered by an empty final; a failed decode is the stream\'s error and later audio is ignored', async () => {
    const { r, calls, events, push } = open(() => {
      throw new Error('The speech server http://127.0.0.1:9/v1 could not be reached')
    }, { window: null })
    r.commit()
    push(speech(1))
    r.commit()
    push(speech(1))
    r.commit()
    await r.close()
    expect(events).toEqual([
      { type: 'final', item: 0, text: '', start: 0, end: 0, words: [] },
      { type: 'error', message: 'The speech server http://127.0.0.1:9/v1 could not be reached' },
    ])
    expect(calls.length).toBe(1)
    expect(() => r.push(speech(0.1))).toThrow('this live recognizer is closed')
  })
})
