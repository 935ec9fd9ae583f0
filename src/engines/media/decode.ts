import { decodedSeconds, decodeWithFfmpeg, probeDuration, probeSampleRates, type MediaTools } from './ffmpeg'
import { MediaUnreadableError } from './errors'
import { impossibleSampleRate, readWavInfo, readWavSamples } from './wav'

/** The rate the audio is counted at: transcription's, so the count is of the samples it will read. */
const MEASURE_RATE = 16_000

/**
 * What a media file's headers say its duration is: a 16-bit PCM WAV from its header (no ffmpeg
 * needed), anything else from ffprobe. Null when neither can tell. Headers can lie (an MP3's frame
 * count, an MP4's movie header): an estimate for progress, never a price; see measuredDuration.
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

/**
 * The duration a recording is charged on: the length of the audio transcription will read, never a
 * length its headers merely claim (issue 29). A 16-bit PCM WAV: from the size of its data chunk, which
 * is what the WAV reader decodes, once its sample rate is one a recording can have. Anything else: the
 * sample rates of its audio streams checked (ffprobe), then its audio decoded by ffmpeg and counted.
 * Throws MediaUnreadableError, saying what is wrong, for a file whose header cannot be true or that
 * holds no audio; null without ffmpeg, when only a WAV can be measured.
 */
export async function measuredDuration(path: string, tools: MediaTools, signal?: AbortSignal): Promise<number | null> {
  const wav = await readWavInfo(path)
  if (wav) return wav.durationSeconds
  if (!tools.ffmpeg) return null
  if (tools.ffprobe) {
    const rates = await probeSampleRates(tools.ffprobe, path)
    if (rates?.length === 0) throw new MediaUnreadableError('the file holds no audio stream')
    const impossible = rates?.map(impossibleSampleRate).find(why => why !== null)
    if (impossible) throw new MediaUnreadableError(impossible)
  }
  return decodedSeconds(tools.ffmpeg, path, MEASURE_RATE, signal)
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
