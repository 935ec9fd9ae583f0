/**
 * The live_streams table (migration 27): a stream's state, shared by every node. Writes that belong to
 * the node holding the stream name its `generation`; a resume raises it, so the node that held it
 * before finds its next write refused (0 rows) and lets go.
 */
import type { Store } from '../../db/store'

type StreamState = 'open' | 'detached' | 'finishing' | 'finished'

export interface StreamRow {
  id: string
  note_id: string
  account_id: string
  sandbox: number
  source: string
  credential_id: string | null
  resume_token_hash: string
  state: StreamState
  sample_rate: number
  kept_bytes: number
  parts: number
  /** JSON [[generation, first part], …]: from which part on each generation wrote */
  runs: string
  charged_minutes: number
  credits_charged: number
  generation: number
  node: string | null
  heartbeat_at: string
  detached_at: string | null
  created_at: string
  finished_at: string | null
  end_reason: string | null
}

const row = (r: StreamRow | null): StreamRow | null => r && {
  ...r,
  sandbox: Number(r.sandbox),
  sample_rate: Number(r.sample_rate),
  kept_bytes: Number(r.kept_bytes),
  parts: Number(r.parts),
  charged_minutes: Number(r.charged_minutes),
  credits_charged: Number(r.credits_charged),
  generation: Number(r.generation),
}

const runsOf = (row: Pick<StreamRow, 'runs'>): Array<[number, number]> => JSON.parse(row.runs) as Array<[number, number]>

/** the generation that wrote part `n` */
export function generationOfPart(row: Pick<StreamRow, 'runs'>, n: number): number {
  let generation = 0
  for (const [g, first] of runsOf(row)) if (first <= n) generation = g
  return generation
}

export type StreamsRepo = ReturnType<typeof createStreamsRepo>

export function createStreamsRepo(store: Store) {
  const one = (r: number) => r === 1
  return {
    insert: async (r: Pick<StreamRow, 'id' | 'note_id' | 'account_id' | 'sandbox' | 'source' | 'credential_id' | 'resume_token_hash' | 'sample_rate' | 'node' | 'heartbeat_at' | 'created_at'>): Promise<void> => {
      await store.run(`INSERT INTO live_streams (id, note_id, account_id, sandbox, source, credential_id, resume_token_hash, state, sample_rate, runs, node, heartbeat_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, '[[0,1]]', ?, ?, ?)`,
        [r.id, r.note_id, r.account_id, r.sandbox, r.source, r.credential_id, r.resume_token_hash, r.sample_rate, r.node, r.heartbeat_at, r.created_at])
    },
    byId: async (id: string, o: { lock?: boolean } = {}): Promise<StreamRow | null> =>
      row(await store.get<StreamRow>(`SELECT * FROM live_streams WHERE id = ?${o.lock ? store.sql.lock('update') : ''}`, [id])),
    byTokenHash: async (hash: string): Promise<StreamRow | null> =>
      row(await store.get<StreamRow>('SELECT * FROM live_streams WHERE resume_token_hash = ?', [hash])),
    /** streams of the account held open by a live node (heartbeat since `aliveSince`) */
    openCount: async (accountId: string, aliveSince: string): Promise<number> =>
      Number((await store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM live_streams WHERE account_id = ? AND state = 'open' AND heartbeat_at >= ?`, [accountId, aliveSince]))?.n ?? 0),
    /** A resume: this node holds the stream from now; false when it ended or another resume came first. */
    takeOver: async (row: StreamRow, node: string, now: string): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET generation = generation + 1, runs = ?, node = ?, state = 'open', heartbeat_at = ?, detached_at = NULL WHERE id = ? AND generation = ? AND state IN ('open', 'detached')`,
        [JSON.stringify([...runsOf(row), [row.generation + 1, row.parts + 1]]), node, now, row.id, row.generation])),
    /** audio kept up to `keptBytes` in `parts` parts; false: this node no longer holds the stream */
    recordKept: async (id: string, generation: number, keptBytes: number, parts: number, now: string): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET kept_bytes = ?, parts = ?, heartbeat_at = ? WHERE id = ? AND generation = ? AND state = 'open'`,
        [keptBytes, parts, now, id, generation])),
    /** the client chose another rate before sending audio */
    setSampleRate: async (id: string, generation: number, rate: number): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET sample_rate = ? WHERE id = ? AND generation = ? AND kept_bytes = 0`, [rate, id, generation])),
    heartbeat: async (id: string, generation: number, now: string): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET heartbeat_at = ? WHERE id = ? AND generation = ? AND state = 'open'`, [now, id, generation])),
    /** the minute `minutes` started and was charged `credits` (in the charge's transaction); false: not this node's, or charged already */
    recordCharged: async (id: string, generation: number, minutes: number, credits: number): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET charged_minutes = ?, credits_charged = credits_charged + ? WHERE id = ? AND generation = ? AND charged_minutes = ?`,
        [minutes, credits, id, generation, minutes - 1])),
    /** the connection dropped: resumable until the grace period ends */
    detach: async (id: string, generation: number, now: string): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET state = 'detached', detached_at = ? WHERE id = ? AND generation = ? AND state = 'open'`, [now, id, generation])),
    /**
     * The stream is to be made a note: by its node (`generation` given) or by a sweep (a stream whose
     * node died or whose client did not come back). False when someone else has it.
     */
    claimFinish: async (id: string, now: string, generation?: number): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET state = 'finishing', generation = generation + 1, heartbeat_at = ? WHERE id = ? AND state IN ('open', 'detached')${generation === undefined ? '' : ' AND generation = ?'}`,
        generation === undefined ? [now, id] : [now, id, generation])),
    markFinished: async (id: string, reason: string, now: string): Promise<void> => {
      await store.run(`UPDATE live_streams SET state = 'finished', finished_at = ?, end_reason = ? WHERE id = ?`, [now, reason, id])
    },
    partsRemoved: async (id: string): Promise<void> => {
      await store.run('UPDATE live_streams SET parts = 0 WHERE id = ?', [id])
    },
    /**
     * Streams to finish: dropped and not resumed within the grace period, or open on a node that
     * stopped beating, or left half-finished by a node that died while finishing them.
     */
    orphaned: async (detachedBefore: string, silentSince: string): Promise<string[]> =>
      (await store.all<{ id: string }>(`SELECT id FROM live_streams WHERE (state = 'detached' AND detached_at < ?) OR (state IN ('open', 'finishing') AND heartbeat_at < ?) ORDER BY created_at`,
        [detachedBefore, silentSince])).map(r => r.id),
    /** claims a half-finished stream whose node died (its heartbeat older than `silentSince`) */
    reclaimFinishing: async (id: string, silentSince: string, now: string): Promise<boolean> =>
      one(await store.run(`UPDATE live_streams SET heartbeat_at = ?, generation = generation + 1 WHERE id = ? AND state = 'finishing' AND heartbeat_at < ?`, [now, id, silentSince])),
    /** finished streams whose parts are still stored (a node died after the note was made) */
    withParts: async (): Promise<string[]> =>
      (await store.all<{ id: string }>(`SELECT id FROM live_streams WHERE state = 'finished' AND parts > 0`)).map(r => r.id),
  }
}
