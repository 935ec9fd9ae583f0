/**
 * The numbered migrations of `migrations.ts`, written for PostgreSQL 15: the same versions, tables,
 * columns, constraints and indexes, ending in the same schema as SQLite's last migration. Never edit
 * one that has shipped: add the next number, here and in `migrations.ts` together.
 *
 * Where SQLite has something PostgreSQL lacks, the PostgreSQL way is used, and said where it is:
 * - Every TEXT column is `TEXT COLLATE "C"` (added by `bytewise` below): SQLite compares text byte by
 *   byte (BINARY), PostgreSQL by the database's locale unless told otherwise, and the repositories
 *   order and compare ids and ISO timestamps as strings.
 * - `COLLATE NOCASE` (ASCII case folding) is `lower(…)` of such a column: under "C", lower() folds
 *   ASCII letters only, as NOCASE does.
 * - Generated columns whose expressions PostgreSQL does not count as immutable (`list_item` builds
 *   JSON, `changed_within` does date arithmetic on text) are plain columns that a BEFORE INSERT OR
 *   UPDATE trigger computes; the revision counter of migration 5 is a sequence and a counter row.
 * - 0/1 flags stay INTEGER (the repositories compare them with 1 and 0); timestamps stay ISO text.
 *   INTEGER is 32 bits here and 64 in SQLite, so byte counts and revisions are BIGINT, and SQLite's
 *   REAL (8 bytes) is DOUBLE PRECISION (PostgreSQL's REAL has 4). Bun.SQL reads BIGINT as a string.
 * - Each migration runs in one transaction, under an advisory lock (`migrate-store.ts`).
 */
import type { Migration } from './migrate-store'
import { MIGRATIONS as SQLITE_MIGRATIONS } from './migrations'

/** `TEXT` → `TEXT COLLATE "C"`: byte order and comparison, as SQLite's BINARY collation. */
const bytewise = (sql: string) => sql.replace(/\bTEXT\b/g, 'TEXT COLLATE "C"')

