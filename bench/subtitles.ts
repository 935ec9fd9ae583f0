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
import { transcriptCues } from '../src/formats/transcript'
import { before, report } from './lib/cues'
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

report('one cue per segment (before)', before(segments))
report('cut at word times (PocketSphinx)', transcriptCues(segments))
report('cut without word times (whisper)', transcriptCues(segments.map(({ words: _, ...s }) => s)))
