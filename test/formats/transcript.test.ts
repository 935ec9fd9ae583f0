import { describe, expect, test } from 'bun:test'
import { parse as parseVtt } from 'node-webvtt'
import { parseSync as parseSubtitles } from 'subtitle'
import { formatTranscript, toJson, toSrt, toTxt, toVtt, type TimedSegment } from '../../src/formats/transcript'

/** SRT cues as `subtitle`'s parser reads them: times in milliseconds. */
function srtCues(srt: string) {
  return parseSubtitles(srt).flatMap(n => (n.type === 'cue' ? [n.data] : []))
}

// The second segment is 7.5 s and 113 characters: more than one cue may hold (7 s, 2 lines of 42),
// so it is cut, after its comma, into two cues sharing its time by characters (no word times).
const cues = [
  { start: 150, end: 2345, text: 'he was not an ill disposed young man' },
  { start: 2345, end: 7429, text: 'unless to be rather cold hearted and\nrather selfish is to be ill disposed,' },
  { start: 7429, end: 9870, text: 'had he married a more amiable woman' },
  { start: 3721005, end: 3725500, text: 'an hour later' },
]

const segments: TimedSegment[] = [
  { start: 0.15, end: 2.345, text: 'he was not an ill disposed young man' },
  { start: 2.345, end: 9.87, text: 'unless to be rather cold hearted and rather selfish is to be ill disposed, had he married a more amiable woman' },
  { start: 3721.005, end: 3725.5, text: 'an hour later' },
]

describe('SRT', () => {
  test('numbered cues cut from the segments (to the millisecond), every word kept in order, as a real parser reads them', () => {
    const srt = toSrt(segments)
    expect(srt.split('\n').slice(0, 4)).toEqual(['1', '00:00:00,150 --> 00:00:02,345', 'he was not an ill disposed young man', ''])
    expect(srtCues(srt)).toEqual(cues)
    expect(srtCues(srt).map(c => c.text.replaceAll('\n', ' ')).join(' ')).toBe(segments.map(s => s.text).join(' '))
    expect(srt).toContain('\n4\n01:02:01,005 --> 01:02:05,500\n')
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
    // a cue with no length (nothing after it) is shown for a second
    expect(srt).toContain('00:00:02,345 --> 00:00:03,345')
  })

  test('a cue under a second joins the nearer neighbour that can absorb it (two speakers: a hyphen each), or stays up for a second when the silence after it allows', () => {
    const cuesRead = srtCues(toSrt([
      { start: 0, end: 2, text: 'shall we start', speaker: 'Maria' },
      { start: 2.1, end: 2.3, text: 'yes', speaker: 'Tom' },
      { start: 2.8, end: 4, text: 'good the budget first', speaker: 'Maria' },
      { start: 10, end: 10.2, text: 'bye', speaker: 'Tom' },
    ]))
    expect(cuesRead.map(c => [c.start, c.end, c.text])).toEqual([
      [0, 2300, '-Maria: shall we start\n-Tom: yes'],
      [2800, 4000, 'Maria: good the budget first'],
      [10000, 11000, 'Tom: bye'],
    ])
  })
})

describe('WebVTT', () => {
  test('valid for a strict parser; the same cues as SRT', () => {
    const vtt = toVtt(segments)
    expect(vtt.startsWith('WEBVTT\n\n1\n00:00:00.150 --> 00:00:02.345\n')).toBe(true)
    const parsed = parseVtt(vtt, { strict: true })
    expect(parsed.valid).toBe(true)
    expect(parsed.cues.map(c => ({ start: Math.round(c.start * 1000), end: Math.round(c.end * 1000), text: c.text }))).toEqual(cues)
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

describe('speakers in the formats', () => {
  const dialogue: TimedSegment[] = [
    { start: 0, end: 2, text: 'shall we start with the budget', speaker: 'Maria' },
    { start: 2.5, end: 6, text: 'yes the budget is ten thousand dollars for this quarter and we agreed on two servers', speaker: 'Tom & Co' },
    { start: 6.2, end: 7, text: 'good', speaker: 'Maria' },
  ]

  test('WebVTT: each cue in a voice span with the name, which a real parser reads back with the text intact', () => {
    const vtt = toVtt(dialogue)
    expect(vtt).toContain('<v Maria>shall we start with the budget</v>')
    expect(vtt).toContain('<v Tom &amp; Co>')
    const parsed = parseVtt(vtt)
    expect(parsed.valid).toBe(true)
    expect(parsed.cues.map(c => c.text.replace(/<v [^>]*>|<\/v>/g, '').replaceAll('\n', ' ')).join(' ')).toBe(dialogue.map(s => s.text).join(' '))
  })

  test('SRT: every cue starts with the name, and the named line still fits in 42 characters', () => {
    const cuesRead = srtCues(toSrt(dialogue))
    expect(cuesRead.map(c => c.text.split(':')[0])).toEqual(['Maria', 'Tom & Co', 'Tom & Co', 'Maria'])
    for (const c of cuesRead) for (const line of c.text.split('\n')) expect(line.length).toBeLessThanOrEqual(42)
  })

  test('txt: one line per turn, the name first', () => {
    expect(formatTranscript('txt', { language: 'en', duration: 7, transcript: 'ignored when speakers are known', segments: dialogue })).toBe(
      'Maria: shall we start with the budget\nTom & Co: yes the budget is ten thousand dollars for this quarter and we agreed on two servers\nMaria: good\n')
  })

  test('JSON: each segment names its speaker', () => {
    expect(JSON.parse(toJson({ language: 'en', duration: 7, transcript: '', segments: dialogue })).segments.map((s: { speaker: string }) => s.speaker)).toEqual(['Maria', 'Tom & Co', 'Maria'])
  })
})
