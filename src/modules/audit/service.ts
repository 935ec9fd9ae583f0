import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Queryable } from '../../db/store'
import type { Logger } from '../../log'
import type { AuditEvent, AuditEventInput, AuditActorType, AuditAction } from './model'
import type { AuditEventRow, AuditRepo } from './repo'

export type AuditService = ReturnType<typeof createAuditService>

function toEvent(r: AuditEventRow): AuditEvent {
  return {
    id: r.id,
    at: r.at,
    accountId: r.account_id,
    actor: { type: r.actor_type as AuditActorType, id: r.actor_id },
    action: r.action as AuditAction,
    target: r.target_type && r.target_id ? { type: r.target_type, id: r.target_id } : null,
    ip: r.ip,
    userAgent: r.user_agent,
    details: JSON.parse(r.details) as AuditEvent['details'],
  }
}

/** The audit log: every security- and privacy-relevant event appended once (src/modules/audit/model.ts). */
export function createAuditService(deps: { repo: AuditRepo; clock: Clock; ids: IdGenerator; log?: Logger }) {
  const { repo, clock, ids } = deps
  function row(e: AuditEventInput): AuditEventRow {
    return {
      id: ids.next('aud'),
      at: clock.now().toISOString(),
      account_id: e.accountId,
      actor_type: e.actor.type,
      actor_id: e.actor.id ?? null,
      action: e.action,
      target_type: e.target?.type ?? null,
      target_id: e.target?.id ?? null,
      ip: e.origin?.ip ?? null,
      user_agent: e.origin?.userAgent?.slice(0, 512) ?? null,
      details: JSON.stringify(e.details ?? {}),
    }
  }
  return {
    /**
     * Appends the event. Pass the transaction of the change it records (`q`) so that the two land
     * together or not at all; without one, it is written on its own.
     */
    async record(e: AuditEventInput, q?: Queryable): Promise<void> {
      await repo.append(row(e), q)
    },

    /** An account's events, newest first; `cursor` is the previous page's `nextCursor`. */
    async list(accountId: string, o: { limit: number; cursor?: string | null }): Promise<{ items: AuditEvent[]; nextCursor: string | null }> {
      let before: { at: string; id: string } | undefined
      if (o.cursor) {
        const [at, id] = Buffer.from(o.cursor, 'base64url').toString().split('|')
        if (at && id) before = { at, id }
      }
      const rows = await repo.page(accountId, o.limit + 1, before)
      const items = rows.slice(0, o.limit).map(toEvent)
      const last = rows.length > o.limit ? items[items.length - 1] : undefined
      return { items, nextCursor: last ? Buffer.from(`${last.at}|${last.id}`).toString('base64url') : null }
    },

    /** Removes events older than `days` days (the audit log's own retention); how many went. */
    prune: (days: number) => repo.pruneBefore(new Date(clock.now().getTime() - days * 86_400_000).toISOString()),
  }
}
