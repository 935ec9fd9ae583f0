/**
 * A meeting's transcript corrected through the API as a person with its script would correct it
 * (bench/meeting.ts --corrected): segments that are pieces of one turn merged, a segment holding two
 * turns split where the second starts, every segment's text set to the turn's true words
 * (`PATCH .../segments/{i}` with `text`) and its speaker to the person who said it, the speakers
 * named; then the summary made again (`POST /v1/notes/{id}/summaries`).
 */
import type { createTestApp } from '../../test/helpers/app'

type TestApp = ReturnType<typeof createTestApp>
interface Turn { start: number; end: number; speaker: string; text: string }
interface Segment { id: number; start: number; end: number; text: string; speakerId?: string }
interface Word { start: number; end: number }

const mid = (t: Turn) => (t.start + t.end) / 2
const overlap = (a: { start: number; end: number }, b: { start: number; end: number }) => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start))

/** The segment each turn belongs to: the one holding its middle, else the nearest. */
function turnsBySegment(segments: Segment[], turns: Turn[]): Turn[][] {
  const by = segments.map(() => [] as Turn[])
  for (const t of turns) {
    const m = mid(t)
    const distance = (s: Segment) => (m < s.start ? s.start - m : m > s.end ? m - s.end : 0)
    const i = segments.reduce((best, s, j) => (distance(s) < distance(segments[best]!) ? j : best), 0)
    by[i]!.push(t)
  }
  return by
}

export async function correctMeeting(t: TestApp, token: string, id: string, turns: Turn[]): Promise<{ edits: number; kinds: Record<string, number> }> {
  let edits = 0
  const kinds: Record<string, number> = {}
  const read = async () => (await t.call('GET', `/v1/notes/${id}/transcript?format=verbose_json`, { token })).body as { segments: Segment[]; words?: Word[] }
  const call = async (method: string, path: string, body: unknown) => {
    const r = await t.call(method, `/v1/notes/${id}${path}`, { token, body })
    if (r.status !== 200) throw new Error(`${method} ${path} ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`)
    edits++
    const kind = `${method} ${path.replace(/\d+/, '{i}').replace(/\/[A-Z]+$/, '/{label}')}`
    kinds[kind] = (kinds[kind] ?? 0) + 1
  }
  // a segment no turn belongs to is a piece of its neighbour's turn: merged into it
  for (let v = await read(), by = turnsBySegment(v.segments, turns); by.some(x => !x.length); v = await read(), by = turnsBySegment(v.segments, turns)) {
    const i = by.findIndex(x => !x.length)
    await call('POST', `/segments/${i > 0 ? i - 1 : 0}/merge`, {})
  }
  // a segment holding two turns: split at the first word that starts after the first turn ends
  for (let pass = 0; pass < 50; pass++) {
    const v = await read()
    const by = turnsBySegment(v.segments, turns)
    const i = by.findIndex((x, j) => x.length > 1 && splitWord(v.segments[j]!, v.words ?? [], x[0]!) !== null)
    if (i < 0) break
    await call('POST', `/segments/${i}/split`, { word: splitWord(v.segments[i]!, v.words ?? [], by[i]![0]!) })
  }
  const v = await read()
  const by = turnsBySegment(v.segments, turns)
  // each person's label: the label with most of their speech; a label already another person's gives way to a new one
  const people = [...new Set(turns.map(x => x.speaker))]
  const time = (person: string, label: string) => v.segments.reduce((n, s, j) => n + (s.speakerId === label ? by[j]!.filter(x => x.speaker === person).reduce((m, x) => m + overlap(s, x), 0) : 0), 0)
  const labels = new Map<string, string>()
  const labelsSeen = [...new Set(v.segments.flatMap(s => (s.speakerId ? [s.speakerId] : [])))]
  const order = people.flatMap(p => labelsSeen.map(l => ({ p, l, secs: time(p, l) }))).sort((a, b) => b.secs - a.secs)
  for (const { p, l, secs } of order) if (secs > 0 && !labels.has(p) && ![...labels.values()].includes(l)) labels.set(p, l)
  let next = 0
  for (const p of people) {
    while (!labels.has(p)) {
      const l = String.fromCharCode(65 + next++)
      if (!labelsSeen.includes(l)) labels.set(p, l)
    }
  }
  for (const [j, s] of v.segments.entries()) {
    const said = by[j]!
    const person = said[0]!.speaker
    const text = said.map(x => x.text).join(' ')
    const label = labels.get(person)!
    if (text !== s.text) await call('PATCH', `/segments/${j}`, { text })
    // a segment's speaker is set by PATCH among the note's speakers; a new one is added by reassigning its words
    if (s.speakerId !== label) await call('POST', `/segments/${j}/reassign`, { fromWord: 0, toWord: text.split(' ').length - 1, speaker: label })
  }
  for (const [person, label] of labels) await call('PATCH', `/speakers/${label}`, { name: person, remember: false })
  return { edits, kinds }
}

/** The word index (from 1) of `s` where the turn after `first` starts, or null when no word is past its end. */
function splitWord(s: Segment, words: Word[], first: Turn): number | null {
  const inside = words.filter(w => w.start >= s.start - 1e-3 && w.end <= s.end + 1e-3)
  if (inside.length !== s.text.split(' ').length) return null
  const k = inside.findIndex(w => w.start >= first.end - 0.05)
  return k >= 1 ? k : null
}
