import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { plannedChunkSeconds, quietChunks, transcribeMedia, type ChunkReport } from '../../../src/engines/asr/chunked'
import { SAMPLE_RATE, type AsrEngine, type TranscriptSegment } from '../../../src/engines/asr/engine'
import { createPocketsphinxEngine } from '../../../src/engines/asr/pocketsphinx'
import { createAsrScheduler, type AsrScheduler } from '../../../src/engines/asr/scheduler'
import { createWhisperEngine } from '../../../src/engines/asr/whisper'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'
import { speechWav } from '../../fixtures/speech'
import { makeWav, wavFromPcm } from '../../fixtures/wav'
import { tempDir } from '../../helpers/process'
import { editDistance, words } from '../../helpers/wer'

const dir = tempDir('notesvc-parallel-')
afterAll(() => dir.remove())
const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }

async function* blocksOf(samples: Float32Array, size = 4000) {
  for (let at = 0; at < samples.length; at += size) yield samples.slice(at, at + size)
}

function inOrderWithin(segments: TranscriptSegment[], duration: number) {
  let last = 0
  for (const s of segments) {
    expect(s.start).toBeGreaterThanOrEqual(last - 0.001)
    expect(s.end).toBeGreaterThanOrEqual(s.start)
    expect(s.end).toBeLessThanOrEqual(duration + 0.001)
    last = s.start
  }
}

describe('cutting at quiet points', () => {
  test('a chunk boundary moves into the pause near it, never into the sound', async () => {
    // 25 s of a loud tone with one 300-ms silence from 11.2 s: chunks of 10 s searched ±2 s cut inside it
    const samples = new Float32Array(25 * SAMPLE_RATE)
    for (let i = 0; i < samples.length; i++) samples[i] = 0.5 * Math.sin((2 * Math.PI * 220 * i) / SAMPLE_RATE)
    samples.fill(0, 11.2 * SAMPLE_RATE, 11.5 * SAMPLE_RATE)
    const chunks: { offset: number; length: number }[] = []
    for await (const c of quietChunks(blocksOf(samples), 10 * SAMPLE_RATE, 2 * SAMPLE_RATE)) chunks.push({ offset: c.offsetSamples, length: c.samples.length })
    const cut = chunks[1]!.offset / SAMPLE_RATE
    expect(cut).toBeGreaterThanOrEqual(11.2)
    expect(cut).toBeLessThanOrEqual(11.5)
    // nothing lost or doubled: the chunks tile the recording
    expect(chunks.reduce((n, c) => n + c.length, 0)).toBe(samples.length)
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.offset).toBe(chunks[i - 1]!.offset + chunks[i - 1]!.length)
  })
})

describe('PocketSphinx: parallel chunks against one pass', () => {
  const SECONDS = 60
  let path = ''
  beforeAll(() => {
    path = join(dir.path, 'speech.wav')
    writeFileSync(path, speechWav(SECONDS))
  })

  test(`${SECONDS} s of the testdata recordings: the same words within a small WER, times in order, nothing lost at the cuts`, async () => {
    const asr = createPocketsphinxEngine()
    const duration = (await Bun.file(path).arrayBuffer()).byteLength / 2 / SAMPLE_RATE
    let t = performance.now()
    const whole = await transcribeMedia(path, { asr, tools, chunkSeconds: 3600, scheduler: createAsrScheduler(1) }, { language: null })
    const wholeMs = performance.now() - t
    const report: ChunkReport = { chunks: 0, loopsRetried: 0, loopsCut: 0, retried: 0 }
    const progress: number[] = []
    t = performance.now()
    const parallel = await transcribeMedia(path, { asr, tools, chunkSeconds: 20, scheduler: createAsrScheduler(2) }, { language: null, report, onProgress: p => progress.push(p) })
    const parallelMs = performance.now() - t
    const ref = words(whole.transcript)
    const hyp = words(parallel.transcript)
    const wer = editDistance(ref, hyp) / ref.length
    console.log(`PocketSphinx, ${duration.toFixed(0)} s: one pass ${(wholeMs / 1000).toFixed(1)} s, ${report.chunks} chunks on 2 slots ${(parallelMs / 1000).toFixed(1)} s; ` +
      `WER parallel vs one pass ${(wer * 100).toFixed(1)} % (${ref.length} → ${hyp.length} words)`)
    expect(report.chunks).toBeGreaterThanOrEqual(3)
    // measured 8.6 to 14.9 % (2 minutes in 30/45/60-s chunks, 81 s in 20-s chunks): the language model's
    // context starts afresh at each cut, and a few words near it are heard differently
    expect(wer).toBeLessThan(0.25)
    // nothing lost at the cuts: as many words, give or take a few
    expect(hyp.length).toBeGreaterThanOrEqual(Math.floor(ref.length * 0.93))
    inOrderWithin(parallel.segments, duration)
    expect(parallel.segments.at(-1)!.end).toBeGreaterThan(duration - 10)
    expect(progress.at(-1)).toBeCloseTo(1, 2)
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThan(progress[i - 1]!)
    expect(parallel.language).toBe('en')
  }, 180_000)
})

