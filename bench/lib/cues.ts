/** Subtitle cue statistics shared by the benchmarks (subtitles.ts, meeting.ts). */
import type { Cue, TimedSegment } from '../../src/formats/transcript'

/** one cue per segment, its text wrapped at 42 characters: what toSrt wrote before cues were cut */
export function before(segs: readonly TimedSegment[]): Cue[] {
  return segs.map(s => {
    const lines: string[] = []
    let line = ''
    for (const w of s.text.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + w.length > 42) { lines.push(line); line = w } else line = line ? `${line} ${w}` : w
    }
    if (line) lines.push(line)
    return { startMs: Math.round(s.start * 1000), endMs: Math.round(s.end * 1000), turns: [{ lines }] }
  })
}

export function report(name: string, cues: Cue[]) {
  const secs = cues.map(c => (c.endMs - c.startMs) / 1000)
  const sorted = [...secs].sort((a, b) => a - b)
  const lines = cues.map(c => c.turns.flatMap(t => t.lines))
  console.log(`${name.padEnd(34)} ${String(cues.length).padStart(5)} cues; longest ${Math.max(...secs).toFixed(2)} s, most lines ${Math.max(...lines.map(l => l.length))}, longest line ${Math.max(...lines.flat().map(l => l.length))} chars; median ${sorted[sorted.length >> 1]!.toFixed(2)} s, shortest ${sorted[0]!.toFixed(2)} s, under 1 s ${secs.filter(s => s < 1).length}`)
}

