import { decodeWithFfmpeg, probeDuration, type MediaTools } from './ffmpeg'
import { MediaUnreadableError } from './errors'
import { readWavInfo, readWavSamples } from './wav'

/**
 * Duration of a media file: a 16-bit PCM WAV from its header (no ffmpeg needed), anything else from
 * ffprobe. Null when neither can tell.
 */
export async function mediaDuration(path: string, tools: MediaTools): Promise<number | null> {
  try {
    const wav = await readWavInfo(path)
    if (wav) return wav.durationSeconds
  } catch (err) {
    if (!(err instanceof MediaUnreadableError)) throw err
  }
  return tools.ffprobe ? probeDuration(tools.ffprobe, path) : null
}

/** Mono float32 samples at `rate`, streamed: the WAV reader when it can, ffmpeg otherwise. */
export async function* decodeMedia(path: string, rate: number, tools: MediaTools, signal?: AbortSignal): AsyncGenerator<Float32Array> {
  const wav = await readWavInfo(path)
  if (wav) {
    yield* readWavSamples(path, wav, rate)
    return
  }
  yield* decodeWithFfmpeg(tools.ffmpeg, path, rate, signal)
}