/** A migration whose SQL is the same on PostgreSQL as on SQLite, taken from migrations.ts. */
function sameAsSqlite(version: number): Migration {
  const m = SQLITE_MIGRATIONS.find(x => x.version === version)
  if (!m) throw new Error(`migrations.ts has no version ${version}`)
  return m
}

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'accounts, keys, folders, notes, usage',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL,                     -- unique without regard to ASCII case: accounts_email
        plan TEXT NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro')),
        grant_period TEXT NOT NULL,              -- 'YYYY-MM' the grant counter belongs to
        grant_used INTEGER NOT NULL DEFAULT 0 CHECK (grant_used >= 0),
        purchased_credits INTEGER NOT NULL DEFAULT 0 CHECK (purchased_credits >= 0),
        created_at TEXT NOT NULL
      );
      -- SQLite's UNIQUE COLLATE NOCASE on the column
      CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT,
        start TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        scopes TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_account ON api_keys(account_id, created_at);

      CREATE TABLE folders (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        name TEXT NOT NULL,
        color TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      -- name COLLATE NOCASE in SQLite
      CREATE INDEX folders_by_name ON folders(account_id, sandbox, lower(name), id);

      CREATE TABLE notes (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        folder_id TEXT REFERENCES folders(id) ON DELETE SET NULL,
        title TEXT NOT NULL DEFAULT '',
        summary TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL CHECK (status IN ('Done', 'Summarizing', 'Error')),
        processing_stage TEXT,
        type TEXT NOT NULL,
        style_id TEXT NOT NULL DEFAULT 'note',
        language TEXT,
        is_pinned INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL DEFAULT 'api',
        error_code TEXT,
        error_message TEXT,
        date_created TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        -- The note as a list item, as JSON text: set by notes_derive on every insert and update (a
        -- generated column in SQLite; json building is not immutable in PostgreSQL).
        list_item TEXT
      );
      CREATE INDEX notes_newest ON notes(account_id, sandbox, date_created DESC, id DESC);
      CREATE INDEX notes_by_folder ON notes(account_id, sandbox, folder_id, date_created DESC, id DESC);
      CREATE INDEX notes_by_status ON notes(account_id, sandbox, status, date_created DESC, id DESC);
      CREATE INDEX notes_by_type ON notes(account_id, sandbox, type, date_created DESC, id DESC);
      CREATE INDEX notes_by_update ON notes(account_id, sandbox, updated_at);
      CREATE INDEX notes_folder ON notes(folder_id);

      -- A JSON string, or null: escaped as SQLite's json_object escapes it (\\" \\\\ \\b \\f \\n \\r \\t,
      -- other control characters as \\u00xx, everything else as it is).
      CREATE FUNCTION json_string_or_null(v text) RETURNS text LANGUAGE sql AS $$
        SELECT coalesce(to_json(v)::text, 'null')
      $$;
      -- Byte for byte what SQLite's json_object(...) of migration 1 gives: the same keys in the same
      -- order, no spaces, isPinned a boolean.
      CREATE FUNCTION note_list_item(n notes) RETURNS text LANGUAGE sql AS $$
        SELECT concat('{"id":', json_string_or_null(n.id), ',"title":', json_string_or_null(n.title),
          ',"summary":', json_string_or_null(n.summary), ',"status":', json_string_or_null(n.status),
          ',"processingStage":', json_string_or_null(n.processing_stage), ',"type":', json_string_or_null(n.type),
          ',"styleId":', json_string_or_null(n.style_id), ',"language":', json_string_or_null(n.language),
          ',"folderId":', json_string_or_null(n.folder_id),
          ',"isPinned":', CASE n.is_pinned WHEN 1 THEN 'true' ELSE 'false' END,
          ',"source":', json_string_or_null(n.source), ',"dateCreated":', json_string_or_null(n.date_created),
          ',"updatedAt":', json_string_or_null(n.updated_at), '}')
      $$;
      CREATE FUNCTION notes_derive() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.list_item := note_list_item(NEW);
        RETURN NEW;
      END $$;
      CREATE TRIGGER notes_derive BEFORE INSERT OR UPDATE ON notes FOR EACH ROW EXECUTE FUNCTION notes_derive();

      CREATE TABLE note_bodies (
        note_id TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        original_transcription TEXT NOT NULL DEFAULT '',
        structured_content TEXT                  -- JSON
      );

      CREATE TABLE usage (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        operation TEXT NOT NULL,
        credits INTEGER NOT NULL,                -- negative for refunds and top-ups
        grant_credits INTEGER NOT NULL DEFAULT 0,
        purchased_credits INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL CHECK (source IN ('api_key', 'oauth', 'mcp', 'cli')),
        note_id TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX usage_recent ON usage(account_id, created_at DESC, id DESC);

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'uploads and the durable job queue',
    sql: `
      CREATE TABLE uploads (
        note_id TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        storage_key TEXT NOT NULL,
        file_name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        declared_size BIGINT,                    -- bytes: up to 5 GiB, past 32 bits
        received_size BIGINT,
        received_at TEXT,
        completed_at TEXT,
        duration_seconds DOUBLE PRECISION,       -- SQLite's REAL is 8 bytes
        credits_charged INTEGER NOT NULL DEFAULT 0,
        usage_id TEXT,
        source TEXT NOT NULL DEFAULT 'api_key',
        created_at TEXT NOT NULL
      );

      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after TEXT NOT NULL,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX jobs_ready ON jobs(status, run_after, created_at);
      CREATE INDEX jobs_note ON jobs(note_id);

      ALTER TABLE usage ADD COLUMN refund_of TEXT REFERENCES usage(id);
      CREATE UNIQUE INDEX usage_refund_once ON usage(refund_of) WHERE refund_of IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: 'sign-in, sessions, OAuth clients, codes and tokens',
    sql: `
      ALTER TABLE accounts ADD COLUMN password_hash TEXT;
      ALTER TABLE accounts ADD COLUMN oidc_subject TEXT;
      CREATE UNIQUE INDEX accounts_oidc_subject ON accounts(oidc_subject) WHERE oidc_subject IS NOT NULL;

      CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        csrf_token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX sessions_account ON sessions(account_id);

      CREATE TABLE sign_in_failures (
        key TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE INDEX sign_in_failures_key ON sign_in_failures(key, at);

      CREATE TABLE oauth_clients (
        id TEXT PRIMARY KEY,
        secret_hash TEXT,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,             -- JSON array
        token_endpoint_auth_method TEXT NOT NULL,
        scope TEXT NOT NULL,
        created_at TEXT NOT NULL
      );

      CREATE TABLE oauth_codes (
        code_hash TEXT PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        redirect_uri TEXT NOT NULL,
        scope TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
      );

      CREATE TABLE oauth_tokens (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
        family_id TEXT NOT NULL,
        client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX oauth_tokens_family ON oauth_tokens(family_id);
    `,
  },
  {
    version: 4,
    name: 'list indexes for every filter combination; how long after creation a note last changed',
    sql: `
      CREATE INDEX notes_by_folder_status ON notes(account_id, sandbox, folder_id, status, date_created DESC, id DESC);
      CREATE INDEX notes_by_folder_type ON notes(account_id, sandbox, folder_id, type, date_created DESC, id DESC);
      CREATE INDEX notes_by_status_type ON notes(account_id, sandbox, status, type, date_created DESC, id DESC);
      CREATE INDEX notes_by_folder_status_type ON notes(account_id, sandbox, folder_id, status, type, date_created DESC, id DESC);

      UPDATE notes SET updated_at = date_created WHERE updated_at < date_created;

      -- The class of how long after its creation a note last changed (0 never, then within a minute,
      -- ten minutes, an hour, six hours, a day, a week, 30 days, a year, 9 later), as SQLite's
      -- generated column computes it: updated_at compared as text with date_created plus each bound,
      -- printed as strftime('%Y-%m-%dT%H:%M:%fZ') prints it (millisecond precision). A date_created
      -- that is not such a timestamp gives 9, as SQLite's strftime gives null. Set by notes_derive.
      ALTER TABLE notes ADD COLUMN changed_within INTEGER;
      CREATE FUNCTION note_changed_within(created text, updated text) RETURNS integer LANGUAGE plpgsql AS $$
      DECLARE
        at timestamp;
        bound integer;
        class integer := 0;
      BEGIN
        IF updated COLLATE "C" <= created COLLATE "C" THEN RETURN 0; END IF;
        IF created !~ '^\\d{4}-\\d\\d-\\d\\d[T ]\\d\\d:\\d\\d(:\\d\\d(\\.\\d+)?)?Z$' THEN RETURN 9; END IF;
        at := date_trunc('milliseconds', created::timestamp);
        FOREACH bound IN ARRAY ARRAY[60, 600, 3600, 21600, 86400, 604800, 2592000, 31536000] LOOP
          class := class + 1;
          IF updated COLLATE "C" <= to_char(at + make_interval(secs => bound), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') COLLATE "C" THEN
            RETURN class;
          END IF;
        END LOOP;
        RETURN 9;
      END $$;
      CREATE OR REPLACE FUNCTION notes_derive() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.list_item := note_list_item(NEW);
        NEW.changed_within := note_changed_within(NEW.date_created, NEW.updated_at);
        RETURN NEW;
      END $$;
      UPDATE notes SET changed_within = NULL;    -- computed by the trigger
      CREATE INDEX notes_changed_later ON notes(account_id, sandbox, changed_within, date_created DESC, id DESC) WHERE changed_within > 0;

      DROP INDEX notes_by_update;
    `,
  },
  {
    version: 5,
    name: 'note revisions: list pages validate remembered items from the index',
    sql: `
      -- Every insert or change of a note gives it a new revision, from a sequence (SQLite draws it from
      -- the counter row under its one write lock; here that would serialize every note write).
      ALTER TABLE notes ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;
      CREATE SEQUENCE note_revisions;
      CREATE OR REPLACE FUNCTION notes_derive() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.list_item := note_list_item(NEW);
        NEW.changed_within := note_changed_within(NEW.date_created, NEW.updated_at);
        NEW.revision := nextval('note_revisions');
        RETURN NEW;
      END $$;
      UPDATE notes SET revision = 0;             -- each gets its revision from the trigger

      -- The counter moves whenever any note is inserted, changed or deleted, so what is known about
      -- the order of the notes stays good until it moves; it is read as in SQLite (SELECT n FROM
      -- note_revision_counter). Sequence numbers are handed out in call order, not commit order, so
      -- they cannot tell a reader that something committed; the counter row commits with the change.
      -- It is moved once per transaction, at commit (a deferred constraint trigger), so its row lock
      -- is held only while committing and no transaction waits for it holding other locks.
      CREATE TABLE note_revision_counter (n BIGINT NOT NULL);
      INSERT INTO note_revision_counter (n) SELECT coalesce(max(revision), 0) FROM notes;
      CREATE FUNCTION note_revision_counter_move() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('notesvc.note_counter_moved', true) IS DISTINCT FROM 'yes' THEN
          UPDATE note_revision_counter SET n = n + 1;
          PERFORM set_config('notesvc.note_counter_moved', 'yes', true);
        END IF;
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER notes_revision_counter AFTER INSERT OR UPDATE OR DELETE ON notes
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION note_revision_counter_move();

      DROP INDEX notes_newest;
      DROP INDEX notes_by_folder;
      DROP INDEX notes_by_status;
      DROP INDEX notes_by_type;
      DROP INDEX notes_by_folder_status;
      DROP INDEX notes_by_folder_type;
      DROP INDEX notes_by_status_type;
      DROP INDEX notes_by_folder_status_type;
      CREATE INDEX notes_newest ON notes(account_id, sandbox, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_folder ON notes(account_id, sandbox, folder_id, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_status ON notes(account_id, sandbox, status, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_type ON notes(account_id, sandbox, type, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_folder_status ON notes(account_id, sandbox, folder_id, status, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_folder_type ON notes(account_id, sandbox, folder_id, type, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_status_type ON notes(account_id, sandbox, status, type, date_created DESC, id DESC, revision);
      CREATE INDEX notes_by_folder_status_type ON notes(account_id, sandbox, folder_id, status, type, date_created DESC, id DESC, revision);
    `,
  },
  {
    version: 6,
    name: 'job leases and the workers table',
    sql: `
      ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
      ALTER TABLE jobs ADD COLUMN lease_expires_at TEXT;
      UPDATE jobs SET status = 'queued' WHERE status = 'running';

      CREATE TABLE workers (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_namespace TEXT,
        slots INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL
      );
      CREATE INDEX workers_heartbeat ON workers(heartbeat_at);
    `,
  },
  {
    version: 7,
    name: 'rate-limit windows shared by the nodes of one database',
    sql: `
      -- One row per key (a credential, or a client address) and rate class: the start of its current
      -- 60-second window and the requests counted in it. PostgreSQL deployments count here, so every
      -- node sees every request; SQLite (one serving process per data folder) counts in memory and
      -- leaves the table empty. UNLOGGED: every counted request writes here, and a window is worth
      -- nothing after a crash (PostgreSQL empties unlogged tables then), so no WAL is written for it.
      CREATE UNLOGGED TABLE rate_windows (
        key TEXT NOT NULL,
        class TEXT NOT NULL,
        window_start TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (key, class)
      );
      CREATE INDEX rate_windows_start ON rate_windows(window_start);
    `,
  },
  {
    version: 8,
    name: 'transcription progress on notes',
    sql: `
      -- The share of the recording transcribed (0 to 1), written as chunks finish; NULL when unknown
      -- (before transcription starts, or when the recording's length cannot be read).
      ALTER TABLE notes ADD COLUMN progress DOUBLE PRECISION;
    `,
  },
  {
    version: 9,
    name: 'full-text search over title, summary and transcript',
    sql: `
      -- SQLite's FTS5 table is, here, one tsvector per note in its own table (the notes table, read by
      -- every list page, stays as narrow as it was) with a GIN index. The note's library and creation
      -- date, which never change, are copied beside it: a search without other filters ranks the
      -- matches of one library without reading a notes row for each. The 'simple' configuration:
      -- lower case, no stemming and no stop words, whatever the language, as FTS5's unicode61 (but it
      -- keeps accents: folding them needs the unaccent extension, which not every installation may
      -- create). Weights: title A, summary B, transcript C, for ts_rank_cd. Guillemets become single
      -- ones, as in SQLite's copy, so a « or » in a snippet is always a marker.
      CREATE TABLE note_search (
        note_id TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        sandbox INTEGER NOT NULL,
        date_created TEXT NOT NULL,
        doc tsvector NOT NULL
      );
      CREATE INDEX note_search_doc ON note_search USING gin (doc);
      -- A search ranks every match, so reads every matching row's tsvector: kept in the row (MAIN)
      -- while it fits in a page, not out of line (a TOAST lookup per match; measured 2-4x slower by
      -- bench/search.ts at 10,000 notes with 2,000-character transcripts).
      ALTER TABLE note_search ALTER COLUMN doc SET STORAGE MAIN;

      CREATE FUNCTION note_search_text(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT translate(coalesce(t, ''), '«»', '‹›')
      $$;
      -- A tsvector holds at most 1 MB: a text too large for one is indexed by its first 100,000
      -- characters of summary and transcript rather than refused (the note's write must not fail).
      CREATE FUNCTION note_search_doc(title text, summary text, transcript text) RETURNS tsvector LANGUAGE plpgsql IMMUTABLE AS $$
      BEGIN
        RETURN setweight(to_tsvector('simple', note_search_text(title)), 'A') || setweight(to_tsvector('simple', note_search_text(summary)), 'B')
          || setweight(to_tsvector('simple', note_search_text(transcript)), 'C');
      EXCEPTION WHEN program_limit_exceeded THEN
        RETURN setweight(to_tsvector('simple', note_search_text(title)), 'A') || setweight(to_tsvector('simple', note_search_text(left(summary, 100000))), 'B')
          || setweight(to_tsvector('simple', note_search_text(left(transcript, 100000))), 'C');
      END $$;
      CREATE FUNCTION note_search_refresh(note text) RETURNS void LANGUAGE sql AS $$
        INSERT INTO note_search (note_id, account_id, sandbox, date_created, doc)
          SELECT n.id, n.account_id, n.sandbox, n.date_created, note_search_doc(n.title, n.summary, coalesce(b.original_transcription, ''))
          FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = note
        ON CONFLICT (note_id) DO UPDATE SET doc = EXCLUDED.doc
      $$;

      -- Kept in step by triggers, in the transaction of every write of a note; a deletion cascades.
      CREATE FUNCTION note_search_on_note() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' OR NEW.title IS DISTINCT FROM OLD.title OR NEW.summary IS DISTINCT FROM OLD.summary THEN
          PERFORM note_search_refresh(NEW.id);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER note_search_on_note AFTER INSERT OR UPDATE OF title, summary ON notes
        FOR EACH ROW EXECUTE FUNCTION note_search_on_note();
      CREATE FUNCTION note_search_on_body() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' OR NEW.original_transcription IS DISTINCT FROM OLD.original_transcription THEN
          PERFORM note_search_refresh(NEW.note_id);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER note_search_on_body AFTER INSERT OR UPDATE OF original_transcription ON note_bodies
        FOR EACH ROW EXECUTE FUNCTION note_search_on_body();

      -- The notes an existing installation already has.
      INSERT INTO note_search (note_id, account_id, sandbox, date_created, doc)
        SELECT n.id, n.account_id, n.sandbox, n.date_created, note_search_doc(n.title, n.summary, coalesce(b.original_transcription, ''))
        FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id;
    `,
  },
  // The same text on both back ends (TEXT becomes TEXT COLLATE "C" below, as everywhere).
  sameAsSqlite(10),
  sameAsSqlite(11),
  {
    version: 12,
    name: 'search rows kept whole in their table page, with the filters a search reads (PostgreSQL)',
    sql: `
      -- A search of a common word reads the row of every note that has it: its tsvector (the match and
      -- ts_rank) and its note_id, account_id and date_created (the library and the order). A row over
      -- 2 KB (a note of a few minutes' speech) had those three short values moved out to the TOAST
      -- table, the tsvector being kept in the row (STORAGE MAIN): three TOAST index lookups a match,
      -- 28,900 page reads for a word in 9,564 of 10,000 notes, against 4,900 with the row whole
      -- (bench/search.ts: 26 ms against 12 ms). The short values now always stay in the row (PLAIN),
      -- and a row of up to 8 KB is left whole, neither compressed nor cut (larger tsvectors are still
      -- compressed, then moved out).
      ALTER TABLE note_search ALTER COLUMN note_id SET STORAGE PLAIN, ALTER COLUMN account_id SET STORAGE PLAIN,
        ALTER COLUMN date_created SET STORAGE PLAIN;
      ALTER TABLE note_search SET (toast_tuple_target = 8160);
      -- The rows already there are written again, with new values (an unchanged value moved out
      -- would stay out).
      UPDATE note_search SET note_id = note_id || '', account_id = account_id || '', date_created = date_created || '',
        doc = doc || ''::tsvector;

      -- A search with folderId, status or type kept only the matches whose note has them by reading
      -- the notes table for every match: the three are copied into the search row (as its library
      -- and date are), so the filter is read from the row the search reads anyway. They are kept in
      -- step by the note's trigger: a new note or a new title or summary indexes the note again; a
      -- change of folder (a folder's deletion included), status or type only copies the three.
      ALTER TABLE note_search ADD COLUMN folder_id TEXT, ADD COLUMN status TEXT, ADD COLUMN type TEXT;
      ALTER TABLE note_search ALTER COLUMN folder_id SET STORAGE PLAIN, ALTER COLUMN status SET STORAGE PLAIN,
        ALTER COLUMN type SET STORAGE PLAIN;
      UPDATE note_search s SET folder_id = n.folder_id, status = n.status, type = n.type FROM notes n WHERE n.id = s.note_id;
      ALTER TABLE note_search ALTER COLUMN status SET NOT NULL, ALTER COLUMN type SET NOT NULL;
      CREATE OR REPLACE FUNCTION note_search_refresh(note text) RETURNS void LANGUAGE sql AS $$
        INSERT INTO note_search (note_id, account_id, sandbox, date_created, folder_id, status, type, doc)
          SELECT n.id, n.account_id, n.sandbox, n.date_created, n.folder_id, n.status, n.type,
            note_search_doc(n.title, n.summary, coalesce(b.original_transcription, ''))
          FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = note
        ON CONFLICT (note_id) DO UPDATE SET doc = EXCLUDED.doc, folder_id = EXCLUDED.folder_id, status = EXCLUDED.status, type = EXCLUDED.type
      $$;
      CREATE OR REPLACE FUNCTION note_search_on_note() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' OR NEW.title IS DISTINCT FROM OLD.title OR NEW.summary IS DISTINCT FROM OLD.summary THEN
          PERFORM note_search_refresh(NEW.id);
        ELSIF NEW.folder_id IS DISTINCT FROM OLD.folder_id OR NEW.status IS DISTINCT FROM OLD.status OR NEW.type IS DISTINCT FROM OLD.type THEN
          UPDATE note_search SET folder_id = NEW.folder_id, status = NEW.status, type = NEW.type WHERE note_id = NEW.id;
        END IF;
        RETURN NULL;
      END $$;
      DROP TRIGGER note_search_on_note ON notes;
      CREATE TRIGGER note_search_on_note AFTER INSERT OR UPDATE OF title, summary, folder_id, status, type ON notes
        FOR EACH ROW EXECUTE FUNCTION note_search_on_note();
    `,
  },
  {
    version: 13,
    name: 'one leased queue: takeovers counted on jobs, the webhook outbox leased as jobs are',
    sql: `
      -- As migrations.ts: the job queue and the webhook outbox are one leased queue (src/jobs/queue.ts).
      ALTER TABLE jobs ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;

      -- The outbox takes the queue's states and lease; the table is changed in place (SQLite rebuilds it).
      ALTER TABLE webhook_outbox DROP CONSTRAINT webhook_outbox_status_check;
      UPDATE webhook_outbox SET status = CASE status WHEN 'pending' THEN 'queued' WHEN 'delivered' THEN 'done' ELSE status END, lease_owner = NULL;
      ALTER TABLE webhook_outbox ADD CONSTRAINT webhook_outbox_status_check CHECK (status IN ('queued', 'running', 'done', 'failed'));
      ALTER TABLE webhook_outbox ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0, ADD COLUMN last_error TEXT, ADD COLUMN lease_expires_at TEXT;
      DROP INDEX webhook_outbox_due;
      CREATE INDEX webhook_outbox_ready ON webhook_outbox(status, run_after, created_at);
    `,
  },
  {
    version: 14,
    name: 'speakers: who said what in a note, names, voice profiles, the submitter\'s count hint',
    sql: `
      -- How many people the submitter says speak ({"exact":2} or {"min":2,"max":4}, JSON), read by
      -- the pipeline's diarization; null: let the engine tell.
      ALTER TABLE uploads ADD COLUMN speakers_hint TEXT;

      -- A voice named once, recognised in later recordings of the same library: the engine's voice
      -- print (a JSON array of numbers, unit length) under the name given. Prints of different engines
      -- are not comparable, so the engine is part of the key.
      CREATE TABLE speaker_profiles (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        name TEXT NOT NULL,
        engine TEXT NOT NULL,
        embedding TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX speaker_profiles_by_name ON speaker_profiles(account_id, sandbox, engine, name);

      -- The speakers of a note: the label its transcript segments carry ("A", "B", … in order of first
      -- speech), the name given (null: shown as "Speaker A"), what they said (for search by speaker),
      -- their voice print and the profile that named them.
      CREATE TABLE note_speakers (
        note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        label TEXT NOT NULL,
        name TEXT,
        said TEXT NOT NULL DEFAULT '',
        engine TEXT,
        embedding TEXT,
        profile_id TEXT REFERENCES speaker_profiles(id) ON DELETE SET NULL,
        PRIMARY KEY (note_id, label)
      );
      CREATE INDEX note_speakers_profile ON note_speakers(profile_id);
    `,
  },
  {
    version: 15,
    name: 'audit log: who did what to which data, when and from where',
    sql: `
      -- An append-only record of security- and privacy-relevant events (src/modules/audit). No foreign
      -- key to accounts: the record of an account outlives the account (its deletion is itself an
      -- event). account_id is null for events of no known account (a failed sign-in for an unknown
      -- email). actor_type: user (a person in the browser), key (an API key), oauth (an OAuth client's
      -- token), sso (a sign-in through the identity provider), policy (the retention sweep), operator
      -- (the CLI). details: a JSON object of ids and settings; never a secret or transcript text.
      CREATE TABLE audit_events (
        id TEXT PRIMARY KEY,
        at TEXT NOT NULL,
        account_id TEXT,
        actor_type TEXT NOT NULL,
        actor_id TEXT,
        action TEXT NOT NULL,
        target_type TEXT,
        target_id TEXT,
        ip TEXT,
        user_agent TEXT,
        details TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_events_by_account ON audit_events(account_id, at, id);
      CREATE INDEX audit_events_by_time ON audit_events(at);
    `,
  },
  {
    version: 16,
    name: 'retention: the accounts\' own policies, the mark of media removed by it, the sweep\'s leased row',
    sql: `
      -- An account's own retention policy (src/modules/retention), overriding the instance default
      -- (NOTESVC_RETENTION_MODE, NOTESVC_RETENTION_DAYS); no row: the instance default. mode: forever
      -- (keep everything), media (delete the recording after days), notes (delete whole notes after days).
      CREATE TABLE retention_policies (
        account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        mode TEXT NOT NULL CHECK (mode IN ('forever', 'media', 'notes')),
        days INTEGER CHECK (days >= 1),
        updated_at TEXT NOT NULL
      );
      -- When the retention sweep removed the note's recording (its transcript and summary are kept).
      ALTER TABLE notes ADD COLUMN media_removed_at TEXT;
      -- Work that recurs on a schedule (the retention sweep: id 'retention_sweep'), one run at a time
      -- across every node: a row of the leased queue (src/jobs/queue.ts), put back in the queue due at
      -- its next run when a run ends.
      CREATE TABLE recurring_jobs (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        takeovers INTEGER NOT NULL DEFAULT 0,
        run_after TEXT NOT NULL,
        last_error TEXT,
        lease_owner TEXT,
        lease_expires_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 17,
    name: 'audit log append-only: an event is never changed',
    sql: `
      -- The audit log is appended to, never edited (src/modules/audit): an UPDATE of an event is refused
      -- by the database itself, whatever code sends it. DELETE stays possible for the log's own
      -- retention (services.audit.prune), which removes whole events by age.
      CREATE FUNCTION audit_events_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: an event is never changed' USING ERRCODE = 'restrict_violation';
      END $$;
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_update();
    `,
  },
  {
    version: 18,
    name: 'single sign-on: accounts linked to the identity provider by issuer and subject',
    sql: `
      -- An account's link to a person at the OpenID Connect provider (src/modules/sso): found by
      -- (issuer, subject) at every sign-in, so an email changed at the provider keeps its account.
      -- One subject per account and issuer: a second person with the account's email is refused.
      -- email: what the provider said at the last sign-in (shown to the operator, never a key).
      CREATE TABLE sso_identities (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        email TEXT,
        created_at TEXT NOT NULL,
        last_signin_at TEXT NOT NULL,
        PRIMARY KEY (issuer, subject)
      );
      CREATE UNIQUE INDEX sso_identities_account ON sso_identities(account_id, issuer);
    `,
  },
  {
    version: 19,
    name: 'audit log: reads counted in one row per slot, writes still never changed',
    sql: `
      -- Reads (a transcript exported, a recording played, the log exported) are counted rather than
      -- repeated (src/modules/audit): one row per account, actor, action, target and client address in
      -- each 10-minute slot of the clock, named by read_key (unique; null for every other event), whose
      -- count grows by one with each further read of the slot and last_at with the latest. Every other
      -- event keeps count 1 and is never changed. The function of migration 17 is replaced by one that
      -- allows exactly that growth of a read's row and refuses any other UPDATE (the trigger calls it).
      ALTER TABLE audit_events ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE audit_events ADD COLUMN last_at TEXT;
      ALTER TABLE audit_events ADD COLUMN read_key TEXT;
      CREATE UNIQUE INDEX audit_events_read_key ON audit_events(read_key);
      CREATE OR REPLACE FUNCTION audit_events_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.read_key IS NOT NULL AND OLD.action IN ('note.transcript_exported', 'note.media_read', 'audit.exported')
          AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.at IS NOT DISTINCT FROM OLD.at AND NEW.account_id IS NOT DISTINCT FROM OLD.account_id
          AND NEW.actor_type IS NOT DISTINCT FROM OLD.actor_type AND NEW.actor_id IS NOT DISTINCT FROM OLD.actor_id AND NEW.action IS NOT DISTINCT FROM OLD.action
          AND NEW.target_type IS NOT DISTINCT FROM OLD.target_type AND NEW.target_id IS NOT DISTINCT FROM OLD.target_id AND NEW.ip IS NOT DISTINCT FROM OLD.ip
          AND NEW.user_agent IS NOT DISTINCT FROM OLD.user_agent AND NEW.details IS NOT DISTINCT FROM OLD.details AND NEW.read_key IS NOT DISTINCT FROM OLD.read_key
          AND NEW.count > OLD.count AND NEW.last_at >= COALESCE(OLD.last_at, OLD.at) THEN
          RETURN NEW;
        END IF;
        RAISE EXCEPTION 'audit_events is append-only: an event is never changed (only a read''s count and last time grow)' USING ERRCODE = 'restrict_violation';
      END $$;
    `,
  },
  {
    version: 20,
    name: 'jobs: the stage a job reached, and what its kind needs beyond the note',
    sql: `
      -- A job kind is a chain of stages (src/jobs/kinds.ts): the upload's transcription, then its
      -- summary. stage: the one a run starts at, written with the result of the stage before it (null:
      -- the first). payload: what the kind's stages need beyond the note, as JSON (a summary made again
      -- in another style names the style); null for the upload jobs.
      ALTER TABLE jobs ADD COLUMN stage TEXT;
      ALTER TABLE jobs ADD COLUMN payload TEXT;
    `,
  },
  {
    version: 21,
    name: 'notes: whether the summary predates a change of the transcript',
    sql: `
      -- summary_stale: 1 once the transcript changes after the summary was made (a segment given to
      -- another speaker; later, an edit of its words), so the note can say "the transcript changed after
      -- this summary"; back to 0 when a summary is made again (docs/decisions.md "Summarize again").
      ALTER TABLE notes ADD COLUMN summary_stale INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 22,
    name: 'notes: the transcript\'s version, and its revisions',
    sql: `
      -- transcript_version: how many times a person changed the transcript (0: as transcribed); the
      -- ETag of the note and its transcript, compared with If-Match. Every edit raises it by one, first
      -- thing in its transaction, so two edits of one note take turns (the row's lock).
      ALTER TABLE notes ADD COLUMN transcript_version INTEGER NOT NULL DEFAULT 0;
      -- One row per version of a transcript a person changed: the transcript at that version (JSON of
      -- its text, segments and speakers), who made it (the audit log's actor) and by which operation.
      -- Version 0 is the transcript as it was before the first edit (operation 'transcribed').
      CREATE TABLE transcript_revisions (
        note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        actor_type TEXT,
        actor_id TEXT,
        operation TEXT NOT NULL,
        created_at TEXT NOT NULL,
        transcript TEXT NOT NULL,
        PRIMARY KEY (note_id, version)
      );
    `,
  },
  {
    version: 23,
    name: 'speakers: a remembered voice suggested, not applied',
    sql: `
      -- A remembered voice that matches a speaker of a new recording is offered, never applied: the
      -- voice (null once forgotten: the suggestion goes with it), the name it had then and how alike the
      -- prints were. A person confirms (the name applied) or dismisses it; either clears it.
      ALTER TABLE note_speakers ADD COLUMN suggested_profile_id TEXT REFERENCES speaker_profiles(id) ON DELETE SET NULL;
      ALTER TABLE note_speakers ADD COLUMN suggested_name TEXT;
      ALTER TABLE note_speakers ADD COLUMN suggested_similarity DOUBLE PRECISION;
      CREATE INDEX note_speakers_suggested ON note_speakers(suggested_profile_id);
    `,
  },
  {
    version: 24,
    name: 'notes: whether the title is one the service made',
    sql: `
      -- title_generated: 1 while the note's title is one notesvc made (an upload's file name, then its
      -- summary's title), made again with the summary (POST /v1/notes/{id}/summaries); 0 once a person
      -- gave it (a note created from text, PATCH /v1/notes/{id} with a title), never changed by notesvc
      -- after. Notes made before are 0: which of their titles a person typed is not known, and a
      -- person's title is never replaced.
      ALTER TABLE notes ADD COLUMN title_generated INTEGER NOT NULL DEFAULT 0 CHECK (title_generated IN (0, 1));
    `,
  },
  {
    version: 25,
    name: 'transcript revisions: the version a restore brought back',
    sql: `
      -- restored_from: for a revision made by restoring an earlier version, that version (null for any
      -- other edit): the browser's undo and redo are restores, and tell them from one another by it
      -- across reloads and browsers (docs/decisions.md "Correcting a transcript in the browser").
      ALTER TABLE transcript_revisions ADD COLUMN restored_from INTEGER;
    `,
  },
  {
    version: 26,
    name: 'transcript revisions kept as changes',
    sql: `
      -- As in migrations.ts: a revision keeps the transcript whole (a snapshot) or what its edit
      -- changed (changes), never both; the rows already kept are snapshots.
      ALTER TABLE transcript_revisions ALTER COLUMN transcript DROP NOT NULL;
      ALTER TABLE transcript_revisions ADD COLUMN changes TEXT;
      ALTER TABLE transcript_revisions ADD CHECK ((transcript IS NULL) <> (changes IS NULL));
      -- An edit writes the note's segments (1.6 MB of JSON for two hours) again; pglz, the default,
      -- compressed them in about 25 ms of the edit's 50 ms of writing, lz4 several times faster
      -- (bench/edit-patch.ts). Values written from now on; a server built without lz4 keeps pglz.
      DO $$ BEGIN
        ALTER TABLE note_bodies ALTER COLUMN transcript_segments SET COMPRESSION lz4;
        ALTER TABLE transcript_revisions ALTER COLUMN transcript SET COMPRESSION lz4;
      EXCEPTION WHEN feature_not_supported THEN NULL;
      END $$;
    `,
  },
  {
    version: 27,
    name: 'live streams',
    sql: `
      -- As in migrations.ts: a live stream's state (its audio is in the media storage as parts).
      CREATE TABLE live_streams (
        id TEXT PRIMARY KEY,
        note_id TEXT NOT NULL,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        source TEXT NOT NULL,
        credential_id TEXT,
        resume_token_hash TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL CHECK (state IN ('open', 'detached', 'finishing', 'finished')),
        sample_rate INTEGER NOT NULL,
        kept_bytes BIGINT NOT NULL DEFAULT 0,
        parts INTEGER NOT NULL DEFAULT 0,
        runs TEXT NOT NULL,
        charged_minutes INTEGER NOT NULL DEFAULT 0,
        credits_charged INTEGER NOT NULL DEFAULT 0,
        generation INTEGER NOT NULL DEFAULT 0,
        node TEXT,
        heartbeat_at TEXT NOT NULL,
        detached_at TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        end_reason TEXT
      );
      CREATE INDEX live_streams_by_state ON live_streams (state, heartbeat_at);
      CREATE INDEX live_streams_by_account ON live_streams (account_id, state);
    `,
  },
  // As in migrations.ts: tags, note_tags and the note's tags as JSON.
  sameAsSqlite(28),
  // As in migrations.ts: share links (note_shares).
  sameAsSqlite(29),
  {
    version: 30,
    name: 'search rows: the library, order and filters of each indexed note in a narrow table (SQLite)',
    sql: `
      -- SQLite only: its search now reads a note's library, date, id, folder, status and type from a
      -- narrow table, as this search reads them from its note_search row since migration 12. Nothing
      -- changes here (the version is kept in step with SQLite's, so a database copies between them).
      SELECT 1;
    `,
  },
  {
    version: 31,
    name: 'search rows: the title on its own, indexed, so a search finds the notes titled with its words first (PostgreSQL)',
    sql: `
      -- A search orders the notes whose title holds every word first, then by ts_rank (docs/decisions.md
      -- "Notes titled with the words first"). A word in nearly every note (10,000 notes) was matched and
      -- ranked in every row, each a 3 KB tsvector read: 25 ms a page. Those titled with it are a few
      -- hundred, found through this index: when they fill the page, the other matches are never read.
      ALTER TABLE note_search ADD COLUMN head tsvector;
      CREATE OR REPLACE FUNCTION note_search_refresh(note text) RETURNS void LANGUAGE sql AS $$
        INSERT INTO note_search (note_id, account_id, sandbox, date_created, folder_id, status, type, head, doc)
          SELECT n.id, n.account_id, n.sandbox, n.date_created, n.folder_id, n.status, n.type,
            to_tsvector('simple', note_search_text(n.title)), note_search_doc(n.title, n.summary, coalesce(b.original_transcription, ''))
          FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = note
        ON CONFLICT (note_id) DO UPDATE SET head = EXCLUDED.head, doc = EXCLUDED.doc, folder_id = EXCLUDED.folder_id, status = EXCLUDED.status, type = EXCLUDED.type
      $$;
      UPDATE note_search s SET head = to_tsvector('simple', note_search_text(n.title)) FROM notes n WHERE n.id = s.note_id;
      ALTER TABLE note_search ALTER COLUMN head SET NOT NULL;
      CREATE INDEX note_search_head ON note_search USING gin (head);
    `,
  },
  {
    ...sameAsSqlite(32),
    sql: sameAsSqlite(32).sql + `
      -- PostgreSQL's search rows copy the note's library (note_search.account_id, sandbox): a note moved
      -- to another workspace must leave the old one's search. (SQLite's search_keys trigger fires on
      -- account_id and sandbox since migration 30.)
      CREATE OR REPLACE FUNCTION note_search_on_note() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' OR NEW.title IS DISTINCT FROM OLD.title OR NEW.summary IS DISTINCT FROM OLD.summary THEN
          PERFORM note_search_refresh(NEW.id);
        END IF;
        IF TG_OP = 'UPDATE' AND (NEW.account_id IS DISTINCT FROM OLD.account_id OR NEW.sandbox IS DISTINCT FROM OLD.sandbox
            OR NEW.folder_id IS DISTINCT FROM OLD.folder_id OR NEW.status IS DISTINCT FROM OLD.status OR NEW.type IS DISTINCT FROM OLD.type) THEN
          UPDATE note_search SET account_id = NEW.account_id, sandbox = NEW.sandbox, folder_id = NEW.folder_id, status = NEW.status, type = NEW.type
            WHERE note_id = NEW.id;
        END IF;
        RETURN NULL;
      END $$;
      DROP TRIGGER note_search_on_note ON notes;
      CREATE TRIGGER note_search_on_note AFTER INSERT OR UPDATE OF account_id, sandbox, title, summary, folder_id, status, type ON notes
        FOR EACH ROW EXECUTE FUNCTION note_search_on_note();
    `,
  },
  {
    version: 33,
    name: 'search rows: the library and the list filters indexed, so a filtered search reads only the rows it keeps (PostgreSQL)',
    sql: `
      -- A search with status, type or folder read every row holding the word through the GIN index, each
      -- a tsvector checked again, and dropped most of them for the filter (word 100 of bench/search.ts's zipf
      -- library with status and type: 5,482 rows read for 1,089 kept, 13 ms). With the filters' own index
      -- PostgreSQL ANDs the two bitmaps and reads only the rows in both (7 ms).
      CREATE INDEX note_search_filters ON note_search (account_id, sandbox, status, type, folder_id);
    `,
  },
  sameAsSqlite(34),
  {
    version: 35,
    name: 'search rows: the second each note was made, so one number orders a search (PostgreSQL)',
    sql: `
      -- A search sorts its matches by one bigint, the note titled with the words or not, its rank and the
      -- second it was made (docs/decisions.md "One number orders a search on PostgreSQL"), then by date
      -- and id only where two share it: sorted by titled-or-not, rank, date and id, most comparisons of a
      -- common word's matches (110 ranks among 9,815) went on to the date. The second is kept here, read
      -- off date_created (an ISO 8601 time in UTC) once.
      ALTER TABLE note_search ADD COLUMN created_s BIGINT;
      UPDATE note_search SET created_s = floor(extract(epoch FROM date_created::timestamptz));
      ALTER TABLE note_search ALTER COLUMN created_s SET NOT NULL;
      CREATE OR REPLACE FUNCTION note_search_refresh(note text) RETURNS void LANGUAGE sql AS $$
        INSERT INTO note_search (note_id, account_id, sandbox, date_created, created_s, folder_id, status, type, head, doc)
          SELECT n.id, n.account_id, n.sandbox, n.date_created, floor(extract(epoch FROM n.date_created::timestamptz)), n.folder_id, n.status, n.type,
            to_tsvector('simple', note_search_text(n.title)), note_search_doc(n.title, n.summary, coalesce(b.original_transcription, ''))
          FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = note
        ON CONFLICT (note_id) DO UPDATE SET head = EXCLUDED.head, doc = EXCLUDED.doc, folder_id = EXCLUDED.folder_id, status = EXCLUDED.status, type = EXCLUDED.type
      $$;
    `,
  },
  {
    version: 36,
    name: 'search rows found by the second each note was made, for deep pages of results (PostgreSQL)',
    sql: `
      -- A deep page of search results sorts every match's place alone, cuts its page's places from
      -- them, then finds the matches holding those places by the second in each place's low 32 bits
      -- (repo.postgres.ts deepPage; docs/decisions.md "A deep page sorts the places alone"): this
      -- index, on the expression as the place holds it, finds them without reading the other matches.
      CREATE INDEX note_search_second ON note_search (account_id, sandbox, (least(created_s, 4294967295) & 4294967295));
    `,
  },
]

let postgres: Migration[] | undefined

/** The migrations as PostgreSQL runs them (every TEXT column bytewise), made on first use: a SQLite start never needs them. */
export const postgresMigrations = (): Migration[] => (postgres ??= MIGRATIONS.map(m => ({ ...m, sql: bytewise(m.sql) })))
