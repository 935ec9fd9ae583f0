import { ApiError } from '../../http/errors'
import { AsrUnavailableError, type AsrEngine } from '../../engines/asr/engine'
import { missingSpeechEngine } from '../../engines/asr'
import { LlmRefusalError, LlmUnavailableError } from '../../engines/llm/engine'
import { MediaToolMissingError, MediaUnreadableError } from '../../engines/media/errors'
import { UrlFetchFailedError, UrlRefusedError, UrlTimeoutError, UrlTooLargeError } from '../../engines/media/url-fetch'
import { YtdlpFailedError, YtdlpMissingError } from '../../engines/media/ytdlp'

/** The media is not audio or video ffmpeg reads: 502 on notesvc's routes; the OpenAI route answers 400 for it, as OpenAI does. */
export class UnreadableMediaError extends ApiError {
  /** what is wrong with the file, as the media reader said it */
  constructor(message: string, readonly reason: string) {
    super('upstream_failure', message)
  }
}

/** 502 before any work or charge when no speech engine is installed; the message says what to install. */
export function requireSpeechEngine(asr: AsrEngine) {
  const missing = missingSpeechEngine(asr)
  if (missing) throw new ApiError('upstream_failure', `${missing} Nothing was charged.`)
}

/** Provider failures as the SPEC's statuses: 502 for what the engines or the network could not do. */
export function asApiError(err: unknown): never {
  if (err instanceof ApiError) throw err
  if (err instanceof LlmRefusalError) throw new ApiError('content_policy', `The model refused the content: ${err.message}. Nothing was charged.`)
  if (err instanceof LlmUnavailableError || err instanceof AsrUnavailableError || err instanceof MediaToolMissingError || err instanceof YtdlpMissingError) {
    throw new ApiError('upstream_failure', `${err.message} Nothing was charged.`)
  }
  if (err instanceof UrlRefusedError) throw new ApiError('invalid_request', err.message, { details: [{ field: 'audioUrl', issue: err.message }] })
  if (err instanceof UrlTooLargeError) throw new ApiError('invalid_request', err.message, { details: [{ field: 'audioUrl', issue: 'the file is too large' }] })
  if (err instanceof UrlTimeoutError || err instanceof UrlFetchFailedError || err instanceof YtdlpFailedError) throw new ApiError('upstream_failure', `${err.message} Nothing was charged.`)
  if (err instanceof MediaUnreadableError) throw new UnreadableMediaError(`The media could not be read as audio: ${err.message}. Nothing was charged.`, err.message)
  if ((err as Error)?.name === 'TimeoutError' || (err as Error)?.name === 'AbortError') throw new ApiError('upstream_failure', 'The operation ran past its time limit; try a shorter recording or a longer timeoutSeconds. Nothing was charged.')
  throw err
}
