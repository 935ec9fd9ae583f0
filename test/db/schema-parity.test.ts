import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase, type Database } from '../../src/db/database'
import { migrateStore } from '../../src/db/migrate-store'
import { postgresMigrations } from '../../src/db/migrations-postgres'
import { PostgresStore, SqliteStore, type Queryable, type SqlValue, type Store } from '../../src/db/store'
import { fts5Match, tsqueryParams } from '../../src/modules/notes/search-query'
import { freshPostgresUrl, sharedPostgres } from '../helpers/backends'
import { postgresUnavailable } from '../helpers/postgres'
import { compareFacts, postgresSchemaFacts, sqliteSchemaFacts, type DialectDifference } from '../helpers/schema-facts'

/**
 * SQLite's schema and PostgreSQL's, each built by its own migrations, read live from each database and
 * compared: tables, columns in order (what each holds, nullability, DEFAULT, collation), CHECKs,
 * primary keys, unique constraints, foreign keys, indexes, triggers and PostgreSQL's functions and
 * sequences. Every difference must be one of DIALECT_DIFFERENCES. Then the same writes are made on
 * both, and what the triggers (and SQLite's generated columns) derive from them is compared.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`schema parity tests skipped: ${pgSkip}`)

/** SQLite's audit trigger as schema-facts.ts reads it: any UPDATE refused but a read's count and last time growing (migration 19). */
const SQLITE_AUDIT_TRIGGER = 'before update on audit_events when not(old.read_key is not null and '
  + "old.action in('audit.exported','note.media_read','note.transcript_exported')and "
  + ['id', 'at', 'account_id', 'actor_type', 'actor_id', 'action', 'target_type', 'target_id', 'ip', 'user_agent', 'details', 'read_key'].map(c => `new.${c} is old.${c}`).join(' and ')
  + ' and new.count>old.count and new.last_at>=coalesce(old.last_at,old.at))'

/**
 * Every way PostgreSQL's schema differs from SQLite's on purpose. A key is `<subject> <attribute>`
 * as schema-facts.ts reads it; `*` in a key is any text, a value `*` any value. A side that does not
 * name a key must lack it. Anything else that differs fails the comparison, and so does an entry
 * whose facts are no longer found.
 */
