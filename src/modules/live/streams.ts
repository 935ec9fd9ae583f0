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
import { audioSecondsOf, createStreamFinisher } from './stream-finish'
import { HEARTBEAT_SECONDS, holdStream, type LiveStreamEvents } from './stream-hold'
import type { StreamRow, StreamsRepo } from './streams-repo'

const DEAD_AFTER_SECONDS = 3 * HEARTBEAT_SECONDS

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

  const hold = (p: Principal, row: StreamRow, token: string, resumed: boolean, events: LiveStreamEvents) => holdStream({ ...deps, now, finish }, p, row, token, resumed, events)

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
