/**
 * Live streams as the database and the media storage keep them (docs/decisions.md "Live streams that
 * survive"): a stream opened by a key makes its note at once (`Summarizing`, stage `recording`, source
 * `live`) and its row; its audio goes to the storage as it arrives (stream-audio.ts); each started
 * minute of audio is charged as it starts (the SPEC's completeUpload rule: credits.quote for 60 s),
 * charge and row in one transaction; a dropped connection leaves it resumable with its token for the
 * grace period, on any node; the stream's end (finish, the grace period over, its node gone) makes the
 * note from what was kept (stream-finish.ts), once.
 */
import { hostname } from 'node:os'
import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Logger } from '../../log'
import type { Principal } from '../../http/principal'
import { sha256 } from '../../crypto/digest'
import type { MediaStorage } from '../../storage/storage'
import type { CreditsService } from '../credits/service'
import type { NotesService } from '../notes/service'
import type { UploadsService } from '../uploads/service'
import { createAudioKeeper, type AudioKeeper } from './stream-audio'
import { audioSecondsOf, createStreamFinisher, type FinishOutcome } from './stream-finish'
import type { StreamRow, StreamsRepo } from './streams-repo'

/** How often a node holding a stream says so (its row's heartbeat); three missed and it is taken for dead. */
const HEARTBEAT_SECONDS = 5
const DEAD_AFTER_SECONDS = 3 * HEARTBEAT_SECONDS
/** the usage rows' operation */
const LIVE_OPERATION = 'liveTranscription'

export interface StreamOptions {
  sampleRate: number
  title?: string
  styleId?: string
  language?: string | null
}

/** Why a stream could not be opened or resumed; `code` is the protocol's error code. */
export class StreamRefusal extends Error {
  constructor(readonly code: 'stream_not_found' | 'stream_ended' | 'insufficient_credits' | 'too_many_streams', message: string) {
    super(message)
  }
}

export interface LiveStreamEvents {
  /** audio kept up to this many seconds (after each part is written) */
  kept(audioSeconds: number): void
  /** another connection resumed the stream, or the storage failed: this connection must end */
  lost(why: 'stream_resumed_elsewhere' | 'storage_failed', message: string): void
}

export type StreamsService = ReturnType<typeof createStreamsService>

export function createStreamsService(deps: {
  repo: StreamsRepo
  uploads: UploadsService['recordings']
  notes: NotesService
  credits: CreditsService
  storage: MediaStorage
  clock: Clock
  ids: IdGenerator
  log: Logger
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
  queueJob: (noteId: string) => Promise<void>
  wakeWorkers: () => void
  resumeSeconds: number
  maxStreamsPerAccount: number
}) {
  const { repo, clock } = deps
  const node = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
  const now = () => clock.now().toISOString()
  const ago = (seconds: number) => new Date(clock.now().getTime() - seconds * 1000).toISOString()
  const finish = createStreamFinisher(deps)

  /** the stream's charge for the minute that starts now; false when the credits do not cover it */
  async function chargeMinute(p: Principal, row: StreamRow, minute: number): Promise<boolean> {
    const cost = p.sandbox ? 0 : deps.credits.quote(p, 'completeUpload', 60)
    try {
      return await deps.transaction(async () => {
        if (cost > 0) await deps.credits.charge({ accountId: p.accountId, operation: LIVE_OPERATION, credits: cost, source: p.source, noteId: row.note_id })
        if (!(await repo.recordCharged(row.id, row.generation, minute, cost))) throw new Error('stream lost')
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
  function hold(p: Principal, row: StreamRow, token: string, resumed: boolean, events: LiveStreamEvents) {
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
          charging = charging.then(ok => (ok && minute > row.charged_minutes ? chargeMinute(p, row, minute) : ok))
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

  function newToken(): string {
    const bytes = crypto.getRandomValues(new Uint8Array(32))
    return Buffer.from(bytes).toString('base64url')
  }

  return {
    node,
    /** Opens a stream for `p` and makes its note. */
    async open(p: Principal, opts: StreamOptions, events: LiveStreamEvents) {
      if (await repo.openCount(p.accountId, ago(DEAD_AFTER_SECONDS)) >= deps.maxStreamsPerAccount) {
        throw new StreamRefusal('too_many_streams', `This account has ${deps.maxStreamsPerAccount} live stream${deps.maxStreamsPerAccount === 1 ? '' : 's'} running, its limit (on all servers); end one first.`)
      }
      const token = newToken()
      const id = deps.ids.next('live')
      const title = opts.title?.trim() || `Live recording ${now().slice(0, 16).replace('T', ' ')} UTC`
      const row = await deps.transaction(async () => {
        const note = await deps.notes.createPending(p, { title, type: 'audio', styleId: opts.styleId ?? 'note', language: opts.language ?? null, source: 'live', stage: 'recording' })
        await deps.uploads.start(p, note.id, `${title}.wav`)
        await repo.insert({ id, note_id: note.id, account_id: p.accountId, sandbox: p.sandbox ? 1 : 0, source: p.source, credential_id: p.credentialId, resume_token_hash: sha256(token), sample_rate: opts.sampleRate, node, heartbeat_at: now(), created_at: now() })
        return (await repo.byId(id))!
      })
      return hold(p, row, token, false, events)
    },

    /** Continues the stream of `token` on this connection (any node), from what it kept. */
    async resume(p: Principal, token: string, events: LiveStreamEvents) {
      const found = await repo.byTokenHash(sha256(token))
      if (!found || found.account_id !== p.accountId || Boolean(found.sandbox) !== p.sandbox) {
        throw new StreamRefusal('stream_not_found', 'No live stream has this resume token for this key; start a new stream (connect without resume=).')
      }
      if (!(found.state === 'open' || found.state === 'detached') || !(await repo.takeOver(found, node, now()))) {
        throw new StreamRefusal('stream_ended', `This stream has ended (its note is ${found.note_id}); start a new stream to record more.`)
      }
      return hold(p, (await repo.byId(found.id))!, token, true, events)
    },

    /**
     * Makes the notes of streams nobody will continue: dropped past the grace period, or held by a
     * node that stopped (killed) — on start and then every few seconds, on every node; each stream is
     * claimed by one.
     */
    async sweep(): Promise<number> {
      let made = 0
      for (const id of await repo.orphaned(ago(deps.resumeSeconds), ago(DEAD_AFTER_SECONDS))) {
        const row = await repo.byId(id)
        if (!row) continue
        const claimed = row.state === 'finishing'
          ? await repo.reclaimFinishing(id, ago(DEAD_AFTER_SECONDS), now())
          : await repo.claimFinish(id, now())
        if (!claimed) continue
        try {
          const out = await finish(id, row.state === 'detached' ? 'not resumed in time' : 'its server stopped')
          deps.log.info('a live stream was made into its note', { stream: id, note: out.noteId, status: out.status, audioSeconds: out.audioSeconds })
          made++
        } catch (err) {
          deps.log.error('a live stream could not be made into its note; the next sweep tries again', { stream: id, error: err })
        }
      }
      return made
    },
    audioSecondsOf,
  }
}

export type LiveStream = Awaited<ReturnType<StreamsService['open']>>