const DIALECT_DIFFERENCES: DialectDifference[] = [
  {
    what: 'integer width',
    sqlite: { 'column * type': 'integer (64-bit)' },
    postgres: { 'column * type': 'integer (32-bit)' },
    except: ['column uploads.declared_size', 'column uploads.received_size', 'column notes.revision', 'column note_revision_counter.n'],
    why: "SQLite's INTEGER is 64 bits. PostgreSQL's integer (32) holds the flags, counts, credits, ms and versions; "
      + 'bigint, the same as SQLite, where a value can pass 2^31: bytes of an upload (up to 5 GiB) and revisions.',
  },
  {
    what: 'primary keys are never null',
    sqlite: { 'column * null': 'nullable (primary key)' },
    postgres: { 'column * null': 'not null' },
    why: 'SQLite lets a primary key other than INTEGER PRIMARY KEY hold NULL (kept for compatibility); no repository '
      + 'writes one. PostgreSQL makes every primary-key column NOT NULL.',
  },
  {
    what: 'accounts.email is unique without regard to ASCII case',
    sqlite: { 'column accounts.email collation': 'nocase', 'table accounts unique': 'email' },
    postgres: { 'column accounts.email collation': 'bytewise', 'index accounts_email on': 'accounts (lower(email))', 'index accounts_email unique': 'yes' },
    why: 'PostgreSQL has no NOCASE collation. Under "C", lower() folds ASCII letters only, as NOCASE does; lookups '
      + 'compare lower(email) = lower(?).',
  },
  {
    what: 'folders listed by name without regard to ASCII case',
    sqlite: { 'index folders_by_name on': 'folders (account_id, sandbox, name collate nocase, id)' },
    postgres: { 'index folders_by_name on': 'folders (account_id, sandbox, lower(name), id)' },
    why: 'the same order as NOCASE, by lower() under "C"; the folder list orders by lower(name), id there.',
  },
  {
    what: 'list_item and changed_within',
    sqlite: { 'column notes.list_item generated': 'stored', 'column notes.changed_within generated': 'virtual' },
    postgres: {
      'trigger notes_derive fires': 'before insert or update on notes for each row execute function notes_derive()',
      'function notes_derive returns': 'trigger () in plpgsql',
      'function note_list_item returns': 'text (n notes) in sql',
      'function json_string_or_null returns': 'text (v text) in sql',
      'function note_changed_within returns': 'integer (created text, updated text) in plpgsql',
    },
    why: 'PostgreSQL allows only immutable expressions in generated columns, and building JSON or date arithmetic on '
      + 'text is not: plain columns that notes_derive sets on every insert and update (compared below, byte for byte).',
  },
  {
    what: 'note revisions and the revision counter',
    sqlite: {
      'trigger notes_revision_on_insert fires': 'after insert on notes',
      'trigger notes_revision_on_update fires': 'after update on notes when new.revision=old.revision',
      'trigger notes_revision_on_delete fires': 'after delete on notes',
    },
    postgres: {
      'sequence note_revisions kind': 'sequence',
      'trigger notes_revision_counter fires': 'after insert or delete or update on notes deferrable initially deferred for each row execute function note_revision_counter_move()',
      'function note_revision_counter_move returns': 'trigger () in plpgsql',
    },
    why: 'SQLite draws revisions from the counter row under its one write lock; on PostgreSQL that would serialize '
      + 'every note write. Revisions come from a sequence (in notes_derive), and the counter row moves once per '
      + 'transaction, at commit.',
  },
  {
    what: 'the full-text index',
    sqlite: { 'table note_search kind': "virtual table using fts5(title,summary,transcript,tokenize='unicode61 remove_diacritics 2',prefix='2 3')" },
    postgres: {
      'table note_search kind': 'table',
      'table note_search options': 'toast_tuple_target=8160',
      'table note_search primary_key': 'note_id',
      'column note_search.note_id position': 'first',
      'column note_search.account_id position': 'after note_id',
      'column note_search.sandbox position': 'after account_id',
      'column note_search.date_created position': 'after sandbox',
      'column note_search.doc position': 'after date_created',
      'column note_search.folder_id position': 'after doc',
      'column note_search.status position': 'after folder_id',
      'column note_search.type position': 'after status',
      'column note_search.head position': 'after type',
      'column note_search.created_s position': 'after head',
      'column note_search.* type': '*',
      'column note_search.* null': '*',
      'column note_search.* collation': '*',
      'column note_search.* storage': '*',
      'column note_search.note_id references': 'notes.id on delete cascade on update no action',
      'index note_search_doc on': 'note_search (doc)',
      'index note_search_doc using': 'gin',
      'index note_search_head on': 'note_search (head)',
      'index note_search_head using': 'gin',
      'index note_search_filters on': 'note_search (account_id, sandbox, status, type, folder_id)',
      'index note_search_second on': "note_search (account_id, sandbox, least(created_s,'4294967295')&'4294967295')",
    },
    why: "Each back end's own (migrations 9 and 12): SQLite's FTS5 table (its shadow tables stand behind it), "
      + "PostgreSQL's table of tsvectors with a GIN index, the title's own with another (migration 31), and its copies of the library and the list filters in a b-tree (migration 33, for filtered searches), and the second each note was made as a search result's place holds it (migration 36, for deep pages). SQLite's search reads the library, date and filters from "
      + 'notes; PostgreSQL\'s from copies in the search row (compared below, as the triggers keep them).',
  },
  {
    what: "SQLite's search rows (migration 30)",
    sqlite: {
      'table search_keys kind': 'table',
      'table search_keys primary_key': 'note_rowid',
      'column search_keys.note_rowid position': 'first',
      'column search_keys.account_id position': 'after note_rowid',
      'column search_keys.sandbox position': 'after account_id',
      'column search_keys.date_created position': 'after sandbox',
      'column search_keys.id position': 'after date_created',
      'column search_keys.folder_id position': 'after id',
      'column search_keys.status position': 'after folder_id',
      'column search_keys.type position': 'after status',
      'column search_keys.* type': '*',
      'column search_keys.* null': '*',
      'column search_keys.* collation': '*',
      'trigger search_keys_on_insert fires': 'after insert on notes',
      'trigger search_keys_on_update fires': 'after update of account_id,sandbox,date_created,id,folder_id,status,type on notes when '
        + ['account_id', 'sandbox', 'date_created', 'id', 'folder_id', 'status', 'type'].map(c => `new.${c} is not old.${c}`).join(' or '),
      'trigger search_keys_on_delete fires': 'after delete on notes',
    },
    postgres: {},
    why: "The library, date, id, folder, status and type a search reads of every match, copied beside the FTS5 index "
      + "(keyed by its rowid) as PostgreSQL's note_search row holds them: a narrow row per match instead of notes' wide "
      + 'one. Compared below with PostgreSQL\'s search row, write by write.',
  },
  {
    what: 'the full-text index kept in step with the notes',
    sqlite: {
      'trigger note_search_on_insert fires': 'after insert on notes',
      'trigger note_search_on_update fires': 'after update of title,summary on notes when new.title is not old.title or new.summary is not old.summary',
      'trigger note_search_on_delete fires': 'after delete on notes',
      'trigger note_search_on_body_insert fires': 'after insert on note_bodies',
      'trigger note_search_on_body_update fires': 'after update of original_transcription on note_bodies when new.original_transcription is not old.original_transcription',
    },
    postgres: {
      'trigger note_search_on_note fires': 'after insert or update of account_id,sandbox,title,summary,folder_id,status,type on notes for each row execute function note_search_on_note()',
      'trigger note_search_on_body fires': 'after insert or update of original_transcription on note_bodies for each row execute function note_search_on_body()',
      'function note_search_on_note returns': 'trigger () in plpgsql',
      'function note_search_on_body returns': 'trigger () in plpgsql',
      'function note_search_refresh returns': 'void (note text) in sql',
      'function note_search_doc returns': 'tsvector (title text, summary text, transcript text) in plpgsql',
      'function note_search_text returns': 'text (t text) in sql',
    },
    why: 'a deletion reaches PostgreSQL\'s search row by its foreign key (cascade), and a change of folder, status or '
      + 'type is copied into it; SQLite reads those from notes. The effects are compared below.',
  },
  {
    what: 'the audit log refuses an UPDATE but the growth of a read\'s count (migrations 17 and 19)',
    sqlite: { 'trigger audit_events_append_only fires': SQLITE_AUDIT_TRIGGER },
    postgres: {
      'trigger audit_events_append_only fires': 'before update on audit_events for each row execute function audit_events_refuse_update()',
      'function audit_events_refuse_update returns': 'trigger () in plpgsql',
    },
    why: "SQLite's trigger says in its WHEN which UPDATE it lets through and raises in its body; PostgreSQL's calls a function that lets the same through and raises otherwise. What each refuses and allows is compared below.",
  },
  {
    what: 'rate-limit windows',
    sqlite: { 'table rate_windows kind': 'table' },
    postgres: { 'table rate_windows kind': 'unlogged table' },
    why: 'every counted request writes there on PostgreSQL, and a window is worth nothing after a crash: no WAL '
      + '(PostgreSQL empties the table after one). SQLite counts in memory and leaves the table empty.',
  },
]

