import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseVtt } from 'node-webvtt'
import { parseSync as parseSubtitles } from 'subtitle'
import { run, tempDir } from '../helpers/process'
import { words } from '../helpers/wer'
import { LIBRIVOX } from '../fixtures/speech'

// `notesvc transcribe` as a user runs it: a subprocess on a real recording of pocketsphinx-testdata
// (7 s of LibriVox speech), PocketSphinx hearing it, no server and no database.
const RECORDING = join(LIBRIVOX, 'sense_and_sensibility_01_austen_64kb-0870.wav')
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them'

const dir = tempDir('notesvc-transcribe-')
afterAll(() => dir.remove())
const dataDir = join(dir.path, 'data')
const env = { NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DATA_DIR: dataDir, NOTESVC_MODELS_DIR: join(dir.path, 'models') }
const transcribe = (...args: string[]) => run(['bun', 'run', 'src/cli.ts', 'transcribe', ...args], { env })

// heard clearly enough to be summarized (7 of its 17 words below 0.7 confidence, 15 of them right);
// the 7-s clip above has 14 of its 24 words below 0.7, so its summary says that instead
const CLEAR = join(LIBRIVOX, 'sense_and_sensibility_01_austen_64kb-0920.wav')
const CLEAR_REFERENCE = 'had he married a more a amiable woman he might have been made still more respectable than he was'

/** How many of the reference's words a text has (each counted once). */
const heard = (text: string, reference = REFERENCE) => new Set(words(text).filter(w => words(reference).includes(w))).size

