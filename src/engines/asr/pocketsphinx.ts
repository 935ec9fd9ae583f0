import { accessSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  AsrUnavailableError,
  SAMPLE_RATE,
  type AsrEngine,
  type ChunkTranscription,
  type TranscribeOptions,
  type TranscriptSegment,
} from './engine'

/**
 * CMU PocketSphinx from Debian's `pocketsphinx` (0.8+5prealpha) and `pocketsphinx-en-us` packages,
 * run as a subprocess: for hosts too small for Whisper, English only.
 *
 * One `pocketsphinx_continuous` process per chunk. The 0.8 CLI reads audio only from a file it
 * fopen()s (`-infile`; headerless 16-bit little-endian PCM unless the name ends in `.wav`) or from a
 * sound card (`-inmic`). A pipe would do (`-infile /dev/stdin`), but Bun gives a child's stdin as a
 * socket, which /dev/stdin cannot open; so the chunk is converted a block at a time into a raw PCM
 * file in a private temporary directory (2 bytes a sample, about 10 MB for five minutes), which is
 * removed when the call ends, however it ends (success, failure, abort). Memory holds the caller's
 * chunk and one converted block, nothing more.
 *
 * With `-time yes` the program prints, for each utterance its voice-activity detector finds, the
 * hypothesis line and then one line per word: `word start end confidence`, times in seconds from
 * the start of the input (silence the detector skipped is counted, so they are chunk-relative).
 * Words are grouped into one segment per utterance (cut further when an utterance runs long).
 */

export const POCKETSPHINX_INSTALL_HINT = 'apt-get install pocketsphinx pocketsphinx-en-us'

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us'

export const POCKETSPHINX_DEFAULTS = {
  program: 'pocketsphinx_continuous',
  hmm: `${MODEL_DIR}/en-us`,
  lm: `${MODEL_DIR}/en-us.lm.bin`,
  dict: `${MODEL_DIR}/cmudict-en-us.dict`,
} as const

export interface PocketsphinxOptions {
  /** the `pocketsphinx_continuous` program: a name looked up on PATH, or a path */
  program?: string
  /** acoustic model directory */
  hmm?: string
  /** language model */
  lm?: string
  /** pronunciation dictionary */
  dict?: string
}

/** An utterance longer than this is cut into several segments at word boundaries. */
const MAX_SEGMENT_SECONDS = 30
/** Samples converted and written to the program at a time. */
const BLOCK_SAMPLES = 16_384
/** Int16Array writes the host's byte order; the program is told which. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
/** Bytes of the program's log kept to explain a failure. */
const STDERR_TAIL_BYTES = 8_192