/** Every difference between the two live schemas that DIALECT_DIFFERENCES does not list, one line each. */
async function schemaDifferences(sqliteDb: Database, pgStore: PostgresStore): Promise<string[]> {
  return compareFacts(sqliteSchemaFacts(sqliteDb), await postgresSchemaFacts(pgStore), DIALECT_DIFFERENCES)
}

const ROLLBACK = new Error('rolled back')

/**
 * What schemaDifferences reports once `plant` is made on one side: on a new SQLite database, or on
 * `pg` inside a transaction that is rolled back after (PostgreSQL's DDL is transactional).
 */
async function differencesPlanted(plant: { sqlite?: string; postgres?: string }, pg: PostgresStore): Promise<string[]> {
  const lite = openDatabase(':memory:')
  let reported: string[] = []
  try {
    if (plant.sqlite) lite.exec(plant.sqlite)
    await pg.transaction(async tx => {
      if (plant.postgres) await tx.run(plant.postgres)
      reported = await schemaDifferences(lite, pg)
      throw ROLLBACK
    }).catch(err => {
      if (err !== ROLLBACK) throw err
    })
    return reported
  } finally {
    lite.close()
  }
}

/** Differences planted on one side, and what the comparison must say about each, no more. */
const PLANTED: { what: string; sqlite?: string; postgres?: string; reported: string[] }[] = [
  {
    what: 'a column on PostgreSQL only',
    postgres: 'ALTER TABLE notes ADD COLUMN x TEXT',
    reported: ['column notes.x: only on PostgreSQL (collation "default", null nullable, position after tags, type text)'],
  },
  {
    what: 'a column on SQLite only',
    sqlite: 'ALTER TABLE notes ADD COLUMN x TEXT',
    reported: ['column notes.x: only on SQLite (collation bytewise, null nullable, position after tags, type text)'],
  },
  {
    what: 'an index on SQLite only',
    sqlite: 'CREATE INDEX notes_by_title ON notes(account_id, title) WHERE is_pinned = 1',
    reported: ['index notes_by_title: only on SQLite (on notes (account_id, title), where is_pinned=1)'],
  },
  {
    what: 'another DEFAULT',
    postgres: "ALTER TABLE notes ALTER COLUMN style_id SET DEFAULT 'meeting'",
    reported: ["column notes.style_id default: SQLite 'note', PostgreSQL 'meeting'"],
  },
  {
    what: 'another CHECK',
    postgres: "ALTER TABLE jobs DROP CONSTRAINT jobs_status_check, ADD CHECK (status IN ('queued', 'running', 'done', 'failed', 'paused'))",
    reported: ["column jobs.status check: SQLite status in('done','failed','queued','running'), PostgreSQL status in('done','failed','paused','queued','running')"],
  },
  {
    what: 'another collation and nullability',
    postgres: 'ALTER TABLE folders ALTER COLUMN color TYPE text COLLATE "default", ALTER COLUMN color SET NOT NULL',
    reported: ['column folders.color collation: SQLite bytewise, PostgreSQL "default"', 'column folders.color null: SQLite nullable, PostgreSQL not null'],
  },
  {
    what: 'a 64-bit column narrowed',
    postgres: 'ALTER TABLE uploads ALTER COLUMN declared_size TYPE integer',
    reported: ['column uploads.declared_size type: SQLite integer (64-bit), PostgreSQL integer (32-bit)'],
  },
  {
    what: 'another ON DELETE',
    postgres: 'ALTER TABLE jobs DROP CONSTRAINT jobs_note_id_fkey, ADD FOREIGN KEY (note_id) REFERENCES notes(id) ON DELETE RESTRICT',
    reported: ['column jobs.note_id references: SQLite notes.id on delete cascade on update no action, PostgreSQL notes.id on delete restrict on update no action'],
  },
  {
    what: 'a trigger on SQLite only',
    sqlite: 'CREATE TRIGGER folders_touched AFTER UPDATE OF name ON folders BEGIN SELECT 1; END',
    reported: ['trigger folders_touched: only on SQLite (fires after update of name on folders)'],
  },
  {
    what: 'a listed difference that no longer holds',
    postgres: 'DROP INDEX accounts_email',
    reported: [
      'listed as a dialect difference (accounts.email is unique without regard to ASCII case) but not found: PostgreSQL index accounts_email on accounts (lower(email))',
      'listed as a dialect difference (accounts.email is unique without regard to ASCII case) but not found: PostgreSQL index accounts_email unique yes',
    ],
  },
]