describe('whisper.cpp on the tiny generated model: parallel contexts', () => {
  test('two contexts work at once, and the chunks are stitched in the recording\'s order', async () => {
    const model = writeTinyWhisperModel(join(dir.path, 'ggml-tiny.bin'))
    const whisper = createWhisperEngine({ modelPath: model, contexts: 2, threads: 1 })
    let running = 0
    let most = 0
    const seen: number[] = []
    // wraps the real engine to watch how many chunks it holds at once, and tags each chunk's segments
    const asr: AsrEngine = {
      name: 'whisper-watched',
      ready: () => whisper.ready(),
      async transcribeChunk(samples, opts) {
        most = Math.max(most, ++running)
        try {
          const r = await whisper.transcribeChunk(samples, opts)
          const n = Math.round((samples.find(x => Math.abs(x) > 1e-6) ?? 0) * 100)
          seen.push(n)
          return { ...r, segments: [{ start: 0, end: samples.length / SAMPLE_RATE, text: `chunk${n}` }, ...r.segments.map(s => ({ ...s, text: `chunk${n}` }))] }
        } finally {
          running--
        }
      },
    }
    // six 10-s blocks, each starting with a marker sample that names it, separated by silences to cut at
    const pcm = new Int16Array(60 * SAMPLE_RATE)
    for (let b = 0; b < 6; b++) {
      const from = b * 10 * SAMPLE_RATE + SAMPLE_RATE / 2
      for (let i = 0; i < 9 * SAMPLE_RATE; i++) pcm[from + i] = Math.round(3000 * Math.sin((2 * Math.PI * (200 + 50 * b) * i) / SAMPLE_RATE))
      pcm[from] = Math.round(((b + 1) / 100) * 32768)
    }
    const path = join(dir.path, 'blocks.wav')
    writeFileSync(path, wavFromPcm(pcm, SAMPLE_RATE))
    const out = await transcribeMedia(path, { asr, tools, chunkSeconds: 10, scheduler: createAsrScheduler(2) }, { language: null })
    console.log(`whisper.cpp tiny model: ${seen.length} chunks, at most ${most} at once, finished in the order ${seen.join(', ')}`)
    expect(most).toBe(2)
    // stitched in order whatever order they finished in
    const order = [...new Set(out.segments.map(s => s.text))]
    expect(order).toEqual(['chunk1', 'chunk2', 'chunk3', 'chunk4', 'chunk5', 'chunk6'])
    inOrderWithin(out.segments, 60)
    // each segment's seek is where its chunk starts, in 10 ms frames (OpenAI's verbose_json `seek`):
    // the first segment of a chunk starts there; whisper's own segments say they were decoded greedily
    const firsts = out.segments.filter((s, i) => i === 0 || s.text !== out.segments[i - 1]!.text)
    expect(firsts.map(s => s.seek)).toEqual(firsts.map(s => Math.round(s.start * 100)))
    expect(new Set(out.segments.map(s => s.seek)).size).toBe(6)
    expect(out.segments.filter(s => s.temperature !== undefined).every(s => s.temperature === 0)).toBe(true)
    // the multilingual model detects a language (the random weights hear some language, not English)
    expect(out.language).toMatch(/^[a-z]{2,3}$/)
  }, 120_000)
})

