import type { RateClass } from '../config'
import type { Store } from './store'

/**
 * The `rate_windows` table (migration 7): one row per key and rate class, the start of its current
 * 60-second window and the requests counted in it, shared by every node on the database. No module
 * owns it, so its SQL is here beside the schema (as the instance settings' is).
 *
 * `alongside`: a scalar subquery read by the same statement, in the same round trip, and returned as
 * text (the composition root passes the notes' revision counter, which a cached `GET /v1/notes` then
 * needs no round trip of its own for).
 */
export function createRateWindowsRepo(store: Pick<Store, 'run' | 'get' | 'sql'>, alongside?: string) {
  const upsert = `INSERT INTO rate_windows (key, class, window_start, count) VALUES (?, ?, ?, 1)
     ON CONFLICT (key, class) DO UPDATE SET
       window_start = CASE WHEN rate_windows.window_start <= ? THEN excluded.window_start ELSE rate_windows.window_start END,
       count = CASE WHEN rate_windows.window_start <= ? THEN 1 ELSE ${store.sql.least('rate_windows.count + 1', '?')} END
     RETURNING count, window_start`
  const statement = alongside ? `WITH hit AS (${upsert}) SELECT hit.count, hit.window_start, CAST((${alongside}) AS TEXT) AS alongside FROM hit` : upsert
  return {
    async hit(key: string, cls: RateClass, now: string, over: string, cap: number) {
      const row = (await store.get<{ count: number | string; window_start: string; alongside?: string | null }>(statement, [key, cls, now, over, over, cap]))!
      return { count: Number(row.count), windowStart: row.window_start, alongside: row.alongside ?? undefined }
    },
    async sweep(over: string): Promise<void> {
      await store.run('DELETE FROM rate_windows WHERE window_start <= ?', [over])
    },
  }
}