describe.skipIf(pgSkip !== null)('the live schemas of SQLite and PostgreSQL after their migrations', () => {
  let sqlite: Database
  let pg: PostgresStore
  beforeAll(async () => {
    sqlite = openDatabase(':memory:')
    // migrated here, from empty, rather than copied from the shared template
    const { pg: cluster } = await sharedPostgres()
    pg = new PostgresStore(await cluster.createDatabase(`schema_parity_${process.pid}`), { max: 2 })
    await migrateStore(pg, postgresMigrations())
  }, 60_000)
  afterAll(async () => {
    await pg?.close()
    sqlite?.close()
  })

  test('differ only as DIALECT_DIFFERENCES says', async () => {
    expect(await schemaDifferences(sqlite, pg)).toEqual([])
  })

  test('are read whole: the facts name every kind of thing compared', async () => {
    const facts = sqliteSchemaFacts(sqlite)
    expect(facts.get('table notes kind')).toBe('table')
    expect(facts.get('column accounts.plan default')).toBe("'free'")
    expect(facts.get('column notes.status check')).toBe("status in('Done','Error','Summarizing')")
    expect(facts.get('column notes.title collation')).toBe('bytewise')
    expect(facts.get('table api_keys unique')).toBe('hash')
    expect(facts.get('table rate_windows primary_key')).toBe('key, class')
    expect(facts.get('column notes.folder_id references')).toBe('folders.id on delete set null on update no action')
    expect(facts.get('index notes_changed_later where')).toBe('changed_within>0')
    expect([...facts.keys()].filter(k => k.startsWith('index ') && k.endsWith(' on')).length).toBeGreaterThan(20)
    const pgFacts = await postgresSchemaFacts(pg)
    expect(pgFacts.get('column accounts.plan default')).toBe("'free'")
    expect(pgFacts.get('column notes.status check')).toBe("status in('Done','Error','Summarizing')")
  })

  test.each(PLANTED)('a difference planted on one side is reported: $what', async plant => {
    expect(await differencesPlanted(plant, pg)).toEqual(plant.reported)
  })

  test('a planted difference is gone once rolled back', async () => {
    expect(await schemaDifferences(sqlite, pg)).toEqual([])
  })
})

// ------------------------------------------------------------------ what the triggers derive

const CREATED = '2026-11-10T12:00:00.000Z'
const later = (ms: number, from = CREATED) => new Date(Date.parse(from) + ms).toISOString()
const SECOND = 1000
const DAY = 86_400 * SECOND

const NOTE_COLUMNS = ['id', 'account_id', 'sandbox', 'folder_id', 'title', 'summary', 'status', 'processing_stage', 'type', 'style_id', 'language', 'is_pinned', 'source', 'error_code', 'error_message', 'date_created', 'updated_at']
const NOTE_DEFAULTS: Record<string, SqlValue> = { account_id: 'acct_1', sandbox: 0, title: 'T', summary: '', status: 'Done', type: 'import', style_id: 'note', is_pinned: 0, source: 'api', date_created: CREATED, updated_at: CREATED }
const noteRow = (n: Record<string, unknown>) => NOTE_COLUMNS.map(c => (n[c] ?? NOTE_DEFAULTS[c] ?? null) as SqlValue)
const INSERT_NOTE = `INSERT INTO notes (${NOTE_COLUMNS.join(', ')}) VALUES (${NOTE_COLUMNS.map(() => '?').join(', ')})`

/** The account acct_1 with these folders. */
async function seedLibrary(s: Queryable, folders: string[]) {
  await s.run("INSERT INTO accounts (id, email, grant_period, created_at) VALUES ('acct_1', 'a@example.com', '2026-11', ?)", [CREATED])
  for (const f of folders) await s.run("INSERT INTO folders (id, account_id, sandbox, name, created_at, updated_at) VALUES (?, 'acct_1', 0, 'F', ?, ?)", [f, CREATED, CREATED])
}

/**
 * What a reader can see that the triggers (and SQLite's generated columns) derive: a note's list_item
 * or changed_within, its revision, the revision counter, the search rows, the notes a word finds.
 */
type Effect = 'list item' | 'revision' | 'counter' | 'search row' | 'search words' | 'audit rows' | 'refused'

/**
 * The writes, made in order on both back ends, each in one transaction, and which effects SQLite
 * shows for each. Not written: an UPDATE that sets notes.revision itself (no repository does):
 * SQLite's trigger then keeps that revision and leaves the counter, PostgreSQL's gives a new one.
 */
/** A transcript read of key_1 in one slot (read_key 'k_read'), as the audit repo counts it. */
const INSERT_READ = "INSERT INTO audit_events (id, at, account_id, actor_type, actor_id, action, target_type, target_id, ip, read_key, last_at) VALUES (?, ?, 'acct_1', 'key', 'key_1', 'note.transcript_exported', 'note', 'n_1', '192.0.2.1', 'k_read', ?)"

