import { open } from 'node:fs/promises'
import { MediaUnreadableError } from './errors'

/** What a PCM WAV file holds; read from its header alone. */
export interface WavInfo {
  sampleRate: number
  channels: number
  bitsPerSample: 16
  dataOffset: number
  dataBytes: number
  durationSeconds: number
}

const WAVE_FORMAT_PCM = 1
const WAVE_FORMAT_EXTENSIBLE = 0xfffe

/**
 * The sample rates a recording can have, in samples a second: from 4 kHz (below it no speech is
 * intelligible; telephone audio is 8 kHz) to 768 kHz (the highest any audio interface records). A
 * header outside them is damaged or made to lie about the length (issue 29: a 202 KB WAV claiming
 * 1 Hz reads as 28 hours).
 */
const SAMPLE_RATES = { min: 4000, max: 768_000 }

/** Why `rate` cannot be a recording's sample rate, or null when it can be. */
export function impossibleSampleRate(rate: number): string | null {
  if (Number.isFinite(rate) && rate >= SAMPLE_RATES.min && rate <= SAMPLE_RATES.max) return null
  return `its header says the audio has ${rate} samples a second, which no recording has (${SAMPLE_RATES.min} to ${SAMPLE_RATES.max}): the file is damaged or its header was altered`
}

/**
 * Reads the header of a RIFF/WAVE file. Returns null when the file is not a WAV at all (so another
 * reader may try), and throws when it is a WAV this reader cannot use (not 16-bit PCM, or broken).
 */
export async function readWavInfo(path: string): Promise<WavInfo | null> {
  const file = await open(path, 'r')
  try {
    const { size } = await file.stat()
    const head = Buffer.alloc(12)
    if ((await file.read(head, 0, 12, 0)).bytesRead < 12) return null
    if (head.toString('ascii', 0, 4) !== 'RIFF' || head.toString('ascii', 8, 12) !== 'WAVE') return null
    let offset = 12
    let fmt: { format: number; channels: number; sampleRate: number; bits: number } | null = null
    const chunkHeader = Buffer.alloc(8)
    while (offset + 8 <= size) {
      await file.read(chunkHeader, 0, 8, offset)
      const id = chunkHeader.toString('ascii', 0, 4)
      const length = chunkHeader.readUInt32LE(4)
      const body = offset + 8
      if (id === 'fmt ') {
        const f = Buffer.alloc(Math.min(length, 40))
        await file.read(f, 0, f.length, body)
        if (f.length < 16) throw new MediaUnreadableError('the WAV file has a truncated format chunk')
        let format = f.readUInt16LE(0)
        if (format === WAVE_FORMAT_EXTENSIBLE && f.length >= 26) format = f.readUInt16LE(24)
        fmt = { format, channels: f.readUInt16LE(2), sampleRate: f.readUInt32LE(4), bits: f.readUInt16LE(14) }
      } else if (id === 'data') {
        if (!fmt) throw new MediaUnreadableError('the WAV file has audio data before its format chunk')
        if (fmt.format !== WAVE_FORMAT_PCM || fmt.bits !== 16) return null
        if (fmt.channels < 1) throw new MediaUnreadableError('the WAV file declares no channels')
        const rate = impossibleSampleRate(fmt.sampleRate)
        if (rate) throw new MediaUnreadableError(`the WAV file cannot be read: ${rate}`)
        // Streams written live often leave the length at 0 or 0xFFFFFFFF: trust the file's size then.
        const dataBytes = length === 0 || length === 0xffffffff || body + length > size ? size - body : length
        const frame = fmt.channels * 2
        return {
          sampleRate: fmt.sampleRate,
          channels: fmt.channels,
          bitsPerSample: 16,
          dataOffset: body,
          dataBytes: dataBytes - (dataBytes % frame),
          durationSeconds: Math.floor(dataBytes / frame) / fmt.sampleRate,
        }
      }
      offset = body + length + (length % 2)
    }
    throw new MediaUnreadableError('the WAV file has no audio data chunk')
  } finally {
    await file.close()
  }
}

/**
 * Streams a 16-bit PCM WAV file as mono float32 at `targetRate`: channels averaged, rate converted by
 * linear interpolation, read in blocks so memory stays constant whatever the file's length.
 */
export async function* readWavSamples(path: string, info: WavInfo, targetRate: number, blockFrames = 65_536): AsyncGenerator<Float32Array> {
  const file = await open(path, 'r')
  try {
    const frameBytes = info.channels * 2
    const step = info.sampleRate / targetRate
    let position = 0 // in input frames, fractional, of the next output sample
    let consumed = 0 // input frames before the current block
    let previous = 0 // the last mono input sample of the previous block
    // Not from Buffer's shared pool, so the Int16Array view below starts aligned.
    const buffer = Buffer.allocUnsafeSlow(blockFrames * frameBytes)
    for (let read = 0; read < info.dataBytes;) {
      const want = Math.min(buffer.length, info.dataBytes - read)
      const { bytesRead } = await file.read(buffer, 0, want, info.dataOffset + read)
      if (bytesRead <= 0) break
      read += bytesRead
      const frames = Math.floor(bytesRead / frameBytes)
      const pcm = new Int16Array(buffer.buffer, buffer.byteOffset, frames * info.channels)
      const mono = new Float32Array(frames)
      const scale = 1 / (info.channels * 32768)
      for (let f = 0, j = 0; f < frames; f++) {
        let sum = 0
        for (let c = 0; c < info.channels; c++) sum += pcm[j++]!
        mono[f] = sum * scale
      }
      const last = read >= info.dataBytes
      const out: number[] = []
      // Each output sample interpolates between the input frames around its position; one at the
      // block's last frame waits for the next block, except at the end, where the last frame holds.
      while (position < consumed + frames) {
        const i = Math.floor(position) - consumed
        if (i + 1 >= frames && !last) break
        const a = i < 0 ? previous : mono[i]!
        const b = i + 1 < frames ? mono[i + 1]! : a
        out.push(a + (b - a) * (position - Math.floor(position)))
        position += step
      }
      previous = mono[frames - 1] ?? previous
      consumed += frames
      if (out.length) yield Float32Array.from(out)
    }
  } finally {
    await file.close()
  }
}
