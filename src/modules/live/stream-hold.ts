/**
 * One connection's hold on a live stream (streams.ts): its audio keeper (stream-audio.ts), the charge
 * of each minute as it starts, the heartbeat that tells the other nodes it is alive, and its end here:
 * detached (resumable) or finished (the note made). Every write names the row's generation; a refused
 * one means another connection took the stream over, and this one lets go.
 */
import type { Logger } from '../../log'
import { actorOf, type Principal } from '../../http/principal'
import type { MediaStorage } from '../../storage/storage'
import type { CreditsService } from '../credits/service'
import { createAudioKeeper, type AudioKeeper } from './stream-audio'
import { audioSecondsOf, type FinishOutcome } from './stream-finish'
import type { StreamRow, StreamsRepo } from './streams-repo'

/** How often a node holding a stream says so (its row's heartbeat); three missed and it is taken for dead. */
export const HEARTBEAT_SECONDS = 5
/** the usage rows' operation */
const LIVE_OPERATION = 'liveTranscription'

export interface LiveStreamEvents {
  /** audio kept up to this many seconds (after each part is written) */
  kept(audioSeconds: number): void
  /** another connection resumed the stream, or the storage failed: this connection must end */
  lost(why: 'stream_resumed_elsewhere' | 'storage_failed', message: string): void
}

interface HoldDeps {
  repo: StreamsRepo
  credits: CreditsService
  storage: MediaStorage
  log: Logger
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
  resumeSeconds: number
  now: () => string
  finish: (id: string, reason: string) => Promise<FinishOutcome>
}

/** the stream's charge for the minute that starts now; false when the credits do not cover it */
async function chargeMinute(deps: HoldDeps, p: Principal, row: StreamRow, minute: number): Promise<boolean> {
  const cost = p.sandbox ? 0 : deps.credits.quote(p, 'completeUpload', 60)
  try {
    return await deps.transaction(async () => {
      if (!p.sandbox) await deps.credits.charge({ accountId: p.accountId, operation: LIVE_OPERATION, credits: cost, source: p.source, noteId: row.note_id, actorId: actorOf(p) })
      if (!(await deps.repo.recordCharged(row.id, row.generation, minute, cost))) throw new Error('stream lost')
      row.charged_minutes = minute
      row.credits_charged += cost
      return true
    })
  } catch (err) {
    if ((err as { code?: string }).code === 'insufficient_credits') return false
    if ((err as Error).message === 'stream lost') return true // the next write finds it lost
    throw err
  }
}

/** One connection's hold on a stream: its audio keeper, charging and heartbeat. */
export function holdStream(deps: HoldDeps, p: Principal, row: StreamRow, token: string, resumed: boolean, events: LiveStreamEvents) {
  const { repo, now, finish } = deps
  const bytesPerSecond = () => row.sample_rate * 2
  let ended = false
  let keeper: AudioKeeper | null = null
  const lostHere = () => release('stream_resumed_elsewhere', 'This stream was resumed by another connection; this one is closed.')
  /** made at the first audio: the rate can change until then */
  const keeping = (): AudioKeeper => (keeper ??= createAudioKeeper({
    streamId: row.id, generation: row.generation, sampleRate: row.sample_rate, storage: deps.storage, keptBytes: row.kept_bytes, parts: row.parts,
    record: (kept, parts) => repo.recordKept(row.id, row.generation, kept, parts, now()),
    onKept: kept => {
      row.kept_bytes = kept
      events.kept(kept / bytesPerSecond())
    },
    onLost: lostHere,
    onFailed: err => {
      deps.log.error('a live stream\'s audio could not be written to the media storage', { stream: row.id, error: err })
      release('storage_failed', `The server could not keep the audio (${(err as Error).message}); what was kept up to now becomes the note within a minute.`)
    },
  }))
  const beat = setInterval(() => {
    void repo.heartbeat(row.id, row.generation, now()).then(ok => ok || lostHere(), () => {})
  }, HEARTBEAT_SECONDS * 1000)
  let charging: Promise<boolean> = Promise.resolve(true)

  function release(why: 'stream_resumed_elsewhere' | 'storage_failed', message: string) {
    if (ended) return
    ended = true
    clearInterval(beat)
    keeper?.stop()
    events.lost(why, message)
  }
  async function stopHere(): Promise<boolean> {
    if (ended) return false
    await keeper?.flush()
    if (ended) return false
    ended = true
    clearInterval(beat)
    return true
  }

  return {
    resumed,
    info: () => ({ id: row.id, note_id: row.note_id, resume_token: token, resume_seconds: deps.resumeSeconds, audio_seconds: audioSecondsOf(row), sample_rate: row.sample_rate }),
    setSampleRate(rate: number): boolean {
      if (keeper || row.kept_bytes > 0) return false
      row.sample_rate = rate
      void repo.setSampleRate(row.id, row.generation, rate)
      return true
    },
    /**
     * Keeps `pcm` (charging the minute it starts, when it starts one); false when the account's
     * credits do not cover that minute: the audio is not kept and the stream should end.
     */
    async append(pcm: Uint8Array): Promise<boolean> {
      if (ended) return true
      const k = keeping()
      const minute = Math.ceil((k.received() + pcm.length) / (60 * bytesPerSecond()))
      if (minute > row.charged_minutes) {
        charging = charging.then(ok => (ok && minute > row.charged_minutes ? chargeMinute(deps, p, row, minute) : ok))
        if (!(await charging)) return false
      }
      k.append(pcm)
      return true
    },
    /** the connection dropped: resumable for the grace period (what was held is written first) */
    async detach(): Promise<void> {
      if (await stopHere()) await repo.detach(row.id, row.generation, now())
    },
    /** the stream ends here: what is held is written, and the note made */
    async finish(reason: string): Promise<FinishOutcome | null> {
      if (!(await stopHere())) return null
      if (!(await repo.claimFinish(row.id, now(), row.generation))) return null
      return finish(row.id, reason)
    },
  }
}