export function createPocketsphinxEngine(opts: PocketsphinxOptions = {}): AsrEngine {
  const hmm = opts.hmm ?? POCKETSPHINX_DEFAULTS.hmm
  const lm = opts.lm ?? POCKETSPHINX_DEFAULTS.lm
  const dict = opts.dict ?? POCKETSPHINX_DEFAULTS.dict

  function unavailable(what: string): AsrUnavailableError {
    return new AsrUnavailableError(
      `pocketsphinx engine unavailable: ${what}. Install it with \`${POCKETSPHINX_INSTALL_HINT}\` ` +
        `(or set NOTESVC_ASR=whisper)`,
    )
  }

  /** The program's path, or an AsrUnavailableError naming what is missing. */
  function check(): string {
    const found = findPocketsphinx(opts)
    if ('missing' in found) throw unavailable(found.missing)
    return found.program
  }

  return {
    name: 'pocketsphinx',
    wordTimes: true,
    translates: false,
    englishOnly: () => true,

    async ready() {
      check()
    },

    async transcribeChunk(samples: Float32Array, topts: TranscribeOptions): Promise<ChunkTranscription> {
      if (topts.language !== null && !/^en(-|$)/i.test(topts.language)) {
        throw new AsrUnavailableError(
          `the pocketsphinx engine recognizes English only, not '${topts.language}'; use NOTESVC_ASR=whisper for other languages`,
        )
      }
      const signal = topts.signal
      signal?.throwIfAborted()
      const path = check()
      const duration = samples.length / SAMPLE_RATE
      if (samples.length === 0) return { segments: [], language: 'en' }

      const dir = mkdtempSync(join(tmpdir(), 'notesvc-pocketsphinx-'))
      let proc: ReturnType<typeof spawn> | null = null
      const onAbort = () => proc?.kill('SIGKILL')
      signal?.addEventListener('abort', onAbort, { once: true })
      try {
        const input = join(dir, 'chunk.raw')
        await writePcm(input, samples, signal)
        signal?.throwIfAborted()
        try {
          proc = spawn(path, input, hmm, lm, dict)
        } catch (err) {
          throw unavailable(`could not start \`${path}\`: ${(err as Error).message}`)
        }
        const [stdout, stderrTail, code] = await Promise.all([
          new Response(proc.stdout).text(),
          tail(proc.stderr, STDERR_TAIL_BYTES),
          proc.exited,
        ])
        signal?.throwIfAborted()
        if (code !== 0) {
          const why = stderrTail
            .split('\n')
            .filter(l => /ERROR|FATAL/.test(l))
            .slice(-5)
            .join('\n')
          throw new Error(`pocketsphinx_continuous exited with ${proc.signalCode ? `signal ${String(proc.signalCode)}` : `code ${code}`}${why ? `:\n${why}` : ''}`)
        }
        return { segments: parseOutput(stdout, duration), language: 'en' }
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err
        throw err
      } finally {
        signal?.removeEventListener('abort', onAbort)
        if (proc && proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGKILL')
          await proc.exited
        }
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

/**
 * Whether PocketSphinx is installed where `opts` (by default the Debian packages' paths) says: the
 * program's path, or what is missing. Cheap (a PATH lookup and a few stats), so `NOTESVC_ASR=auto`
 * can ask on every use.
 */
export function findPocketsphinx(opts: PocketsphinxOptions = {}): { program: string } | { missing: string } {
  const program = opts.program ?? POCKETSPHINX_DEFAULTS.program
  const hmm = opts.hmm ?? POCKETSPHINX_DEFAULTS.hmm
  const lm = opts.lm ?? POCKETSPHINX_DEFAULTS.lm
  const dict = opts.dict ?? POCKETSPHINX_DEFAULTS.dict
  const path = resolveProgram(program)
  if (!path) return { missing: `program \`${program}\` not found` }
  if (!isFile(`${hmm}/mdef`)) return { missing: `acoustic model not found at ${hmm}` }
  if (!isFile(lm)) return { missing: `language model not found at ${lm}` }
  if (!isFile(dict)) return { missing: `dictionary not found at ${dict}` }
  return { program: path }
}

function spawn(program: string, input: string, hmm: string, lm: string, dict: string) {
  return Bun.spawn(
    [
      program,
      '-infile', input,
      '-samprate', String(SAMPLE_RATE),
      '-input_endian', LITTLE_ENDIAN ? 'little' : 'big',
      '-time', 'yes',
      '-hmm', hmm,
      '-lm', lm,
      '-dict', dict,
    ],
    { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  )
}

/** Writes float samples to `path` as 16-bit PCM in the host's byte order, converting one block at a time. */
async function writePcm(path: string, samples: Float32Array, signal: AbortSignal | undefined): Promise<void> {
  const sink = Bun.file(path).writer({ highWaterMark: BLOCK_SAMPLES * 2 })
  try {
    for (let at = 0; at < samples.length; at += BLOCK_SAMPLES) {
      signal?.throwIfAborted()
      const n = Math.min(BLOCK_SAMPLES, samples.length - at)
      const pcm = new Int16Array(n)
      for (let i = 0; i < n; i++) {
        const s = samples[at + i]!
        // x/32768 back to x exactly; clipped to the 16-bit range; NaN becomes 0
        const v = Math.round(s * 32768)
        pcm[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v
      }
      sink.write(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength))
      await sink.flush()
    }
  } finally {
    await sink.end()
  }
}

/** Drains a stream, keeping only its last `max` bytes as text. */
async function tail(stream: ReadableStream<Uint8Array>, max: number): Promise<string> {
  let kept = new Uint8Array(0)
  for await (const chunk of stream) {
    const next = new Uint8Array(Math.min(max, kept.length + chunk.length))
    const fromChunk = Math.min(chunk.length, next.length)
    const fromKept = next.length - fromChunk
    next.set(kept.subarray(kept.length - fromKept), 0)
    next.set(chunk.subarray(chunk.length - fromChunk), fromKept)
    kept = next
  }
  return new TextDecoder().decode(kept)
}

const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\S+)$/
/** `<s>`, `</s>`, `<sil>`, `[NOISE]`, `[SPEECH]`, `++BREATH++` … */
const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+)$/

interface Word {
  word: string
  start: number
  end: number
  /** posterior probability, 0 to 1 */
  prob?: number
}

/**
 * Turns `pocketsphinx_continuous -time yes` output into segments: each utterance is a hypothesis
 * line followed by its words (`word start end confidence`, the first being `<s>`). Alternate
 * pronunciations (`and(2)`) are reduced to the word, fillers dropped, times clamped to the chunk and
 * kept in order; each word keeps its posterior as `confidence` (4 decimals).
 */
export function parseOutput(stdout: string, duration: number): TranscriptSegment[] {
  const utterances: Word[][] = []
  let current: Word[] | null = null
  for (const raw of stdout.split('\n')) {
    const line = raw.trim()
    const m = WORD_LINE.exec(line)
    if (!m) {
      // a hypothesis line (or an empty one): a new utterance follows
      current = null
      continue
    }
    const token = m[1]!
    if (token === '<s>' || current === null) {
      current = []
      utterances.push(current)
    }
    if (FILLER.test(token)) continue
    current.push({ word: token.replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]), prob: Number(m[4]) })
  }

  const segments: TranscriptSegment[] = []
  let floor = 0
  const emit = (words: Word[]) => {
    if (words.length === 0) return
    const start = clamp(Math.max(words[0]!.start, floor), 0, duration)
    const end = clamp(Math.max(words[words.length - 1]!.end, start), start, duration)
    const timed = words.map(w => {
      const ws = round(clamp(Math.max(w.start, start), start, end))
      const confidence = Number.isFinite(w.prob) ? { confidence: Math.round(clamp(w.prob!, 0, 1) * 1e4) / 1e4 } : {}
      return { word: w.word, start: ws, end: round(clamp(w.end, ws, end)), ...confidence }
    })
    // the fourth column is the word's posterior probability (0 to 1): their mean log is OpenAI's avg_logprob
    const logs = words.map(w => Math.log(Math.max(Number.isFinite(w.prob) ? w.prob! : 1, 1e-10)))
    const avgLogprob = Math.round((logs.reduce((a, b) => a + b, 0) / logs.length) * 1e4) / 1e4
    segments.push({ start: round(start), end: round(end), text: words.map(w => w.word).join(' '), words: timed, avgLogprob })
    floor = end
  }
  for (const words of utterances) {
    let part: Word[] = []
    for (const w of words) {
      if (part.length > 0 && w.end - part[0]!.start > MAX_SEGMENT_SECONDS) {
        emit(part)
        part = []
      }
      part.push(w)
    }
    emit(part)
  }
  return segments
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), hi)
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

function resolveProgram(program: string): string | null {
  if (!program.includes('/')) return Bun.which(program)
  try {
    accessSync(program, constants.X_OK)
    return statSync(program).isFile() ? program : null
  } catch {
    return null
  }
}