const WRITES: { what: string; statements: [string, SqlValue[]][]; effects: Effect[] }[] = [
  { what: 'a note is inserted', statements: [[INSERT_NOTE, noteRow({ id: 'n_1', folder_id: 'fld_1', title: 'alpha', summary: 'gamma', status: 'Summarizing', type: 'audio' })]], effects: ['list item', 'revision', 'counter', 'search row', 'search words'] },
  { what: 'its body is inserted', statements: [['INSERT INTO note_bodies (note_id, original_transcription) VALUES (?, ?)', ['n_1', 'omega']]], effects: ['search words'] },
  {
    what: 'a note and its body in one transaction, as the repository inserts them',
    statements: [[INSERT_NOTE, noteRow({ id: 'n_2', title: 'beta' })], ['INSERT INTO note_bodies (note_id, original_transcription) VALUES (?, ?)', ['n_2', 'sigma']]],
    effects: ['list item', 'revision', 'counter', 'search row', 'search words'],
  },
  { what: 'the title changes', statements: [["UPDATE notes SET title = 'delta', updated_at = ? WHERE id = 'n_1'", [later(30 * SECOND)]]], effects: ['list item', 'revision', 'counter', 'search words'] },
  { what: 'the summary changes', statements: [["UPDATE notes SET summary = 'epsilon' WHERE id = 'n_1'", []]], effects: ['list item', 'revision', 'counter', 'search words'] },
  { what: 'the status and type change', statements: [["UPDATE notes SET status = 'Done', type = 'upload' WHERE id = 'n_1'", []]], effects: ['list item', 'revision', 'counter', 'search row'] },
  { what: 'the note moves to another folder', statements: [["UPDATE notes SET folder_id = 'fld_2' WHERE id = 'n_1'", []]], effects: ['list item', 'revision', 'counter', 'search row'] },
  { what: 'the transcript changes', statements: [["UPDATE note_bodies SET original_transcription = 'kappa' WHERE note_id = 'n_1'", []]], effects: ['search words'] },
  { what: 'the transcript is written again unchanged', statements: [["UPDATE note_bodies SET original_transcription = original_transcription WHERE note_id = 'n_1'", []]], effects: [] },
  { what: 'an update that changes no value', statements: [["UPDATE notes SET title = title WHERE id = 'n_1'", []]], effects: ['revision', 'counter'] },
  { what: 'an update that matches no note', statements: [["UPDATE notes SET title = 'zeta' WHERE id = 'no_such_note'", []]], effects: [] },
  { what: 'a column no trigger names changes', statements: [["UPDATE notes SET progress = 0.5 WHERE id = 'n_1'", []]], effects: ['revision', 'counter'] },
  { what: 'the note is pinned, an hour after its creation', statements: [["UPDATE notes SET is_pinned = 1, updated_at = ? WHERE id = 'n_1'", [later(3600 * SECOND + 1)]]], effects: ['list item', 'revision', 'counter'] },
  { what: 'every note changes in one statement', statements: [["UPDATE notes SET status = 'Error', updated_at = ?", [later(2 * DAY)]]], effects: ['list item', 'revision', 'counter', 'search row'] },
  { what: "the note's folder is deleted (ON DELETE SET NULL)", statements: [["DELETE FROM folders WHERE id = 'fld_2'", []]], effects: ['list item', 'revision', 'counter', 'search row'] },
  { what: 'a body is deleted alone (the transcript stays searchable on both)', statements: [["DELETE FROM note_bodies WHERE note_id = 'n_2'", []]], effects: [] },
  { what: 'a note is deleted', statements: [["DELETE FROM notes WHERE id = 'n_1'", []]], effects: ['list item', 'counter', 'search row', 'search words'] },
  // the audit log (migrations 15 and 17): appended to, never changed, pruned by age
  { what: 'an audit event is appended', statements: [["INSERT INTO audit_events (id, at, account_id, actor_type, actor_id, action) VALUES ('aud_1', ?, 'acct_1', 'user', 'acct_1', 'signin.succeeded')", [CREATED]]], effects: ['audit rows'] },
  { what: 'another audit event is appended', statements: [["INSERT INTO audit_events (id, at, account_id, actor_type, actor_id, action) VALUES ('aud_2', ?, 'acct_1', 'key', 'key_1', 'note.deleted')", [later(DAY)]]], effects: ['audit rows'] },
  { what: 'an audit event cannot be changed', statements: [["UPDATE audit_events SET action = 'signout' WHERE id = 'aud_1'", []]], effects: ['refused'] },
  // reads (migration 19): one row per slot, whose count and last time, and nothing else, may grow
  { what: 'a read is appended with its slot\'s key', statements: [[`${INSERT_READ} ON CONFLICT (read_key) DO UPDATE SET count = audit_events.count + 1, last_at = excluded.last_at`, ['aud_3', later(DAY + SECOND), later(DAY + SECOND)]]], effects: ['audit rows'] },
  { what: 'the same read again is counted in its row', statements: [[`${INSERT_READ} ON CONFLICT (read_key) DO UPDATE SET count = audit_events.count + 1, last_at = excluded.last_at`, ['aud_4', later(DAY + 2 * SECOND), later(DAY + 2 * SECOND)]]], effects: ['audit rows'] },
  { what: 'a read\'s count cannot go down', statements: [["UPDATE audit_events SET count = count - 1 WHERE id = 'aud_3'", []]], effects: ['refused'] },
  { what: 'a read\'s address cannot change, even with its count', statements: [["UPDATE audit_events SET count = count + 1, ip = '10.0.0.1' WHERE id = 'aud_3'", []]], effects: ['refused'] },
  { what: 'a read\'s last time cannot go back', statements: [["UPDATE audit_events SET count = count + 1, last_at = ? WHERE id = 'aud_3'", [later(DAY)]]], effects: ['refused'] },
  { what: 'a write cannot be counted', statements: [["UPDATE audit_events SET count = count + 1, last_at = ? WHERE id = 'aud_2'", [later(2 * DAY)]]], effects: ['refused'] },
  { what: 'a write with a key cannot be counted either', statements: [["INSERT INTO audit_events (id, at, account_id, actor_type, actor_id, action, read_key, last_at) VALUES ('aud_5', ?, 'acct_1', 'key', 'key_1', 'note.deleted', 'k_write', ?)", [later(DAY), later(DAY)]], ["UPDATE audit_events SET count = count + 1 WHERE id = 'aud_5'", []]], effects: ['refused'] },
  { what: 'old audit events are pruned (the log\'s own retention)', statements: [['DELETE FROM audit_events WHERE at < ?', [later(SECOND)]]], effects: ['audit rows'] },
  { what: 'the account is deleted (its notes cascade)', statements: [["DELETE FROM accounts WHERE id = 'acct_1'", []]], effects: ['list item', 'counter', 'search row', 'search words'] },
]

