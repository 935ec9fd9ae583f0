import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Writes a one-second 440 Hz tone as a 16 kHz mono 16-bit WAV named `name` in `dir`, and returns its path.
 * The sandbox gives fixed output whatever the sound; the file's name is what picks a scenario
 * (`insufficient_credits.wav`). Made here (44 bytes of header and the samples) so the tests need no
 * fixture file and no ffmpeg.
 */
export function writeRecording(dir: string, name: string): string {
  const rate = 16_000
  const samples = rate
  const wav = Buffer.alloc(44 + samples * 2)
  wav.write('RIFF', 0, 'ascii')
  wav.writeUInt32LE(36 + samples * 2, 4)
  wav.write('WAVEfmt ', 8, 'ascii')
  wav.writeUInt32LE(16, 16) // fmt chunk size
  wav.writeUInt16LE(1, 20) // PCM
  wav.writeUInt16LE(1, 22) // mono
  wav.writeUInt32LE(rate, 24)
  wav.writeUInt32LE(rate * 2, 28) // bytes per second
  wav.writeUInt16LE(2, 32) // bytes per frame
  wav.writeUInt16LE(16, 34) // bits per sample
  wav.write('data', 36, 'ascii')
  wav.writeUInt32LE(samples * 2, 40)
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2)
  const path = join(dir, name)
  writeFileSync(path, wav)
  return path
}
