import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { createYtdlp, YtdlpFailedError, YtdlpMissingError, YtdlpTimeoutError, YtdlpTooLargeError } from '../../../src/engines/media/ytdlp'
import { readWavInfo } from '../../../src/engines/media/wav'
import { FAKE_WAV_SECONDS, fakeWav, installFakeYtdlp } from '../../fixtures/fake-ytdlp'
import { tempDir } from '../../helpers/process'

const VIDEO = 'https://www.youtube.com/watch?v=dQw4w9WgXcQ'
const link = (id: string) => `https://www.youtube.com/watch?v=${id}`

let bin: ReturnType<typeof tempDir>
let work: ReturnType<typeof tempDir>
let fake: string
const log = () => join(bin.path, 'calls.jsonl')
const calls = (): string[][] => existsSync(log()) ? readFileSync(log(), 'utf8').trim().split('\n').map(l => JSON.parse(l) as string[]) : []

beforeAll(() => {
  bin = tempDir('notesvc-ytdlp-bin-')
  work = tempDir('notesvc-ytdlp-work-')
  fake = installFakeYtdlp(bin.path, { log: log() })
})

afterAll(() => {
  bin.remove()
  work.remove()
})

describe('yt-dlp info', () => {
  test('reads id, title, duration and uploader from --dump-single-json', async () => {
    const ytdlp = createYtdlp({ program: fake })
    const info = await ytdlp.info(VIDEO)
    expect(info).toEqual({
      id: 'dQw4w9WgXcQ',
      title: 'Notes on the history of the transistor',
      durationSeconds: 212,
      uploader: 'Example Lectures',
      webpageUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
      isLive: false,
    })
    const args = calls().at(-1)!
    expect(args).toContain('--dump-single-json')
    expect(args).toContain('--no-playlist')
    expect(args).toContain('--skip-download')
    // the URL comes after `--`, so it can never be read as an option
    expect(args.slice(-2)).toEqual(['--', VIDEO])
  })

  test('is found on PATH as yt-dlp when no program is configured', async () => {
    const ytdlp = createYtdlp({ searchPath: bin.path })
    expect(ytdlp.locate()).toBe(fake)
    expect((await ytdlp.info(VIDEO)).id).toBe('dQw4w9WgXcQ')
  })

  test('a live stream has no duration', async () => {
    const info = await createYtdlp({ program: fake }).info(link('livestream0'))
    expect(info.durationSeconds).toBeNull()
    expect(info.isLive).toBe(true)
  })

  test('an unavailable video fails with yt-dlp\'s ERROR line', async () => {
    const err = await createYtdlp({ program: fake }).info(link('unavailabl0')).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpFailedError)
    expect(err.line).toBe('ERROR: [youtube] unavailabl0: Video unavailable')
    expect(err.exitCode).toBe(1)
    expect(err.message).toContain('Video unavailable')
  })

  test('a private video: the ERROR line wins over the warnings before it', async () => {
    const err = await createYtdlp({ program: fake }).info(link('privatevid0')).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpFailedError)
    expect(err.line).toStartWith('ERROR: [youtube] privatevid0: Private video')
  })

  test('output that is not JSON is a failure, not a crash', async () => {
    const err = await createYtdlp({ program: fake }).info(link('badjsonxxx0')).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpFailedError)
    expect(err.message).toContain('not JSON')
  })

  test('a hung yt-dlp is stopped at the time limit', async () => {
    // A yt-dlp that never ends by itself and records its pid: only the time limit can end this call.
    const pidFile = join(bin.path, 'hung.pid')
    const hung = join(bin.path, 'yt-dlp-hung')
    writeFileSync(hung, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 600\n`)
    chmodSync(hung, 0o755)
    const err = await createYtdlp({ program: hung }).info(link('slowslowsl0'), { timeoutMs: 1000 }).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpTimeoutError)
    expect(err).toBeInstanceOf(YtdlpFailedError)
    // and the program is gone, not left running
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(() => process.kill(pid, 0)).toThrow()
  })

  test('the caller\'s signal stops it and rejects with the signal\'s reason', async () => {
    const controller = new AbortController()
    const pending = createYtdlp({ program: fake }).info(link('slowslowsl0'), { signal: controller.signal }).catch(e => e)
    setTimeout(() => controller.abort(new Error('client went away')), 200)
    const err = await pending
    expect(err).toBeInstanceOf(Error)
    expect(err.message).toBe('client went away')
  })
})

describe('yt-dlp download', () => {
  test('writes the audio into the folder and returns the path yt-dlp printed', async () => {
    const dir = join(work.path, 'a')
    const { path } = await createYtdlp({ program: fake }).downloadAudio(VIDEO, dir, { maxBytes: 10_000_000 })
    expect(path).toBe(join(dir, 'dQw4w9WgXcQ.wav'))
    expect(readFileSync(path).equals(fakeWav())).toBe(true)
    const wav = await readWavInfo(path)
    expect(wav?.durationSeconds).toBeCloseTo(FAKE_WAV_SECONDS, 3)
    const args = calls().at(-1)!
    expect(args).toContain('--no-playlist')
    expect(args.join(' ')).toContain('-f bestaudio/best')
    expect(args.join(' ')).toContain('--print after_move:filepath')
    expect(args.join(' ')).toContain('--max-filesize 10000000')
    expect(args.slice(-2)).toEqual(['--', VIDEO])
  })

  test('a % in the folder name is escaped in the output template', async () => {
    const dir = join(work.path, '100%(id)s')
    // a literal "%(id)s" in the folder name stays literal: yt-dlp reads `%%` as `%`
    const { path } = await createYtdlp({ program: fake }).downloadAudio(VIDEO, dir)
    expect(path).toBe(join(dir, 'dQw4w9WgXcQ.wav'))
    expect(existsSync(path)).toBe(true)
  })

  test('audio over maxBytes: yt-dlp skips it and prints no path, which is YtdlpTooLargeError', async () => {
    const dir = join(work.path, 'b')
    const err = await createYtdlp({ program: fake }).downloadAudio(VIDEO, dir, { maxBytes: 1000 }).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpTooLargeError)
    expect(err.message).toContain('1000 bytes')
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([])
  })

  test('an unavailable video fails with the ERROR line', async () => {
    const err = await createYtdlp({ program: fake }).downloadAudio(link('unavailabl0'), join(work.path, 'c')).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpFailedError)
    expect(err.message).toContain('ERROR: [youtube] unavailabl0: Video unavailable')
  })

  test('a download that takes too long is stopped', async () => {
    const err = await createYtdlp({ program: fake }).downloadAudio(link('slowslowsl0'), join(work.path, 'd'), { timeoutMs: 300 }).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpTimeoutError)
  })

  test('a program that prints a path outside the folder is refused', async () => {
    const liar = join(bin.path, 'liar')
    writeFileSync(liar, '#!/bin/sh\necho /etc/passwd\n')
    chmodSync(liar, 0o755)
    const err = await createYtdlp({ program: liar }).downloadAudio(VIDEO, join(work.path, 'e')).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpFailedError)
    expect(err.message).toContain('outside the download folder')
  })
})

describe('yt-dlp missing', () => {
  test('not on PATH: the error says how to install it', async () => {
    const empty = tempDir('notesvc-empty-path-')
    try {
      const ytdlp = createYtdlp({ searchPath: empty.path })
      expect(ytdlp.locate()).toBeNull()
      const err = await ytdlp.info(VIDEO).catch(e => e)
      expect(err).toBeInstanceOf(YtdlpMissingError)
      expect(err.message).toContain('apt-get install yt-dlp')
      expect(err.message).toContain('NOTESVC_YTDLP')
      expect(await ytdlp.downloadAudio(VIDEO, work.path).catch(e => e)).toBeInstanceOf(YtdlpMissingError)
    } finally {
      empty.remove()
    }
  })

  test('NOTESVC_YTDLP naming a missing file: the error names it', async () => {
    const err = await createYtdlp({ program: '/nonexistent/yt-dlp' }).info(VIDEO).catch(e => e)
    expect(err).toBeInstanceOf(YtdlpMissingError)
    expect(err.message).toContain('/nonexistent/yt-dlp')
    expect(err.message).toContain('apt-get install yt-dlp')
  })
})