/** The triggers of both back ends, and the effects by which the writes above observe each. */
const TRIGGER_EFFECTS: Record<string, Effect[]> = {
  // SQLite (migrations 5 and 9)
  notes_revision_on_insert: ['revision', 'counter'],
  notes_revision_on_update: ['revision', 'counter'],
  notes_revision_on_delete: ['counter'],
  note_search_on_insert: ['search row', 'search words'],
  note_search_on_update: ['search words'],
  note_search_on_delete: ['search row', 'search words'],
  note_search_on_body_insert: ['search words'],
  note_search_on_body_update: ['search words'],
  // SQLite (migration 30)
  search_keys_on_insert: ['search row'],
  search_keys_on_update: ['search row'],
  search_keys_on_delete: ['search row'],
  // PostgreSQL (migrations 1, 4, 5, 9 and 12)
  notes_derive: ['list item', 'revision'],
  notes_revision_counter: ['counter'],
  note_search_on_note: ['search row', 'search words'],
  note_search_on_body: ['search words'],
  // both (migration 17)
  audit_events_append_only: ['refused'],
}

const PROBE_WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'omega', 'sigma', 'kappa']

/**
 * What each back end's search reads of a note besides its text: the library, date and filters. SQLite's
 * search joins its search_keys row by the index's rowid (migration 30; an index row without one shows
 * as id null, and so does a search_keys row left without an index row); PostgreSQL's reads the copies
 * in its search row (migration 12).
 */
const SEARCH_ROWS = {
  sqlite: `SELECT k.id, k.account_id, k.sandbox, k.date_created, k.folder_id, k.status, k.type
    FROM note_search s LEFT JOIN search_keys k ON k.note_rowid = s.rowid
    UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM search_keys k WHERE k.note_rowid NOT IN (SELECT rowid FROM note_search)
    ORDER BY 1`,
  postgres: 'SELECT note_id AS id, account_id, sandbox, date_created, folder_id, status, type FROM note_search ORDER BY note_id',
}
/** The notes a word finds, as each back end's search matches it (search-query.ts). */
const MATCHES = {
  sqlite: { sql: 'SELECT n.id FROM note_search s JOIN notes n ON n.rowid = s.rowid WHERE note_search MATCH ? ORDER BY n.id', term: (w: string) => fts5Match({ words: [w] }) },
  postgres: { sql: "SELECT note_id AS id FROM note_search WHERE doc @@ to_tsquery('simple', ?) ORDER BY note_id", term: (w: string) => tsqueryParams({ words: [w] }).last },
}

interface Derived {
  notes: { id: string; list_item: string; changed_within: number }[]
  revisions: Map<string, number>
  counter: number
  search: Record<string, unknown>[]
  words: Record<string, string[]>
  audit: Record<string, unknown>[]
}

async function readDerived(s: Store): Promise<Derived> {
  const rows = await s.all<{ id: string; list_item: string; changed_within: number; revision: number | string }>('SELECT id, list_item, changed_within, revision FROM notes ORDER BY id')
  const words: Record<string, string[]> = {}
  for (const w of PROBE_WORDS) words[w] = (await s.all<{ id: string }>(MATCHES[s.sql.name].sql, [MATCHES[s.sql.name].term(w)])).map(r => r.id)
  return {
    notes: rows.map(({ id, list_item, changed_within }) => ({ id, list_item, changed_within })),
    revisions: new Map(rows.map(r => [r.id, Number(r.revision)])),
    counter: Number((await s.get<{ n: number | string }>('SELECT n FROM note_revision_counter'))!.n),
    search: await s.all(SEARCH_ROWS[s.sql.name]),
    words,
    audit: await s.all('SELECT id, at, account_id, actor_type, actor_id, action, ip, count, last_at FROM audit_events ORDER BY id'),
  }
}

