/**
 * Subtitle cues of a long real-speech transcript: PocketSphinx hears BENCH_SECONDS (default 300) of
 * the LibriVox clips of pocketsphinx-testdata (test/fixtures/speech.ts), and the longest cue is
 * printed three ways: one cue per engine segment (notesvc before issue 23), cues cut at PocketSphinx's
 * word times, and cues cut without them (as for whisper.cpp: times shared by characters).
 *
 *   bun run bench/subtitles.ts
 *   BENCH_SECONDS=60 bun run bench/subtitles.ts
 */
import { createPocketsphinxEngine } from '../src/engines/asr/pocketsphinx'
import { transcriptCues, type Cue, type TimedSegment } from '../src/formats/transcript'
import { speechWav } from '../test/fixtures/speech'

const seconds = Number(process.env.BENCH_SECONDS ?? 300)
const wav = speechWav(seconds)
const data = new DataView(wav.buffer, wav.byteOffset + 44)
const samples = new Float32Array((wav.byteLength - 44) >> 1)
for (let i = 0; i < samples.length; i++) samples[i] = data.getInt16(i * 2, true) / 32768

const engine = createPocketsphinxEngine()
await engine.ready()
const started = performance.now()
const { segments } = await engine.transcribeChunk(samples, { language: 'en' })
console.log(`${(samples.length / 16000).toFixed(0)} s of speech heard in ${((performance.now() - started) / 1000).toFixed(1)} s: ${segments.length} segments, ${segments.reduce((n, s) => n + (s.words?.length ?? 0), 0)} words`)

/** one cue per segment, its text wrapped at 42 characters: what toSrt wrote before cues were cut */
function before(segs: readonly TimedSegment[]): Cue[] {
  return segs.map(s => {
    const lines: string[] = []
    let line = ''
    for (const w of s.text.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + w.length > 42) { lines.push(line); line = w } else line = line ? `${line} ${w}` : w
    }
    if (line) lines.push(line)
    return { startMs: Math.round(s.start * 1000), endMs: Math.round(s.end * 1000), lines }
  })
}

function report(name: string, cues: Cue[]) {
  const secs = cues.map(c => (c.endMs - c.startMs) / 1000)
  const sorted = [...secs].sort((a, b) => a - b)
  console.log(`${name.padEnd(34)} ${String(cues.length).padStart(5)} cues; longest ${Math.max(...secs).toFixed(2)} s, most lines ${Math.max(...cues.map(c => c.lines.length))}, longest line ${Math.max(...cues.flatMap(c => c.lines.map(l => l.length)))} chars; median ${sorted[sorted.length >> 1]!.toFixed(2)} s, shortest ${sorted[0]!.toFixed(2)} s`)
}

report('one cue per segment (before)', before(segments))
report('cut at word times (PocketSphinx)', transcriptCues(segments))
report('cut without word times (whisper)', transcriptCues(segments.map(({ words: _, ...s }) => s)))
