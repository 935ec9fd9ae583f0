import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase, type Database } from '../../src/db/database'
import { migrateStore } from '../../src/db/migrate-store'
import { POSTGRES_MIGRATIONS } from '../../src/db/migrations-postgres'
import { PostgresStore } from '../../src/db/store'
import { sharedPostgres } from '../helpers/backends'
import { postgresUnavailable } from '../helpers/postgres'
import { compareFacts, postgresSchemaFacts, sqliteSchemaFacts, type DialectDifference } from './schema-facts'

/**
 * SQLite's schema and PostgreSQL's, each built by its own migrations, read live from each database and
 * compared: tables, columns in order (what each holds, nullability, DEFAULT, collation), CHECKs,
 * primary keys, unique constraints, foreign keys, indexes, triggers and PostgreSQL's functions and
 * sequences. Every difference must be one of DIALECT_DIFFERENCES. A difference planted on one side shows
 * the comparison failing, and what it says.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`schema parity tests skipped: ${pgSkip}`)

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
      + 'text is not: plain columns that notes_derive sets on every insert and update (compared in migrations-postgres.test.ts, byte for byte).',
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
      'column note_search.* type': '*',
      'column note_search.* null': '*',
      'column note_search.* collation': '*',
      'column note_search.* storage': '*',
      'column note_search.note_id references': 'notes.id on delete cascade on update no action',
      'index note_search_doc on': 'note_search (doc)',
      'index note_search_doc using': 'gin',
    },
    why: "Each back end's own (migrations 9 and 12): SQLite's FTS5 table (its shadow tables stand behind it), "
      + "PostgreSQL's table of tsvectors with a GIN index. SQLite's search reads the library, date and filters from "
      + 'notes; PostgreSQL\'s from copies in the search row. search.test.ts checks what each finds.',
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
      'trigger note_search_on_note fires': 'after insert or update of title,summary,folder_id,status,type on notes for each row execute function note_search_on_note()',
      'trigger note_search_on_body fires': 'after insert or update of original_transcription on note_bodies for each row execute function note_search_on_body()',
      'function note_search_on_note returns': 'trigger () in plpgsql',
      'function note_search_on_body returns': 'trigger () in plpgsql',
      'function note_search_refresh returns': 'void (note text) in sql',
      'function note_search_doc returns': 'tsvector (title text, summary text, transcript text) in plpgsql',
      'function note_search_text returns': 'text (t text) in sql',
    },
    why: 'a deletion reaches PostgreSQL\'s search row by its foreign key (cascade), and a change of folder, status or '
      + 'type is copied into it; SQLite reads those from notes.',
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
    reported: ['column notes.x: only on PostgreSQL (collation "default", null nullable, position after progress, type text)'],
  },
  {
    what: 'a column on SQLite only',
    sqlite: 'ALTER TABLE notes ADD COLUMN x TEXT',
    reported: ['column notes.x: only on SQLite (collation bytewise, null nullable, position after progress, type text)'],
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
    await migrateStore(pg, POSTGRES_MIGRATIONS)
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