/** How a write changed what is derived: the two back ends must agree on all of it. */
function change(before: Derived, after: Derived, refused: boolean) {
  const revised = [...after.revisions].filter(([id, r]) => before.revisions.get(id) !== r).map(([id]) => id)
  const highest = Math.max(0, ...before.revisions.values())
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
  const effects: Effect[] = []
  if (!same(before.notes, after.notes)) effects.push('list item')
  if (revised.length > 0) effects.push('revision')
  if (before.counter !== after.counter) effects.push('counter')
  if (!same(before.search, after.search)) effects.push('search row')
  if (!same(before.words, after.words)) effects.push('search words')
  if (!same(before.audit, after.audit)) effects.push('audit rows')
  if (refused) effects.push('refused')
  return {
    effects,
    notes: after.notes,
    revised,
    // every new revision is above every revision there was, and none is given twice
    revisionsNew: revised.every(id => after.revisions.get(id)! > highest) && new Set(revised.map(id => after.revisions.get(id))).size === revised.length,
    search: after.search,
    words: after.words,
  }
}

/** Table and events of a trigger, from the text schema-facts.ts reads (`after update of a,b on notes when …`). */
function firing(text: string): { table: string; events: string[] } {
  const m = /(?:before|after|instead of) (.+?) on (\w+)/.exec(text)!
  return { table: m[2]!, events: m[1]!.split(' or ').map(e => e.split(' ')[0]!) }
}
/** The event and table of a write's statement. */
function writing(sql: string): { event: string; table: string } {
  const m = /^\s*(insert|update|delete)\s+(?:into\s+|from\s+)?(\w+)/i.exec(sql)!
  return { event: m[1]!.toLowerCase(), table: m[2]! }
}

describe.skipIf(pgSkip !== null)('the same writes on both back ends derive the same', () => {
  const stores: { sqlite?: SqliteStore; postgres?: PostgresStore } = {}
  const seen: { sqlite?: Derived; postgres?: Derived } = {}
  beforeAll(async () => {
    stores.sqlite = new SqliteStore(openDatabase(':memory:'))
    stores.postgres = new PostgresStore(await freshPostgresUrl(), { max: 2 })
    for (const side of ['sqlite', 'postgres'] as const) {
      await seedLibrary(stores[side]!, ['fld_1', 'fld_2'])
      seen[side] = await readDerived(stores[side]!)
    }
  })
  afterAll(async () => {
    await stores.postgres?.close()
    await stores.sqlite?.close()
  })

  test('every trigger of either back end is one whose effects a write below observes', async () => {
    const facts = [...sqliteSchemaFacts(stores.sqlite!.db), ...(await postgresSchemaFacts(stores.postgres!))]
    const triggers = facts.filter(([k]) => /^trigger \w+ fires$/.test(k)).map(([k, v]) => ({ name: k.split(' ')[1]!, ...firing(v) }))
    // a trigger both back ends name alike (audit_events_append_only) is listed once
    expect([...new Set(triggers.map(t => t.name))].sort()).toEqual(Object.keys(TRIGGER_EFFECTS).sort())
    for (const t of triggers) {
      const writes = WRITES.filter(w => w.statements.some(([sql]) => writing(sql).table === t.table && t.events.includes(writing(sql).event)))
      const observed = new Set(writes.flatMap(w => w.effects))
      expect({ trigger: t.name, observed: TRIGGER_EFFECTS[t.name]!.filter(e => observed.has(e)) }).toEqual({ trigger: t.name, observed: TRIGGER_EFFECTS[t.name]! })
      for (const event of t.events) {
        expect({ trigger: t.name, event, written: writes.some(w => w.statements.some(([sql]) => writing(sql).event === event)) }).toEqual({ trigger: t.name, event, written: true })
      }
    }
  })

  for (const w of WRITES) {
    test(w.what, async () => {
      const changes = { sqlite: {}, postgres: {} } as Record<'sqlite' | 'postgres', ReturnType<typeof change>>
      for (const side of ['sqlite', 'postgres'] as const) {
        const s = stores[side]!
        // a write a trigger refuses rolls its transaction back: the effect is the refusal alone
        const refused = await s.transaction(async tx => {
          for (const [sql, params] of w.statements) await tx.run(sql, params)
        }).then(() => false, (err: unknown) => /append-only/.test(String((err as Error)?.message ?? err)))
        const now = await readDerived(s)
        changes[side] = change(seen[side]!, now, refused)
        seen[side] = now
      }
      expect(changes.sqlite.effects).toEqual(w.effects)
      expect(changes.postgres).toEqual(changes.sqlite)
    })
  }
})

// ------------------------------------------------------------------ list items and change classes, note by note

/** Text that JSON must escape, or must leave alone. */
const AWKWARD = 'quote " backslash \\ newline \n tab \t cr \r bs \b ff \f ctrl \u0001\u001f del \u007f é 😀 \u2028 </script> ?'

