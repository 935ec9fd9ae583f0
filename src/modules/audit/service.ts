import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Queryable } from '../../db/store'
import type { Logger } from '../../log'
import { ApiError } from '../../http/errors'
import { sha256 } from '../../crypto/digest'
import { READ_ACTIONS, READ_SLOT_MS, type AuditBy, type AuditEvent, type AuditEventInput, type AuditActorType, type AuditAction } from './model'
import type { AuditEventRow, AuditRepo } from './repo'

export type AuditService = ReturnType<typeof createAuditService>

function toEvent(r: AuditEventRow): AuditEvent {
  return {
    id: r.id,
    at: r.at,
    lastAt: r.last_at ?? r.at,
    count: Number(r.count),
    accountId: r.account_id,
    actor: { type: r.actor_type as AuditActorType, id: r.actor_id },
    action: r.action as AuditAction,
    target: r.target_type && r.target_id ? { type: r.target_type, id: r.target_id } : null,
    ip: r.ip,
    userAgent: r.user_agent,
    details: JSON.parse(r.details) as AuditEvent['details'],
  }
}

/**
 * The row a read is counted in: its account, actor, action, target and client address, in the slot of
 * the clock it falls in (READ_SLOT_MS). The user agent and details are the first read's: a client that
 * changes them does not make new rows. Hashed to one short fixed-length key.
 */
function readKey(e: AuditEventInput, at: Date): string {
  const slot = new Date(Math.floor(at.getTime() / READ_SLOT_MS) * READ_SLOT_MS).toISOString()
  return sha256(JSON.stringify([slot, e.accountId, e.actor.type, e.actor.id ?? null, e.action, e.target?.type ?? null, e.target?.id ?? null, e.origin?.ip ?? null]))
}

/** Events read per query of an export. */
const EXPORT_BATCH = 500

/** The position a `nextCursor` names: the last event's time and id; 400 for anything else. */
function decodeCursor(cursor: string): { at: string; id: string } {
  const [at, id, extra] = Buffer.from(cursor, 'base64url').toString().split('|')
  if (!at || !id || extra !== undefined || Number.isNaN(Date.parse(at)) || !id.startsWith('aud_')) {
    throw new ApiError('invalid_request', 'cursor is not one this list gave: pass the previous page\'s `pagination.nextCursor` as it is, or leave it out for the newest events.', { details: [{ field: 'cursor', issue: 'not a cursor of this list' }] })
  }
  return { at, id }
}

/** The audit log: every security- and privacy-relevant event appended once (src/modules/audit/model.ts). */
export function createAuditService(deps: { repo: AuditRepo; clock: Clock; ids: IdGenerator; log?: Logger }) {
  const { repo, clock, ids } = deps
  function row(e: AuditEventInput): AuditEventRow {
    const now = clock.now()
    const read = READ_ACTIONS.includes(e.action)
    return {
      id: ids.next('aud'),
      at: now.toISOString(),
      account_id: e.accountId,
      actor_type: e.actor.type,
      actor_id: e.actor.id ?? null,
      action: e.action,
      target_type: e.target?.type ?? null,
      target_id: e.target?.id ?? null,
      ip: e.origin?.ip ?? null,
      user_agent: e.origin?.userAgent?.slice(0, 512) ?? null,
      details: JSON.stringify(e.details ?? {}),
      count: 1,
      last_at: read ? now.toISOString() : null,
      read_key: read ? readKey(e, now) : null,
    }
  }
  /** Appends a write, or counts a read in its slot's row (READ_ACTIONS). */
  async function append(r: AuditEventRow, q?: Queryable): Promise<void> {
    if (r.read_key === null) await repo.append(r, q)
    else await repo.appendRead({ ...r, read_key: r.read_key }, q)
  }
  return {
    /**
     * Appends the event. Pass the transaction of the change it records (`q`) so that the two land
     * together or not at all; without one, it is written on its own.
     */
    async record(e: AuditEventInput, q?: Queryable): Promise<void> {
      await append(row(e), q)
    },

    /** Appends `action` done by `by` (a route's principal and origin, or the operator) to the account's log. */
    async recordBy(by: AuditBy, e: Omit<AuditEventInput, 'actor' | 'origin'>, q?: Queryable): Promise<void> {
      await append(row({ ...e, actor: by.actor, origin: by.origin }), q)
    },

    /**
     * An account's events, newest first, optionally of one action and from `since`; `cursor` is the
     * previous page's `nextCursor` (a cursor that is not one is refused with 400).
     */
    async list(accountId: string, o: { limit: number; cursor?: string | null; action?: string; since?: string }): Promise<{ items: AuditEvent[]; nextCursor: string | null }> {
      const before = o.cursor ? decodeCursor(o.cursor) : undefined
      const since = o.since === undefined ? undefined : new Date(o.since).toISOString()
      const rows = await repo.page(accountId, o.limit + 1, { before, action: o.action, since })
      const items = rows.slice(0, o.limit).map(toEvent)
      const last = rows.length > o.limit ? items[items.length - 1] : undefined
      return { items, nextCursor: last ? Buffer.from(`${last.at}|${last.id}`).toString('base64url') : null }
    },

    /**
     * The account's events as `export` reads them, for its owner (`by`), recorded as `audit.exported`
     * before any is read: the API's export and the settings page's download.
     */
    async exportFor(accountId: string, o: { since?: string }, by: AuditBy): Promise<AsyncGenerator<AuditEvent>> {
      await append(row({ accountId, actor: by.actor, origin: by.origin, action: 'audit.exported', target: { type: 'account', id: accountId }, details: o.since ? { since: new Date(o.since).toISOString() } : {} }))
      return exportEvents(accountId, o)
    },

    export: exportEvents,

    /** Removes events older than `days` days (the audit log's own retention); how many went. */
    prune: (days: number) => repo.pruneBefore(new Date(clock.now().getTime() - days * 86_400_000).toISOString()),
  }

  /**
   * Every event of an account (or, with null, of all accounts), oldest first, from `since`: read in
   * batches of EXPORT_BATCH by keyset, so an export of any size holds one batch in memory.
   */
  async function* exportEvents(accountId: string | null, o: { since?: string } = {}): AsyncGenerator<AuditEvent> {
    const since = o.since === undefined ? undefined : new Date(o.since).toISOString()
    let after: { at: string; id: string } | undefined
    for (;;) {
      const rows = await repo.ascending({ accountId, limit: EXPORT_BATCH, after, since })
      for (const r of rows) yield toEvent(r)
      if (rows.length < EXPORT_BATCH) return
      const last = rows[rows.length - 1]!
      after = { at: last.at, id: last.id }
    }
  }
}