describe('chunks planned for the slots', () => {
  test('as many 45-s chunks, rounded up to whole rounds of the slots, never under 10 s', () => {
    // [seconds, slots] -> [chunks, seconds each]
    const table: [number, number, number, number][] = [
      [120, 2, 4, 30], // was 45 + 45 + 30, the last alone
      [601, 2, 14, 42.93],
      [90, 2, 2, 45],
      [45, 2, 2, 22.5],
      [20, 2, 2, 10],
      [15, 2, 1, 15], // two of 7.5 s would pay the engine's start twice for little
      [600, 4, 16, 37.5],
      [3600, 2, 80, 45],
      [120, 1, 3, 40],
    ]
    expect(table.map(([d, s]) => { const c = plannedChunkSeconds(d, s); return [d, s, Math.round(d / c), Math.round(c * 100) / 100] })).toEqual(table)
  })

  test('a 120-s recording with its duration known goes to 2 slots as 4 chunks of about 30 s; without it, as 45-s chunks', async () => {
    const d = tempDir('notesvc-plan-')
    try {
      const path = join(d.path, 'two-minutes.wav')
      writeFileSync(path, makeWav({ seconds: 120 }))
      const heard: number[] = []
      const asr: AsrEngine = {
        name: 'counting',
        async ready() {},
        async transcribeChunk(samples) {
          heard.push(samples.length / SAMPLE_RATE)
          return { segments: [], language: 'en' }
        },
      }
      await transcribeMedia(path, { asr, tools, scheduler: createAsrScheduler(2) }, { language: null, onProgress: () => {} })
      expect(heard.length).toBe(4)
      for (const s of heard) expect(Math.abs(s - 30)).toBeLessThanOrEqual(2) // cut at a quiet point within 2 s
      heard.length = 0
      await transcribeMedia(path, { asr, tools, scheduler: createAsrScheduler(2) }, { language: null })
      expect(heard.length).toBe(3)
    } finally {
      d.remove()
    }
  })

  test('each chunk asks for its slot saying how much of the recording is left to start (for shortest remaining first)', async () => {
    const d = tempDir('notesvc-left-')
    try {
      const path = join(d.path, 'two-minutes.wav')
      writeFileSync(path, makeWav({ seconds: 120 }))
      const asr: AsrEngine = { name: 'silent', async ready() {}, async transcribeChunk() { return { segments: [], language: 'en' } } }
      const slots = createAsrScheduler(1)
      const left: number[] = []
      const scheduler: AsrScheduler = {
        ...slots,
        async acquire(owner, signal) {
          const release = await slots.acquire(owner, signal)
          left.push(owner.remainingSeconds?.() ?? Number.NaN)
          return release
        },
      }
      // the duration known: 3 chunks of 40 s on 1 slot, each granted with its own and the later ones left
      await transcribeMedia(path, { asr, tools, scheduler }, { language: null, onProgress: () => {} })
      expect(left.length).toBe(3)
      left.forEach((l, i) => expect(Math.abs(l - (120 - 40 * i))).toBeLessThanOrEqual(2))
      // unknown: as long as any, until the whole file is decoded; the last chunk then knows it is the last
      left.length = 0
      await transcribeMedia(path, { asr, tools, scheduler }, { language: null })
      expect(left[0]).toBe(Infinity)
      expect(Math.abs(left.at(-1)! - 30)).toBeLessThanOrEqual(2)
    } finally {
      d.remove()
    }
  })
})

describe('word confidences across chunks', () => {
  test('each word keeps the confidence the engine gave it, its times moved by its chunk\'s start, through JSON as the note stores it', async () => {
    const d = tempDir('notesvc-confidence-')
    try {
      const path = join(d.path, 'forty-seconds.wav')
      writeFileSync(path, makeWav({ seconds: 40 }))
      // an engine that hears two words in each chunk, the second less surely
      const asr: AsrEngine = {
        name: 'two-words',
        async ready() {},
        async transcribeChunk() {
          const words = [{ word: 'hello', start: 1, end: 1.5, confidence: 0.93 }, { word: 'there', start: 1.6, end: 2, confidence: 0.21 }]
          return { segments: [{ start: 1, end: 2, text: 'hello there', words }], language: 'en' }
        },
      }
      const out = await transcribeMedia(path, { asr, tools, chunkSeconds: 20, scheduler: createAsrScheduler(1) }, { language: null })
      const stored = JSON.parse(JSON.stringify(out.segments)) as TranscriptSegment[]
      // the second chunk starts where the first was cut (at a quiet point near 20 s); times in ms
      const at = (x: number) => Math.round((x + stored[1]!.seek! / 100) * 1000) / 1000
      expect(stored.map(s => s.words)).toEqual([
        [{ word: 'hello', start: 1, end: 1.5, confidence: 0.93 }, { word: 'there', start: 1.6, end: 2, confidence: 0.21 }],
        [{ word: 'hello', start: at(1), end: at(1.5), confidence: 0.93 }, { word: 'there', start: at(1.6), end: at(2), confidence: 0.21 }],
      ])
    } finally {
      d.remove()
    }
  })
})
