/**
 * yt-dlp, the program that fetches a video link's metadata and audio (`createYoutubeSummary`).
 *
 * - `info(url)` runs `yt-dlp --dump-single-json --no-playlist --skip-download -- <url>` and reads the
 *   fields every yt-dlp extractor fills: `id`, `title`, `duration`, `uploader`, `is_live`/`live_status`.
 *   The route checks the duration and the balance with it before anything is downloaded.
 * - `downloadAudio(url, dir)` runs `yt-dlp -f bestaudio/best --no-playlist -o '<dir>/%(id)s.%(ext)s'
 *   --print after_move:filepath -- <url>`. The audio is kept as YouTube serves it (Opus in WebM, AAC in
 *   M4A), not converted with `-x --audio-format wav`: the transcription path decodes any format with
 *   ffmpeg anyway, a WAV of a long video would be ten times larger on disk, and `-x` would make yt-dlp
 *   itself depend on ffmpeg. `--print after_move:filepath` prints the final path once the file is in
 *   place (and implies `--quiet`), so the path is read from yt-dlp rather than guessed.
 * - `--ignore-config` keeps an operator's yt-dlp config file from changing the output these functions
 *   parse; an operator who needs options (cookies, a proxy) can point NOTESVC_YTDLP at a wrapper script.
 * - `--` ends the options, so a URL can never be read as one.
 *
 * Errors: YtdlpMissingError (the program is not installed; the message says how to install it),
 * YtdlpFailedError (yt-dlp failed; `line` is its `ERROR:` line) and its two refinements,
 * YtdlpTimeoutError and YtdlpTooLargeError. An abort of the caller's signal rejects with its reason.
 */
import { stat, unlink } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'

interface YtdlpInfo {
  id: string
  title: string
  /** seconds; null when yt-dlp does not know it (a live stream, some extractors) */
  durationSeconds: number | null
  uploader?: string
  /** the canonical page of the video */
  webpageUrl?: string
  /** true for a stream that is live now (its length is unknown) */
  isLive: boolean
}

interface YtdlpRunOptions {
  /** default: 2 minutes for info, 60 minutes for downloadAudio */
  timeoutMs?: number
  signal?: AbortSignal
}

interface YtdlpDownloadOptions extends YtdlpRunOptions {
  /** refuse files larger than this (passed to yt-dlp as --max-filesize, and checked afterwards) */
  maxBytes?: number
}

export interface Ytdlp {
  /** the program that will run, or null when it is not installed */
  locate(): string | null
  info(url: string, opts?: YtdlpRunOptions): Promise<YtdlpInfo>
  /**
   * Downloads the best audio-only format into `dir` (which the caller creates and removes: partial
   * files of a failed download may remain in it) and returns the file's path.
   */
  downloadAudio(url: string, dir: string, opts?: YtdlpDownloadOptions): Promise<{ path: string }>
}

const YTDLP_INSTALL_HINT =
  'install it with: apt-get install yt-dlp, or pip install yt-dlp, or the standalone binary from https://github.com/yt-dlp/yt-dlp/releases; or set NOTESVC_YTDLP to its path'

/** yt-dlp is not installed (or NOTESVC_YTDLP does not name a program). */
export class YtdlpMissingError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'YtdlpMissingError'
  }
}

/** yt-dlp ran and failed: the video is unavailable, private, age-restricted, blocked, … */
export class YtdlpFailedError extends Error {
  constructor(message: string, readonly line: string | null, readonly exitCode: number | null) {
    super(message)
    this.name = new.target.name
  }
}

/** yt-dlp did not finish within the time limit and was stopped. */
export class YtdlpTimeoutError extends YtdlpFailedError {}

/** The audio is larger than `maxBytes`. */
export class YtdlpTooLargeError extends YtdlpFailedError {}

const INFO_TIMEOUT_MS = 2 * 60 * 1000
const DOWNLOAD_TIMEOUT_MS = 60 * 60 * 1000
const KILL_GRACE_MS = 2000

interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

/** The line that says why yt-dlp failed: its last `ERROR:` line, else the last line it wrote. */
function ytdlpErrorLine(stderr: string): string | null {
  const lines = stderr.split(/\r?\n/).map(l => l.trim()).filter(Boolean)
  const line = lines.findLast(l => l.startsWith('ERROR:')) ?? lines.at(-1) ?? null
  return line === null ? null : line.slice(0, 500)
}

