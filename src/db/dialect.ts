/**
 * What differs between the two back ends in the text of a query, and what each can and cannot do,
 * as one object per back end (as Grafana's migrator `Dialect` and Kysely's dialects do). A repository
 * writes one SQL text and asks the store's dialect (`store.sql`) for the few pieces each spells its
 * own way; it never asks which back end it runs on. The queries that truly differ (the notes list and
 * search) live in per-back-end repository files (`*.sqlite.ts`, `*.postgres.ts`), chosen once in the
 * composition root through `Store.choose`.
 */
export interface Dialect {
  /** the back end's name, for logs, health and doctor (never for a branch) */
  readonly name: 'sqlite' | 'postgres'
  /** the larger of two SQL values */
  greatest(a: string, b: string): string
  /** the smaller of two SQL values */
  least(a: string, b: string): string
  /**
   * Appended to a SELECT inside a write transaction that must lock the rows it read against other
   * connections (`update`: any change or deletion; `share`: deletion only). PostgreSQL: ` FOR UPDATE` /
   * ` FOR SHARE`; SQLite: nothing, its write transactions hold the one write lock from their start
   * (BEGIN IMMEDIATE).
   */
  lock(mode: 'update' | 'share'): string
  /**
   * Appended to a queue's claim subquery: each candidate locked as it is read and rows another
   * connection's claim holds skipped (PostgreSQL's ` FOR UPDATE SKIP LOCKED`), so claims on several
   * nodes take different rows without waiting on one another; nothing on SQLite (one writer).
   */
  readonly skipLocked: string
  /**
   * A statement that holds, until the calling write transaction ends, a lock named by its one
   * parameter (a string): a second transaction running it with the same name waits until the first
   * ends. For what must be read then written by one writer at a time across connections (a queue's
   * claims under in-flight caps, a count checked before an insert). PostgreSQL:
   * `pg_advisory_xact_lock` (in the two-key space, apart from the migrations' one-key lock); null on
   * SQLite, whose write transactions already run one at a time (BEGIN IMMEDIATE).
   */
  readonly namedLock: string | null
  /**
   * `column` ordered without regard to ASCII case, readable off an index built the same way: SQLite's
   * `COLLATE NOCASE`, PostgreSQL's `lower()` of a bytewise ("C") column.
   */
  caseless(column: string): string
  /** `column` equal to the parameter without regard to ASCII case (the unique email rule). */
  caselessEquals(column: string): string
  /**
   * Whether several serving processes (nodes, on several machines) may share this database, so that
   * what must be counted across them (rate-limit windows) is counted in it; one `serve` per SQLite file.
   */
  readonly sharedByNodes: boolean
  /**
   * Whether committed changes are announced to other connections (PostgreSQL's LISTEN/NOTIFY), so that
   * idle workers are woken rather than having to look often.
   */
  readonly notifies: boolean
  /** Whether the database's clock is another machine's (a network database), to be measured and used by every node. */
  readonly remoteClock: boolean
  /**
   * Element `?` (an integer parameter, from 0) of the JSON array in text column `column`, as JSON
   * text; null when there is none. Parsed by the database, so one element of a large array is read
   * without the array crossing to the process.
   */
  jsonElement(column: string): string
}

export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  greatest: (a, b) => `max(${a}, ${b})`,
  least: (a, b) => `min(${a}, ${b})`,
  lock: () => '',
  skipLocked: '',
  namedLock: null,
  caseless: column => `${column} COLLATE NOCASE`,
  caselessEquals: column => `${column} = ?`,
  sharedByNodes: false,
  notifies: false,
  remoteClock: false,
  jsonElement: column => `json_extract(${column}, '$[' || CAST(? AS INTEGER) || ']')`,
}

export const POSTGRES_DIALECT: Dialect = {
  name: 'postgres',
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  least: (a, b) => `LEAST(${a}, ${b})`,
  lock: mode => ` FOR ${mode.toUpperCase()}`,
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  namedLock: `SELECT pg_advisory_xact_lock(hashtext('notesvc'), hashtext(?))`,
  caseless: column => `lower(${column})`,
  caselessEquals: column => `lower(${column}) = lower(?)`,
  sharedByNodes: true,
  notifies: true,
  remoteClock: true,
  jsonElement: column => `((${column})::json -> CAST(? AS integer))::text`,
}
