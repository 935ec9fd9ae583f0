import { readWavInfo } from '../media/wav'
import { MediaToolMissingError, MediaUnreadableError } from '../media/errors'
import type { MediaTools } from '../media/ffmpeg'
import { SAMPLE_RATE, type Diarization } from './engine'
import { FRAMES_PER_SECOND, HOP_SAMPLES } from './features'
import { findSpeech, foldShortRuns, MIN_TURN, numberTurns, toTurns } from './speech-frames'

/**
 * Diarization of a call recorded in stereo with one person per channel (phone and meeting recorders
 * often do this): who speaks is which channel is louder. Fed interleaved 16 kHz stereo samples in any
 * pieces, it keeps per 10-ms frame the two channels' loudness (2 floats), and at the end decides
 * whether the channels are different people: in most speech one channel is clearly louder
 * (DOMINANCE), and each channel leads a fair share of it (MIN_SHARE). A mono recording copied to both
 * channels is never louder on one side; two microphones in one room seldom by 10 dB. (Correlating the
 * channels does not tell: one line's faint echo on the other is the same sound, as correlated as a
 * copy.) If they are different people, a speaker per channel; if not, null, and the caller diarizes
 * the mixed-down mono.
 */
export class ChannelSplitter {
  private left = new Float32Array(1024)
  private right = new Float32Array(1024)
  private frames = 0
  private readonly pending = new Float32Array(2 * HOP_SAMPLES)
  private pendingLength = 0

  /** Interleaved stereo samples (left, right, left, …), float32 in [-1, 1]. */
  feed(interleaved: Float32Array): void {
    for (let i = 0; i < interleaved.length; i++) {
      this.pending[this.pendingLength++] = interleaved[i]!
      if (this.pendingLength === this.pending.length) {
        this.frame()
        this.pendingLength = 0
      }
    }
  }

  finish(): Diarization | null {
    const frames = this.frames
    const left = this.left.subarray(0, frames)
    const right = this.right.subarray(0, frames)
    const louder = Float32Array.from(left, (l, i) => Math.max(l, right[i]!))
    const speech = findSpeech(louder)
    let speechFrames = 0
    let dominated = 0
    let leftLeads = 0
    const labels = new Int32Array(frames).fill(-1)
    const speechIndex: number[] = []
    for (let t = 0; t < frames; t++) {
      if (!speech[t]) continue
      speechFrames++
      speechIndex.push(t)
      const difference = left[t]! - right[t]!
      labels[t] = difference >= 0 ? 0 : 1
      if (Math.abs(difference) >= DOMINANCE) {
        dominated++
        if (difference > 0) leftLeads++
      }
    }
    if (speechFrames < MIN_TURN * FRAMES_PER_SECOND) return null
    const leftShare = leftLeads / Math.max(1, dominated)
    const separate =
      dominated / speechFrames >= MIN_DOMINATED &&
      Math.min(leftShare, 1 - leftShare) >= MIN_SHARE
    if (!separate) return null
    foldShortRuns(labels, speechIndex, Math.round(MIN_TURN * FRAMES_PER_SECOND))
    const { turns, order } = numberTurns(toTurns(labels, speech))
    return { turns, speakers: order.size, engine: 'channels' }
  }

  private frame(): void {
    if (this.frames === this.left.length) {
      this.left = grown(this.left)
      this.right = grown(this.right)
    }
    let ll = 0
    let rr = 0
    for (let i = 0; i < this.pending.length; i += 2) {
      const l = this.pending[i]!
      const r = this.pending[i + 1]!
      ll += l * l
      rr += r * r
    }
    this.left[this.frames] = Math.log10(ll / HOP_SAMPLES + 1e-12)
    this.right[this.frames] = Math.log10(rr / HOP_SAMPLES + 1e-12)
    this.frames++
  }
}

/** One channel leads when it is at least 10 dB louder (log10 units of power). */
const DOMINANCE = 1
/** Share of speech frames in which one channel must lead. */
const MIN_DOMINATED = 0.6
/** Share of the led frames the quieter side must lead, so that both channels hold a speaker. */
const MIN_SHARE = 0.1

function grown(a: Float32Array): Float32Array<ArrayBuffer> {
  const b = new Float32Array(a.length * 2)
  b.set(a)
  return b
}

/**
 * The channel diarization of a media file (see ChannelSplitter), or null when it is not stereo or its
 * channels are not one person each. The channel count comes from the WAV header or ffprobe; the
 * samples from ffmpeg, streamed (16 kHz, two channels).
 */
export async function diarizeChannels(path: string, tools: MediaTools, signal?: AbortSignal): Promise<Diarization | null> {
  if ((await channelCount(path, tools)) !== 2) return null
  if (!tools.ffmpeg) throw new MediaToolMissingError('ffmpeg is not installed, so stereo channels cannot be read; install it with: apt-get install ffmpeg (or set NOTESVC_FFMPEG)')
  const splitter = new ChannelSplitter()
  const proc = Bun.spawn([tools.ffmpeg, '-nostdin', '-v', 'error', '-i', path, '-vn', '-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '2', '-ar', String(SAMPLE_RATE), 'pipe:1'], {
    stdout: 'pipe', stderr: 'pipe', stdin: 'ignore',
  })
  const abort = () => proc.kill()
  signal?.addEventListener('abort', abort)
  const stderr = new Response(proc.stderr).text()
  let carry = new Uint8Array(0)
  try {
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      const bytes = carry.length ? concat(carry, chunk) : chunk
      const whole = bytes.length - (bytes.length % 4)
      carry = bytes.slice(whole)
      const view = new DataView(bytes.buffer, bytes.byteOffset, whole)
      const samples = new Float32Array(whole / 2)
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true) / 32768
      splitter.feed(samples)
    }
    if ((await proc.exited) !== 0) {
      const why = (await stderr).trim().split('\n').slice(-3).join(' ').slice(0, 300)
      throw new MediaUnreadableError(`ffmpeg could not decode the file${why ? `: ${why}` : ''}`)
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    if (proc.exitCode === null) proc.kill()
  }
  signal?.throwIfAborted()
  return splitter.finish()
}

/** Audio channels of the file: from its WAV header, else ffprobe's first audio stream; null when neither tells. */
async function channelCount(path: string, tools: MediaTools): Promise<number | null> {
  const wav = await readWavInfo(path).catch(() => null)
  if (wav) return wav.channels
  if (!tools.ffprobe) return null
  const proc = Bun.spawn([tools.ffprobe, '-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=channels', '-of', 'default=noprint_wrappers=1:nokey=1', path], {
    stdout: 'pipe', stderr: 'ignore', stdin: 'ignore',
  })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  const channels = Number(out.trim().split('\n')[0])
  return code === 0 && Number.isInteger(channels) && channels > 0 ? channels : null
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}