export function createYtdlp(o: { program?: string; searchPath?: string } = {}): Ytdlp {
  const configured = o.program ?? (process.env.NOTESVC_YTDLP || undefined)

  function locate(): string | null {
    const path = o.searchPath ?? process.env.PATH ?? ''
    if (configured) return Bun.which(configured, { PATH: path })
    return Bun.which('yt-dlp', { PATH: path })
  }

  function program(): string {
    const found = locate()
    if (found) return found
    if (configured) throw new YtdlpMissingError(`yt-dlp is not installed: ${configured} (NOTESVC_YTDLP) is not an executable program; ${YTDLP_INSTALL_HINT}`)
    throw new YtdlpMissingError(`yt-dlp is not installed (it is not on PATH); ${YTDLP_INSTALL_HINT}`)
  }

  async function run(args: string[], timeoutMs: number, signal: AbortSignal | undefined, what: string): Promise<RunResult> {
    const exe = program()
    signal?.throwIfAborted()
    let proc: ReturnType<typeof Bun.spawn<'ignore', 'pipe', 'pipe'>>
    try {
      proc = Bun.spawn([exe, ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    } catch (err) {
      throw new YtdlpMissingError(`yt-dlp could not be started (${(err as Error).message}); ${YTDLP_INSTALL_HINT}`)
    }
    let timedOut = false
    let killTimer: ReturnType<typeof setTimeout> | undefined
    const stop = () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGTERM')
      killTimer = setTimeout(() => proc.kill('SIGKILL'), KILL_GRACE_MS)
    }
    const timer = setTimeout(() => { timedOut = true; stop() }, timeoutMs)
    signal?.addEventListener('abort', stop)
    try {
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
      if (signal?.aborted) throw signal.reason
      if (timedOut) throw new YtdlpTimeoutError(`yt-dlp did not ${what} within ${Math.round(timeoutMs / 1000)} seconds`, null, null)
      return { code, stdout, stderr }
    } finally {
      clearTimeout(timer)
      clearTimeout(killTimer)
      signal?.removeEventListener('abort', stop)
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    }
  }

  function failed(what: string, r: RunResult): YtdlpFailedError {
    const line = ytdlpErrorLine(r.stderr)
    return new YtdlpFailedError(`yt-dlp could not ${what}${line ? `: ${line}` : ` (exit code ${r.code})`}`, line, r.code)
  }

  return {
    locate,

    async info(url, opts = {}) {
      const what = 'read the video details'
      const r = await run(['--ignore-config', '--dump-single-json', '--no-playlist', '--skip-download', '--', url], opts.timeoutMs ?? INFO_TIMEOUT_MS, opts.signal, what)
      if (r.code !== 0) throw failed(what, r)
      let json: Record<string, unknown>
      try {
        json = JSON.parse(r.stdout) as Record<string, unknown>
      } catch {
        throw new YtdlpFailedError(`yt-dlp could not ${what}: its output is not JSON`, ytdlpErrorLine(r.stderr), r.code)
      }
      if (!json || typeof json !== 'object' || typeof json.id !== 'string') {
        throw new YtdlpFailedError(`yt-dlp could not ${what}: its output names no video id`, ytdlpErrorLine(r.stderr), r.code)
      }
      const duration = typeof json.duration === 'number' && Number.isFinite(json.duration) && json.duration >= 0 ? json.duration : null
      const uploader = typeof json.uploader === 'string' ? json.uploader : typeof json.channel === 'string' ? json.channel : undefined
      return {
        id: json.id,
        title: typeof json.title === 'string' ? json.title : typeof json.fulltitle === 'string' ? json.fulltitle : json.id,
        durationSeconds: duration,
        ...(uploader !== undefined ? { uploader } : {}),
        ...(typeof json.webpage_url === 'string' ? { webpageUrl: json.webpage_url } : {}),
        isLive: json.is_live === true || json.live_status === 'is_live',
      }
    },

    async downloadAudio(url, dir, opts = {}) {
      const what = 'download the audio'
      const home = resolve(dir)
      // the output template is a %-format string: a literal % in the folder name is written %%
      const template = `${home.replaceAll('%', '%%')}/%(id)s.%(ext)s`
      const args = ['--ignore-config', '-f', 'bestaudio/best', '--no-playlist', '--no-progress', '-o', template, '--print', 'after_move:filepath']
      if (opts.maxBytes !== undefined) args.push('--max-filesize', String(opts.maxBytes))
      args.push('--', url)
      const r = await run(args, opts.timeoutMs ?? DOWNLOAD_TIMEOUT_MS, opts.signal, what)
      if (r.code !== 0) throw failed(what, r)
      const printed = r.stdout.split(/\r?\n/).map(l => l.trim()).filter(Boolean).at(-1)
      if (!printed) {
        // yt-dlp skips a file over --max-filesize, exits 0 and prints no path
        if (opts.maxBytes !== undefined) {
          throw new YtdlpTooLargeError(`the video's audio is larger than the limit of ${opts.maxBytes} bytes`, ytdlpErrorLine(r.stderr + '\n' + r.stdout), r.code)
        }
        throw new YtdlpFailedError(`yt-dlp could not ${what}: it reported no file`, ytdlpErrorLine(r.stderr), r.code)
      }
      const path = resolve(home, printed)
      const rel = relative(home, path)
      if (rel.startsWith('..') || isAbsolute(rel)) {
        throw new YtdlpFailedError(`yt-dlp could not ${what}: it wrote outside the download folder (${printed})`, null, r.code)
      }
      const size = await stat(path).then(s => s.size, () => null)
      if (size === null) throw new YtdlpFailedError(`yt-dlp could not ${what}: the file it reported (${printed}) does not exist`, null, r.code)
      if (opts.maxBytes !== undefined && size > opts.maxBytes) {
        await unlink(path).catch(() => {})
        throw new YtdlpTooLargeError(`the video's audio is ${size} bytes, over the limit of ${opts.maxBytes} bytes`, null, r.code)
      }
      return { path }
    },
  }
}