/** Notes whose list item and change class both back ends must compute alike. */
const NOTES: Record<string, unknown>[] = [
  { id: 'n_plain' },
  { id: 'n_awkward', title: AWKWARD, summary: AWKWARD, language: 'fr', processing_stage: 'transcribing', status: 'Summarizing' },
  { id: 'n_pinned', is_pinned: 1, folder_id: 'fld_1', source: 'upload', type: 'audio', style_id: 'meeting' },
  { id: 'n_error', status: 'Error', error_code: 'engine_unavailable', error_message: 'no engine', processing_stage: 'transcribing' },
  // how long after creation it last changed, at and around each class's bound
  ...[0, -5 * SECOND, 1, 60 * SECOND - 1, 60 * SECOND, 60 * SECOND + 1, 600 * SECOND, 600 * SECOND + 1, 3600 * SECOND + 1,
    21_600 * SECOND, 21_600 * SECOND + 1, DAY, DAY + 1, 7 * DAY, 7 * DAY + 1, 30 * DAY, 30 * DAY + 1, 365 * DAY, 365 * DAY + 1, 4000 * DAY]
    .map((ms, i) => ({ id: `n_after_${String(i).padStart(2, '0')}`, updated_at: later(ms) })),
  { id: 'n_year_end', date_created: '2026-12-31T23:59:30.500Z', updated_at: '2027-01-01T00:00:30.500Z' },
  { id: 'n_year_end_past', date_created: '2026-12-31T23:59:30.500Z', updated_at: '2027-01-01T00:00:30.501Z' },
  { id: 'n_leap', date_created: '2028-02-28T12:00:00.000Z', updated_at: '2028-02-29T12:00:00.000Z' },
  { id: 'n_no_millis', date_created: '2026-11-10T12:00:00Z', updated_at: '2026-11-10T12:01:00.000Z' },
  { id: 'n_not_a_time', date_created: 'yesterday', updated_at: 'zzz' },
]

describe.skipIf(pgSkip !== null)('what the PostgreSQL triggers compute, note by note', () => {
  let sqlite: Database
  let db: PostgresStore

  beforeAll(async () => {
    sqlite = openDatabase(':memory:')
    db = new PostgresStore(await freshPostgresUrl())
    for (const s of [db, new SqliteStore(sqlite)]) {
      await seedLibrary(s, ['fld_1'])
      for (const n of NOTES) await s.run(INSERT_NOTE, noteRow(n))
    }
  })
  afterAll(async () => {
    await db?.close()
    sqlite?.close()
  })

  test('list_item is byte for byte SQLite\'s json_object, and changed_within its class, for every note', async () => {
    const mine = sqlite.query<{ id: string; list_item: string; changed_within: number }, []>('SELECT id, list_item, changed_within FROM notes ORDER BY id').all()
    const theirs = await db.all<{ id: string; list_item: string; changed_within: number }>('SELECT id, list_item, changed_within FROM notes ORDER BY id')
    expect(theirs).toEqual(mine)
    expect(mine.length).toBe(NOTES.length)
    // the classes, as the rule says: one per bound, 0 for "never", 9 past a year (and for a date that is none)
    expect(mine.filter(n => n.id.startsWith('n_after_')).map(n => n.changed_within)).toEqual([0, 0, 1, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9])
    expect(JSON.parse(mine.find(n => n.id === 'n_awkward')!.list_item).title).toBe(AWKWARD)
  })

  test('a change of any field changes the list item as SQLite does', async () => {
    const change = "UPDATE notes SET title = ?, folder_id = NULL, is_pinned = 0, updated_at = ? WHERE id = 'n_pinned'"
    sqlite.query(change).run('renamed "again"', later(90 * SECOND))
    await db.run(change, ['renamed "again"', later(90 * SECOND)])
    const read = 'SELECT list_item, changed_within FROM notes WHERE id = ?'
    expect(await db.get(read, ['n_pinned'])).toEqual(sqlite.query(read).get('n_pinned') as never)
  })

  test('every insert and update gives a new revision; the counter moves once per transaction that changes a note', async () => {
    const counter = async () => Number((await db.get<{ n: string }>('SELECT n FROM note_revision_counter'))!.n)
    const revision = async (id: string) => Number((await db.get<{ revision: string }>('SELECT revision FROM notes WHERE id = ?', [id]))?.revision)
    const before = await counter()
    const r0 = await revision('n_plain')
    await db.run("UPDATE notes SET summary = 's' WHERE id = 'n_plain'")
    const r1 = await revision('n_plain')
    expect(r1).toBeGreaterThan(r0)
    expect(await counter()).toBe(before + 1)

    await db.run("UPDATE notes SET summary = 's' WHERE id = 'no such note'")
    expect(await counter()).toBe(before + 1)

    // many rows in one transaction: one move, seen by others only at commit
    let release!: () => void
    const hold = new Promise<void>(r => (release = r))
    let changed!: () => void
    const didChange = new Promise<void>(r => (changed = r))
    const tx = db.transaction(async t => {
      await t.run("UPDATE notes SET summary = 'bulk' WHERE id LIKE 'n_after_%'")
      await t.run(INSERT_NOTE, noteRow({ id: 'n_new' }))
      changed()
      await hold
    })
    await didChange
    expect(await counter()).toBe(before + 1)
    release()
    await tx
    expect(await counter()).toBe(before + 2)
    expect(await revision('n_new')).toBeGreaterThan(r1)

    await db.run("DELETE FROM notes WHERE id = 'n_new'")
    expect(await counter()).toBe(before + 3)
  })
})