describe('notesvc transcribe FILE', () => {
  let json: { language: string; duration: number; transcript: string; segments: { start: number; end: number; text: string }[] }
  // the four formats run side by side (one PocketSphinx process each), the summaries after them
  let runs: Record<'json' | 'srt' | 'vtt' | 'txt', Awaited<ReturnType<typeof transcribe>>>
  beforeAll(async () => {
    const [j, srt, vtt, txt] = await Promise.all([
      transcribe(RECORDING, '--format', 'json'),
      transcribe(RECORDING, '--format', 'srt'),
      transcribe(RECORDING, '--format', 'vtt'),
      transcribe(RECORDING),
    ])
    runs = { json: j, srt, vtt, txt }
  }, 60_000)

  test('--format json: the segments with times inside the recording, the transcript, the language; progress on stderr only', () => {
    const r = runs.json
    expect(r.code).toBe(0)
    json = JSON.parse(r.stdout)
    expect(json.language).toBe('en')
    expect(json.duration).toBeCloseTo(7.1, 1)
    expect(json.segments.length).toBeGreaterThan(0)
    for (const s of json.segments) {
      expect(s.start).toBeGreaterThanOrEqual(0)
      expect(s.end).toBeGreaterThanOrEqual(s.start)
      expect(s.end).toBeLessThanOrEqual(7.1)
    }
    expect(json.transcript).toBe(json.segments.map(s => s.text).join(' '))
    expect(heard(json.transcript)).toBeGreaterThanOrEqual(8)
    // the progress bar went to stderr and reached the end
    expect(r.stderr).toContain('100%')
    // no server, no database: the data folder was never created
    expect(existsSync(dataDir)).toBe(false)
  })

  test('--format srt parses with a real SRT parser; cues a screen can show, cut from the segments, the first with words of the reference', () => {
    const r = runs.srt
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')[0]).toBe('1')
    const cues = parseSubtitles(r.stdout).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    // the recording's one 7 s utterance of 24 words is more than one cue holds (2 lines of 42, 7 s)
    expect(cues.length).toBeGreaterThan(json.segments.length)
    expect(cues.map(c => c.text.replaceAll('\n', ' ')).join(' ')).toBe(json.transcript)
    for (const s of json.segments) {
      expect(cues.some(c => c.start / 1000 === s.start)).toBe(true)
      expect(cues.some(c => c.end / 1000 === s.end)).toBe(true)
    }
    for (const c of cues) {
      expect(c.end - c.start).toBeLessThanOrEqual(7000)
      expect(c.text.split('\n').length).toBeLessThanOrEqual(2)
    }
    expect(heard(cues[0]!.text)).toBeGreaterThanOrEqual(3)
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(42)
  })

  test('--format vtt is valid WebVTT for a strict parser, the same cues as srt', () => {
    const r = runs.vtt
    expect(r.code).toBe(0)
    const vtt = parseVtt(r.stdout, { strict: true })
    expect(vtt.valid).toBe(true)
    const srt = parseSubtitles(runs.srt.stdout).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    expect(vtt.cues.map(c => [Math.round(c.start * 1000), Math.round(c.end * 1000), c.text])).toEqual(srt.map(c => [c.start, c.end, c.text]))
  })

  test('txt (the default) is the transcript alone', () => {
    const r = runs.txt
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${json.transcript}\n`)
  })

  test('--summary with the builtin engine adds a summary in json; --style bulletpoints alone implies it, in txt before the transcript', async () => {
    const [withSummary, bullets, doubted] = await Promise.all([
      transcribe(CLEAR, '--format', 'json', '--summary'),
      transcribe('--style', 'bulletpoints', CLEAR),
      transcribe(RECORDING, '--format', 'json', '--summary'),
    ])
    expect(withSummary.code).toBe(0)
    const body = JSON.parse(withSummary.stdout)
    expect(body.summary.styleId).toBe('note')
    expect(heard(body.summary.summary, CLEAR_REFERENCE)).toBeGreaterThanOrEqual(3)
    expect(body.summary.title.length).toBeGreaterThan(0)
    expect(withSummary.stderr).toContain('summarizing')

    expect(bullets.code).toBe(0)
    const [summary, transcript] = bullets.stdout.split('\n---\n')
    expect(summary).toMatch(/^- /m)
    expect(transcript!.trim()).toBe(body.transcript)

    // most of the 7-s clip's words were heard with low confidence: the summary says so, and states none of them
    expect(doubted.code).toBe(0)
    const unclear = JSON.parse(doubted.stdout)
    expect(unclear.transcript).toBe(json.transcript)
    expect(unclear.summary.summary).toMatch(/^The transcript is unreliable: \d+ of 24 words were heard with low confidence, and no sentence clearly/)
    expect(unclear.transcript).toMatch(/leisure to consider/)
    expect(unclear.summary.summary).not.toMatch(/leisure|consider|power/)
  }, 30_000)
})

describe('notesvc transcribe: mistakes say what to do next', () => {
  const mistakes = [
    ['a missing file', ['no-such-talk.wav'], 2, /no such file: no-such-talk\.wav; check the path/],
    ['a file that is not media', ['package.json'], 2, /package\.json could not be read as audio or video .*check that it is a recording/],
    ['an unknown format', [RECORDING, '--format', 'docx'], 2, /--format must be one of txt, srt, vtt, json/],
    ['an unknown style', [RECORDING, '--style', 'haiku'], 2, /--style must be one of note, transcript, bulletpoints, meeting-notes/],
    ['a summary in subtitles', [RECORDING, '--format', 'srt', '--summary'], 2, /subtitles have no place for a summary; use --format json or txt/],
    ['no file', [], 2, /name the file to transcribe: .*transcribe talk\.m4a/],
  ] as const
  test(`${mistakes.map(m => m[0]).join(', ')}: exit 2, nothing on stdout, a message saying what to do`, async () => {
    const results = await Promise.all(mistakes.map(([, args]) => transcribe(...args)))
    for (const [i, [what, , code, message]] of mistakes.entries()) {
      const r = results[i]!
      expect({ what, code: r.code, stdout: r.stdout }).toEqual({ what, code, stdout: '' })
      expect(r.stderr).toMatch(message)
    }
  }, 30_000)

  test('an empty file is refused before any engine runs', async () => {
    const empty = join(dir.path, 'empty.m4a')
    writeFileSync(empty, '')
    const r = await transcribe(empty)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('is empty; give the path of an audio or video file')
  }, 30_000)

  test('no speech engine (whisper asked for, no model): exit 1 naming the command that gets one', async () => {
    const r = await run(['bun', 'run', 'src/cli.ts', 'transcribe', RECORDING], { env: { ...env, NOTESVC_ASR: 'whisper' } })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/Whisper model not found at .*; download it with `.*models pull base\.en`/)
  }, 30_000)
})

test('the reference transcript is the one pocketsphinx-testdata ships', () => {
  expect(readFileSync(join(LIBRIVOX, 'transcription'), 'utf8')).toContain(REFERENCE)
})
