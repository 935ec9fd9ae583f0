import { millisNow, type Clock } from '../../clock'
import { sha256 } from '../../crypto/digest'
import { ReadCache } from '../../db/read-cache'
import type { Store } from '../../db/store'
import { isScope } from '../../http/contract'
import type { Principal } from '../../http/admission'
import { isRole } from '../workspaces/model'
import { LIVE_PREFIX, SANDBOX_PREFIX } from './api-keys'
import type { AccountsRepo } from './repo'

/** `last_used_at` is written at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000

/**
 * How long a verified key is trusted where other nodes' writes cannot be seen (PostgreSQL) before the
 * database is asked again: a key revoked through any node is refused by every node within this (the
 * interface's bound is one second).
 */
const SHARED_KEY_CACHE_MS = 500

/** keys whose digest cachedApiKey remembers (rememberedDigests) */
const MAX_RECENT_DIGESTS = 1000

/**
 * sha256, remembered for the last `max` strings asked about (emptied when full): for cachedApiKey, where
 * the SHA-256 of a key was about a tenth of the kept first page's own work (bench/README.md). Only the
 * digest is remembered, never whether the key is good: the key cache answers that under its stamp.
 */
function rememberedDigests(max: number): (s: string) => string {
  const digests = new Map<string, string>()
  return s => {
    let digest = digests.get(s)
    if (digest === undefined) {
      if (digests.size >= max) digests.clear()
      digests.set(s, (digest = sha256(s)))
    }
    return digest
  }
}

/**
 * The cache of verified API keys: a ReadCache under the store's read stamp (`Store.readStamp`). On
 * SQLite any commit empties it (the stamp is the WAL-index header's commit count, db/wal-index.ts, so
 * a key revoked by another process, the CLI, is refused on the next request); on PostgreSQL every entry is forgotten at the next half-second
 * boundary, and one read while a boundary passed is not kept, so a revoked key is refused by every
 * node within half a second.
 */
export function keyCacheFor(store: Store, enabled: boolean): ReadCache<Principal | null> {
  return new ReadCache(store.readStamp(SHARED_KEY_CACHE_MS), enabled)
}

/** The API-key credential check of every request: the key cache first, the key's last use written at most once a minute. */
export function createApiKeyVerifier(deps: { repo: AccountsRepo; clock: Clock; keyCache: ReadCache<Principal | null> }) {
  const { repo, clock, keyCache } = deps
  const lastTouched = new Map<string, number>()
  const recentKeyDigest = rememberedDigests(MAX_RECENT_DIGESTS)
  /** when each member (workspace and person) was last marked active through a team key */
  const membersTouched = new Map<string, number>()

  /**
   * A team key's maker marked active in the workspace (`last_active_at`), at most once a minute per
   * member whatever number of keys they use: here, on the key's own once-a-minute write, so a cached
   * key costs nothing more.
   */
  async function touchMember(p: Principal, t: number): Promise<void> {
    if (!p.actorId || p.actorId === p.accountId) return
    const member = `${p.accountId} ${p.actorId}`
    if ((membersTouched.get(member) ?? 0) + TOUCH_INTERVAL_MS > t) return
    if (membersTouched.size >= MAX_RECENT_DIGESTS) membersTouched.clear()
    membersTouched.set(member, t)
    await repo.touchMember(p.accountId, p.actorId, new Date(t).toISOString())
  }

  return {
    /**
     * verifyApiKey's answer when it is known at once: the principal of a live key the key cache holds
     * at its current stamp, when the key's last use need not be written now. undefined otherwise (an
     * unknown, revoked or uncached key, or a use to record): then verifyApiKey.
     */
    cachedApiKey(token: string): Principal | undefined {
      if (!token.startsWith(LIVE_PREFIX) && !token.startsWith(SANDBOX_PREFIX)) return undefined
      const principal = keyCache.peek(recentKeyDigest(token))
      if (!principal || (lastTouched.get(principal.credentialId) ?? 0) + TOUCH_INTERVAL_MS <= millisNow(clock)) return undefined
      return principal
    },

    /** The API-key credential check: a live, unrevoked key gives its principal; anything else null. */
    async verifyApiKey(token: string): Promise<Principal | null> {
      if (!token.startsWith(LIVE_PREFIX) && !token.startsWith(SANDBOX_PREFIX)) return null
      const hash = sha256(token)
      const principal = await keyCache.getAsync(hash, async () => {
        const row = await repo.findKeyByHash(hash)
        if (!row || row.revoked_at) return null
        // A key made for a team workspace acts as its maker with the maker's role there now; a maker
        // removed from the workspace leaves a key that opens nothing (their keys are revoked too).
        const role = row.made_by && row.made_by !== row.account_id ? row.member_role : 'owner'
        if (!isRole(role)) return null
        return {
          accountId: row.account_id,
          actorId: row.made_by ?? row.account_id,
          role,
          sandbox: row.sandbox === 1,
          scopes: new Set(row.scopes.split(' ').filter(isScope)),
          credentialId: row.id,
          source: 'api_key' as const,
        }
      })
      if (principal) {
        const t = clock.now().getTime()
        if ((lastTouched.get(principal.credentialId) ?? 0) + TOUCH_INTERVAL_MS <= t) {
          lastTouched.set(principal.credentialId, t)
          await repo.touchKey(principal.credentialId, new Date(t).toISOString())
          await touchMember(principal, t)
        }
      }
      return principal
    },
  }
}
