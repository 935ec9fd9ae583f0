import type { Store } from '../../db/store'
import type { AuditOrigin } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { SharesRepo } from './repo'

/** One opening of a share link's page, waiting to be written. */
interface Opening {
  shareId: string
  noteId: string
  accountId: string
  sandbox: boolean
  at: string
  origin: AuditOrigin
}

/**
 * The openings of share pages, written in batches: every `flushMs` (or at `maxBatch` waiting), one
 * transaction adds each link's count and last time and appends one `share.opened` event per opening
 * to the owner's audit log. A page view then costs no write of its own, so the page answers as fast
 * as the signed-in note page (bench/share-page.ts); a crash loses at most `flushMs` of openings.
 * With `flushMs` 0 each opening is written before the page is answered (test apps).
 */
export function createOpeningsLog(deps: { repo: SharesRepo; audit: Pick<AuditService, 'record'>; store: Pick<Store, 'transaction'>; flushMs: number; maxBatch?: number }) {
  let waiting: Opening[] = []
  let timer: ReturnType<typeof setTimeout> | null = null
  let writing: Promise<void> = Promise.resolve()

  async function write(batch: Opening[]): Promise<void> {
    const counts = new Map<string, { n: number; last: string }>()
    for (const o of batch) {
      const c = counts.get(o.shareId) ?? { n: 0, last: o.at }
      counts.set(o.shareId, { n: c.n + 1, last: o.at > c.last ? o.at : c.last })
    }
    await deps.store.transaction(async () => {
      for (const [id, c] of counts) await deps.repo.countOpened(id, c.n, c.last)
      for (const o of batch) {
        await deps.audit.record({ accountId: o.accountId, actor: { type: 'share', id: o.shareId }, origin: o.origin, action: 'share.opened', target: { type: 'note', id: o.noteId }, details: { shareId: o.shareId, sandbox: o.sandbox } })
      }
    })
  }

  /** Writes what is waiting (after any write under way); resolves when it is in the database. */
  function flush(): Promise<void> {
    if (timer) clearTimeout(timer)
    timer = null
    const batch = waiting
    waiting = []
    // a batch that failed to write is not retried, but it must not fail every later one: start each
    // write after the last has settled, whichever way
    writing = writing.catch(() => {}).then(() => (batch.length ? write(batch) : undefined))
    return writing
  }

  return {
    async record(o: Opening): Promise<void> {
      if (deps.flushMs <= 0) return write([o])
      waiting.push(o)
      if (waiting.length >= (deps.maxBatch ?? 500)) void flush().catch(() => {})
      else if (!timer) {
        timer = setTimeout(() => void flush().catch(() => {}), deps.flushMs)
        timer.unref?.()
      }
    },
    flush,
  }
}
