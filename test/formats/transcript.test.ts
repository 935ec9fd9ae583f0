import { describe, expect, test } from 'bun:test'
import { parse as parseVtt } from 'node-webvtt'
import { parseSync as parseSubtitles } from 'subtitle'
import { formatTranscript, toJson, toSrt, toTxt, toVtt, type TimedSegment } from '../../src/formats/transcript'

/** SRT cues as `subtitle`'s parser reads them: times in milliseconds. */
function srtCues(srt: string) {
  return parseSubtitles(srt).flatMap(n => (n.type === 'cue' ? [n.data] : []))
}

const segments: TimedSegment[] = [
  { start: 0.15, end: 2.345, text: 'he was not an ill disposed young man' },
  { start: 2.345, end: 9.87, text: 'unless to be rather cold hearted and rather selfish is to be ill disposed, had he married a more amiable woman' },
  { start: 61.005, end: 3725.5, text: 'an hour later' },
]

describe('SRT', () => {
  test('numbered cues whose times (to the millisecond) and words are the segments, as a real parser reads them', () => {
    const srt = toSrt(segments)
    expect(srt.split('\n').slice(0, 4)).toEqual(['1', '00:00:00,150 --> 00:00:02,345', 'he was not an ill disposed young man', ''])
    const cues = srtCues(srt)
    expect(cues.map(c => [c.start, c.end])).toEqual([[150, 2345], [2345, 9870], [61005, 3725500]])
    expect(cues.map(c => c.text.replaceAll('\n', ' '))).toEqual(segments.map(s => s.text))
    expect(srt).toContain('\n3\n00:01:01,005 --> 01:02:05,500\n')
  })

  test('lines of at most 42 characters, broken between words', () => {
    const lines = toSrt(segments).split('\n').filter(l => l && !/^\d+$/.test(l) && !l.includes('-->'))
    expect(lines.length).toBeGreaterThan(segments.length)
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(42)
    expect(toSrt([{ start: 0, end: 1, text: 'a-word-longer-than-forty-two-characters-stays-whole here' }]).split('\n')[2]).toBe('a-word-longer-than-forty-two-characters-stays-whole')
  })

  test('text cannot end a cue early or fake a timing line; empty segments give no cue', () => {
    const srt = toSrt([
      { start: 1, end: 2, text: 'first line\n\n2\n00:00:05,000 --> 00:00:06,000\nforged' },
      { start: 3, end: 4, text: '   ' },
      { start: 5, end: 6, text: 'last' },
    ])
    const cues = srtCues(srt)
    expect(cues).toHaveLength(2)
    expect(cues.map(c => [c.start, c.end])).toEqual([[1000, 2000], [5000, 6000]])
    expect(cues[0]!.text).not.toContain('-->')
    expect(cues[1]!.text).toBe('last')
  })

  test('times past 24 hours keep counting hours; float seconds round to the nearest millisecond', () => {
    const srt = toSrt([{ start: 90001.2345, end: 90002.0006, text: 'late' }, { start: 2.345, end: 2.345, text: 'no length' }])
    expect(srt).toContain('25:00:01,235 --> 25:00:02,001')
    // an end equal to the start becomes 1 ms later: both formats need end > start
    expect(srt).toContain('00:00:02,345 --> 00:00:02,346')
  })
})

describe('WebVTT', () => {
  test('valid for a strict parser; cue times equal the segments', () => {
    const vtt = toVtt(segments)
    expect(vtt.startsWith('WEBVTT\n\n1\n00:00:00.150 --> 00:00:02.345\n')).toBe(true)
    const parsed = parseVtt(vtt, { strict: true })
    expect(parsed.valid).toBe(true)
    expect(parsed.cues.map(c => [c.start, c.end])).toEqual(segments.map(s => [s.start, s.end]))
    expect(parsed.cues.map(c => c.text.replaceAll('\n', ' '))).toEqual(segments.map(s => s.text))
  })

  test('&, < and > are escaped, so markup-like text stays text and --> never appears in a cue', () => {
    const vtt = toVtt([{ start: 0, end: 1, text: 'a <b>bold</b> claim & more --> here' }])
    const [cue] = parseVtt(vtt, { strict: true }).cues
    expect(cue!.text.replaceAll('\n', ' ')).toBe('a &lt;b&gt;bold&lt;/b&gt; claim &amp; more --&gt; here')
    expect(vtt.split('\n').filter(l => l.includes('-->'))).toHaveLength(1)
  })

  test('no segments: a valid empty file', () => {
    expect(parseVtt(toVtt([]), { strict: true })).toMatchObject({ valid: true, cues: [] })
  })
})

describe('txt and json', () => {
  const doc = { language: 'en', duration: 3725.5, transcript: segments.map(s => s.text).join(' '), segments }

  test('txt is the transcript, ending in a newline', () => {
    expect(toTxt(doc.transcript)).toBe(`${doc.transcript}\n`)
    expect(formatTranscript('txt', doc)).toBe(`${doc.transcript}\n`)
  })

  test('json has the segments with their times, the transcript and the language; the summary only when given', () => {
    const body = JSON.parse(toJson(doc))
    expect(body).toEqual({ language: 'en', duration: 3725.5, transcript: doc.transcript, segments: segments.map(s => ({ start: s.start, end: s.end, text: s.text })) })
    const summary = { styleId: 'note', title: 'T', summary: 'S', structuredContent: null }
    expect(JSON.parse(formatTranscript('json', { ...doc, summary })).summary).toEqual(summary)
  })
})
