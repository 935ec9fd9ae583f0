import { MediaToolMissingError, MediaUnreadableError } from './errors'

export interface MediaTools {
  ffmpeg: string | null
  ffprobe: string | null
}

/** ffmpeg and ffprobe from the configured paths or PATH; null when missing. */
export function findMediaTools(configured: { ffmpeg?: string; ffprobe?: string }): MediaTools {
  return {
    ffmpeg: configured.ffmpeg ?? Bun.which('ffmpeg'),
    ffprobe: configured.ffprobe ?? Bun.which('ffprobe'),
  }
}

/** The media's duration in seconds as ffprobe reads it, or null when it cannot tell. */
export async function probeDuration(ffprobe: string, path: string): Promise<number | null> {
  const proc = Bun.spawn([ffprobe, '-v', 'error', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1', path], {
    stdout: 'pipe', stderr: 'pipe', stdin: 'ignore',
  })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  const seconds = Number(out.trim())
  return code === 0 && Number.isFinite(seconds) && seconds >= 0 ? seconds : null
}

/**
 * The sample rate of each audio stream of the file, as ffprobe reads them from its headers; empty when
 * it has no audio stream, null when ffprobe cannot read the file at all.
 */
export async function probeSampleRates(ffprobe: string, path: string): Promise<number[] | null> {
  const proc = Bun.spawn([ffprobe, '-v', 'error', '-select_streams', 'a', '-show_entries', 'stream=sample_rate', '-of', 'csv=p=0', path], {
    stdout: 'pipe', stderr: 'pipe', stdin: 'ignore',
  })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  if (code !== 0) return null
  return out.split('\n').map(l => l.trim()).filter(l => l !== '').map(Number)
}

/** ffmpeg decoding the file's audio to mono 16-bit PCM at `rate` on stdout: what transcription reads. */
function spawnDecoder(ffmpeg: string | null, path: string, rate: number) {
  if (!ffmpeg) throw new MediaToolMissingError('ffmpeg is not installed, so only WAV files can be read; install it with: apt-get install ffmpeg (or set NOTESVC_FFMPEG)')
  return Bun.spawn([ffmpeg, '-nostdin', '-v', 'error', '-i', path, '-vn', '-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '1', '-ar', String(rate), 'pipe:1'], {
    stdout: 'pipe', stderr: 'pipe', stdin: 'ignore',
  })
}

async function undecodable(stderr: Promise<string>): Promise<MediaUnreadableError> {
  const why = (await stderr).trim().split('\n').slice(-3).join(' ').slice(0, 300)
  return new MediaUnreadableError(`ffmpeg could not decode the file${why ? `: ${why}` : ' (it holds no audio)'}`)
}

/**
 * How many seconds of audio the file holds, counted from what ffmpeg decodes (the samples
 * transcription will read), not from what its headers say. The samples are counted and dropped, so
 * memory stays at one pipe buffer; the time is that of decoding (3.4 s for an hour of 64 kbit/s MP3 on a busy 2-core machine).
 */
export async function decodedSeconds(ffmpeg: string | null, path: string, rate: number, signal?: AbortSignal): Promise<number> {
  const proc = spawnDecoder(ffmpeg, path, rate)
  const abort = () => proc.kill()
  signal?.addEventListener('abort', abort)
  const stderr = new Response(proc.stderr).text()
  let bytes = 0
  try {
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length
    const code = await proc.exited
    signal?.throwIfAborted()
    if (code !== 0 || bytes < 2) throw await undecodable(stderr)
    return Math.floor(bytes / 2) / rate
  } finally {
    signal?.removeEventListener('abort', abort)
    if (proc.exitCode === null) proc.kill()
  }
}

/**
 * Decodes any media ffmpeg reads to mono float32 at `rate`, streamed from ffmpeg's stdout: memory
 * stays at one pipe buffer whatever the file's length.
 */
export async function* decodeWithFfmpeg(ffmpeg: string | null, path: string, rate: number, signal?: AbortSignal): AsyncGenerator<Float32Array> {
  const proc = spawnDecoder(ffmpeg, path, rate)
  const abort = () => proc.kill()
  signal?.addEventListener('abort', abort)
  const stderr = new Response(proc.stderr).text()
  let carry: Uint8Array | null = null
  let produced = 0
  try {
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      let bytes = chunk
      if (carry) {
        bytes = new Uint8Array(carry.length + chunk.length)
        bytes.set(carry)
        bytes.set(chunk, carry.length)
        carry = null
      }
      const even = bytes.length - (bytes.length % 2)
      if (even < bytes.length) carry = bytes.slice(even)
      const view = new DataView(bytes.buffer, bytes.byteOffset, even)
      const out = new Float32Array(even / 2)
      for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true) / 32768
      produced += out.length
      if (out.length) yield out
    }
    const code = await proc.exited
    if (code !== 0 || produced === 0) throw await undecodable(stderr)
  } finally {
    signal?.removeEventListener('abort', abort)
    if (proc.exitCode === null) proc.kill()
  }
}
