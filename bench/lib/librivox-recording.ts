/**
 * The live benches' recording: the LibriVox clips of pocketsphinx-testdata (16 kHz pcm16) one after
 * another with 1 s of silence after each, and what was said in them (the test data's transcription).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { LIBRIVOX } from '../../test/fixtures/speech'

export function librivoxRecording() {
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(f => {
    const b = readFileSync(join(LIBRIVOX, f))
    return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
  })
  const recording = new Int16Array(clips.reduce((n, c) => n + c.length + 16_000, 0))
  clips.reduce((at, c) => (recording.set(c, at), at + c.length + 16_000), 0)
  const truth = readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').split('\n').map(l => l.replace(/<\/?s>|\(.*\)/g, '').trim()).filter(Boolean).join(' ')
  return { clips, recording, truth, seconds: recording.length / 16_000 }
}
