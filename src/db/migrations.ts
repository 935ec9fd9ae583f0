/** The table migrate() records the applied migrations in (database.ts; the image of a new database, sqlite-snapshot.ts). */
export const SCHEMA_MIGRATIONS_TABLE = 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)'

/**
 * Numbered migrations, applied in order at start-up inside one transaction each.
 * Never edit a migration that has shipped: add the next number.
 */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, keys, folders, notes, usage',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        plan TEXT NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro')),
        grant_period TEXT NOT NULL,              -- 'YYYY-MM' the grant counter belongs to
        grant_used INTEGER NOT NULL DEFAULT 0 CHECK (grant_used >= 0),
        purchased_credits INTEGER NOT NULL DEFAULT 0 CHECK (purchased_credits >= 0),
        created_at TEXT NOT NULL
      );

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT,
        start TEXT NOT NULL,                     -- the first characters, for people to recognise it
        hash TEXT NOT NULL UNIQUE,               -- SHA-256 of the whole key; the key itself is never stored
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        scopes TEXT NOT NULL,                    -- space-separated
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
      CREATE INDEX folders_by_name ON folders(account_id, sandbox, name COLLATE NOCASE, id);

      -- A note's small fields, which lists read; its bulky text lives in note_bodies so a page of
      -- 50 list items reads 50 short rows, however long the recordings were.
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
        -- The note as a list item (every Note field but the transcript and structured content), as JSON,
        -- kept by SQLite itself on every write: a page of the list is 50 stored strings joined, with no
        -- per-column work on the read path.
        list_item TEXT GENERATED ALWAYS AS (json_object(
          'id', id, 'title', title, 'summary', summary, 'status', status, 'processingStage', processing_stage,
          'type', type, 'styleId', style_id, 'language', language, 'folderId', folder_id,
          'isPinned', json(CASE is_pinned WHEN 1 THEN 'true' ELSE 'false' END), 'source', source,
          'dateCreated', date_created, 'updatedAt', updated_at)) STORED
      );
      -- Listing is newest first, ties by id, within one library; each filter has its own ordered index
      -- so a page is read straight off an index whatever the library's size.
      CREATE INDEX notes_newest ON notes(account_id, sandbox, date_created DESC, id DESC);
      CREATE INDEX notes_by_folder ON notes(account_id, sandbox, folder_id, date_created DESC, id DESC);
      CREATE INDEX notes_by_status ON notes(account_id, sandbox, status, date_created DESC, id DESC);
      CREATE INDEX notes_by_type ON notes(account_id, sandbox, type, date_created DESC, id DESC);
      CREATE INDEX notes_by_update ON notes(account_id, sandbox, updated_at);
      CREATE INDEX notes_folder ON notes(folder_id);

      CREATE TABLE note_bodies (
        note_id TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        original_transcription TEXT NOT NULL DEFAULT '',
        structured_content TEXT                  -- JSON
      );

      CREATE TABLE usage (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        operation TEXT NOT NULL,
        credits INTEGER NOT NULL,                -- negative for refunds
        grant_credits INTEGER NOT NULL DEFAULT 0,
        purchased_credits INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL CHECK (source IN ('api_key', 'oauth', 'mcp', 'cli')),
        note_id TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX usage_recent ON usage(account_id, created_at DESC, id DESC);

      -- Instance-wide values such as the secret that signs upload URLs.
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
      -- One row per upload: where the file goes, what was declared, and whether it was completed.
      CREATE TABLE uploads (
        note_id TEXT PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        storage_key TEXT NOT NULL,
        file_name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        declared_size INTEGER,
        received_size INTEGER,
        received_at TEXT,
        completed_at TEXT,
        duration_seconds REAL,
        credits_charged INTEGER NOT NULL DEFAULT 0,
        usage_id TEXT,
        source TEXT NOT NULL DEFAULT 'api_key',
        created_at TEXT NOT NULL
      );

      -- Background work. A job is claimed by setting status 'running'; a process that dies leaves it
      -- 'running', and start-up puts it back in the queue.
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

      -- A refund is a usage row of negative credits pointing at the charge it gives back, at most once.
      ALTER TABLE usage ADD COLUMN refund_of TEXT REFERENCES usage(id);
      CREATE UNIQUE INDEX usage_refund_once ON usage(refund_of) WHERE refund_of IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: 'sign-in, sessions, OAuth clients, codes and tokens',
    sql: `
      -- Bun.password (argon2id) hash; null until a password is set (keys work without one).
      ALTER TABLE accounts ADD COLUMN password_hash TEXT;
      -- The subject of the external OpenID Connect provider, for accounts that sign in through it.
      ALTER TABLE accounts ADD COLUMN oidc_subject TEXT;
      CREATE UNIQUE INDEX accounts_oidc_subject ON accounts(oidc_subject) WHERE oidc_subject IS NOT NULL;

      -- Browser sessions: only the SHA-256 of the cookie value is stored.
      CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        csrf_token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX sessions_account ON sessions(account_id);

      -- Failed sign-ins, for brute-force limits (per email and per client address).
      CREATE TABLE sign_in_failures (
        key TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE INDEX sign_in_failures_key ON sign_in_failures(key, at);

      CREATE TABLE oauth_clients (
        id TEXT PRIMARY KEY,                     -- cli_…
        secret_hash TEXT,                        -- null for public clients
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,             -- JSON array, matched exactly
        token_endpoint_auth_method TEXT NOT NULL,
        scope TEXT NOT NULL,                     -- the scopes it may ask for, space-separated
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

      -- Access and refresh tokens, stored as SHA-256. A refresh token's family is every token issued
      -- from one authorization; reusing a rotated refresh token revokes the whole family.
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
        used_at TEXT,                            -- refresh: when it was exchanged (rotated)
        revoked_at TEXT
      );
      CREATE INDEX oauth_tokens_family ON oauth_tokens(family_id);
    `,
  },
  {
    version: 4,
    name: 'list indexes for every filter combination; how long after creation a note last changed',
    sql: `
      -- Every combination of listNotes' equality filters (folder, status, type) has an index in list
      -- order, so any page is read straight off one index (1, 2 and the no-filter index exist already).
      CREATE INDEX notes_by_folder_status ON notes(account_id, sandbox, folder_id, status, date_created DESC, id DESC);
      CREATE INDEX notes_by_folder_type ON notes(account_id, sandbox, folder_id, type, date_created DESC, id DESC);
      CREATE INDEX notes_by_status_type ON notes(account_id, sandbox, status, type, date_created DESC, id DESC);
      CREATE INDEX notes_by_folder_status_type ON notes(account_id, sandbox, folder_id, status, type, date_created DESC, id DESC);

      -- A note is never updated before it was created (the repository keeps it so; a clock that once
      -- stepped back is repaired here). listNotes?updatedAfter=T relies on it: every note created after
      -- T was updated after T.
      UPDATE notes SET updated_at = date_created WHERE updated_at < date_created;

      -- How long after its creation a note last changed, in classes: 0 never, then within a minute,
      -- ten minutes, an hour, six hours, a day, a week, 30 days, a year, and 9 later. A note created at
      -- or before T and changed after T has a class c whose bound reaches past T, so it is found by
      -- looking back from T by that bound in each class: work in proportion to such notes, not to the
      -- library.
      ALTER TABLE notes ADD COLUMN changed_within INTEGER GENERATED ALWAYS AS (CASE
        WHEN updated_at <= date_created THEN 0
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+60 seconds') THEN 1
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+600 seconds') THEN 2
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+3600 seconds') THEN 3
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+21600 seconds') THEN 4
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+1 days') THEN 5
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+7 days') THEN 6
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+30 days') THEN 7
        WHEN updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', date_created, '+365 days') THEN 8
        ELSE 9 END) VIRTUAL;
      CREATE INDEX notes_changed_later ON notes(account_id, sandbox, changed_within, date_created DESC, id DESC) WHERE changed_within > 0;

      -- Replaced by the two above: updatedAfter no longer sorts every note updated since T.
      DROP INDEX notes_by_update;
    `,
  },
  {
    version: 5,
    name: 'note revisions: list pages validate remembered items from the index',
    sql: `
      -- Every insert or change of a note gives it a new revision, drawn from one counter, so a
      -- (rowid, revision) pair names one state of one note for good, even when SQLite hands a deleted
      -- note's rowid to a new one. The list indexes carry the revision: a page's keys and revisions
      -- come from the index alone, and a list item remembered in memory is used only while its
      -- revision is still the one in the index.
      ALTER TABLE notes ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      UPDATE notes SET revision = rowid;
      CREATE TABLE note_revision_counter (n INTEGER NOT NULL);
      INSERT INTO note_revision_counter (n) SELECT coalesce(max(rowid), 0) FROM notes;
      CREATE TRIGGER notes_revision_on_insert AFTER INSERT ON notes BEGIN
        UPDATE note_revision_counter SET n = n + 1;
        UPDATE notes SET revision = (SELECT n FROM note_revision_counter) WHERE rowid = NEW.rowid;
      END;
      -- any change at all, also one the repository does not make (a folder's deletion setting
      -- folder_id to NULL, another program's UPDATE)
      CREATE TRIGGER notes_revision_on_update AFTER UPDATE ON notes WHEN NEW.revision = OLD.revision BEGIN
        UPDATE note_revision_counter SET n = n + 1;
        UPDATE notes SET revision = (SELECT n FROM note_revision_counter) WHERE rowid = NEW.rowid;
      END;
      -- and a deletion moves the counter too: it changes whenever any note does, so what is known
      -- about the order of the notes (page boundaries, list pages) stays good until it moves
      CREATE TRIGGER notes_revision_on_delete AFTER DELETE ON notes BEGIN
        UPDATE note_revision_counter SET n = n + 1;
      END;

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
      -- A running job is held by one worker process (lease_owner, a workers.id) until lease_expires_at;
      -- the worker's heartbeats push that forward. An expired lease may be claimed by any worker. Every
      -- claim adds one to attempts, so (lease_owner, attempts) names one run of the job: a write at the
      -- end of a run happens only while the row still names that run (fencing).
      ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
      ALTER TABLE jobs ADD COLUMN lease_expires_at TEXT;
      -- Jobs a process of an earlier version left running hold no lease: back in the queue, as that
      -- version's start-up would have done.
      UPDATE jobs SET status = 'queued' WHERE status = 'running';
      -- (Running jobs are found through jobs_ready's status prefix: at most one per worker slot.)

      -- One row per process that runs job workers (serve with NOTESVC_WORKERS above 0, or worker),
      -- kept fresh by its heartbeat. A pid means something only on its host and in its pid namespace
      -- (containers), so both are kept beside it.
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
      -- leaves the table empty.
      CREATE TABLE rate_windows (
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
      ALTER TABLE notes ADD COLUMN progress REAL;
    `,
  },
  {
    version: 9,
    name: 'full-text search over title, summary and transcript',
    sql: `
      -- One FTS5 row per note, rowid = the note's rowid (VACUUM keeps rowids; the revision cache relies
      -- on them too), holding its own copy of the text: snippet() reads it, and a copy can never go out
      -- of step with an external content table. unicode61 folds case and accents (remove_diacritics 2);
      -- prefix indexes serve the last word of a search, matched as the start of a word. The guillemets
      -- that mark matches in a snippet are replaced in the copy by single ones, so a « or » in a
      -- snippet is always a marker.
      CREATE VIRTUAL TABLE note_search USING fts5(title, summary, transcript, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');

      -- Kept in step by triggers, so in the same transaction as every write of a note, whoever makes it.
      CREATE TRIGGER note_search_on_insert AFTER INSERT ON notes BEGIN
        INSERT INTO note_search (rowid, title, summary, transcript) VALUES (NEW.rowid,
          replace(replace(NEW.title, '«', '‹'), '»', '›'), replace(replace(NEW.summary, '«', '‹'), '»', '›'),
          coalesce((SELECT replace(replace(original_transcription, '«', '‹'), '»', '›') FROM note_bodies WHERE note_id = NEW.id), ''));
      END;
      CREATE TRIGGER note_search_on_update AFTER UPDATE OF title, summary ON notes
        WHEN NEW.title IS NOT OLD.title OR NEW.summary IS NOT OLD.summary BEGIN
        UPDATE note_search SET title = replace(replace(NEW.title, '«', '‹'), '»', '›'), summary = replace(replace(NEW.summary, '«', '‹'), '»', '›')
          WHERE rowid = NEW.rowid;
      END;
      CREATE TRIGGER note_search_on_delete AFTER DELETE ON notes BEGIN
        DELETE FROM note_search WHERE rowid = OLD.rowid;
      END;
      CREATE TRIGGER note_search_on_body_insert AFTER INSERT ON note_bodies BEGIN
        UPDATE note_search SET transcript = replace(replace(NEW.original_transcription, '«', '‹'), '»', '›')
          WHERE rowid = (SELECT rowid FROM notes WHERE id = NEW.note_id);
      END;
      CREATE TRIGGER note_search_on_body_update AFTER UPDATE OF original_transcription ON note_bodies
        WHEN NEW.original_transcription IS NOT OLD.original_transcription BEGIN
        UPDATE note_search SET transcript = replace(replace(NEW.original_transcription, '«', '‹'), '»', '›')
          WHERE rowid = (SELECT rowid FROM notes WHERE id = NEW.note_id);
      END;

      -- The notes an existing installation already has.
      INSERT INTO note_search (rowid, title, summary, transcript)
        SELECT n.rowid, replace(replace(n.title, '«', '‹'), '»', '›'), replace(replace(n.summary, '«', '‹'), '»', '›'),
          replace(replace(coalesce(b.original_transcription, ''), '«', '‹'), '»', '›')
        FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id;
    `,
  },
  {
    version: 10,
    name: 'webhook endpoints, their outbox and delivery attempts',
    sql: `
      -- An endpoint an account registered: live or sandbox (the library of the key that created it),
      -- the events it wants (a JSON array), and the Standard Webhooks secret (whsec_…) that signs its
      -- deliveries (kept as is: signing needs it; shown to the caller only at creation). disabled_at is
      -- set when the endpoint answers 410 Gone: nothing more is sent to it.
      CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        description TEXT,
        secret TEXT NOT NULL,
        disabled_at TEXT,
        disabled_reason TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX webhooks_account ON webhooks(account_id, sandbox, created_at);

      -- The outbox: one row per event and endpoint, written in the transaction that gives the note its
      -- final state, so an event is never lost and never sent for a state that rolled back. A sender
      -- claims a row by moving run_after past its lease (lease_owner, attempts name the claim); a row
      -- whose sender died is due again once the lease runs out. id is the webhook-id header (the same
      -- on every retry, so a receiver can drop duplicates).
      CREATE TABLE webhook_outbox (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after TEXT NOT NULL,
        lease_owner TEXT,
        first_attempt_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX webhook_outbox_due ON webhook_outbox(status, run_after);
      CREATE INDEX webhook_outbox_webhook ON webhook_outbox(webhook_id);

      -- Every attempt to deliver: when, its number, the answer (status code) or the error. Kept 30 days.
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        attempted_at TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'disabled', 'refused')),
        response_status INTEGER,
        error TEXT,
        duration_ms INTEGER
      );
      CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, attempted_at);
      CREATE INDEX webhook_deliveries_attempted ON webhook_deliveries(attempted_at);
    `,
  },
  {
    version: 11,
    name: 'the timed segments of a transcript',
    sql: `
      -- The engine's segments (start, end, text, and words with times where the engine gives them),
      -- as JSON, for the subtitle and verbose exports; NULL for text notes and notes transcribed before.
      ALTER TABLE note_bodies ADD COLUMN transcript_segments TEXT;
    `,
  },
  {
    version: 12,
    name: 'search rows kept whole in their table page, with the filters a search reads (PostgreSQL)',
    sql: `
      -- PostgreSQL only: its tsvector rows are kept uncompressed in the table (migrations-postgres.ts).
      -- SQLite's FTS5 index keeps its own posting lists; nothing changes here (the version is kept
      -- in step with PostgreSQL's, so a database copies between them).
      SELECT 1;
    `,
  },
  {
    version: 13,
    name: 'one leased queue: takeovers counted on jobs, the webhook outbox leased as jobs are',
    sql: `
      -- The job queue and the webhook outbox are one leased queue (src/jobs/queue.ts): queued, then
      -- running under a lease (lease_owner, lease_expires_at; a heartbeat extends it), then done or
      -- failed. takeovers counts the runs that ended because their worker died (its lease ran out, or
      -- its process was found gone): past a cap the row fails instead of running again.
      ALTER TABLE jobs ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;

      -- The outbox had its own states (pending, delivered, failed) and leased a row by moving run_after
      -- past the lease; it takes the queue's. A row claimed at the upgrade is due again when its lease
      -- would have run out (its run_after), as before: a receiver drops a repeat by its webhook-id.
      -- New columns go last, as ALTER TABLE ADD COLUMN puts them on PostgreSQL.
      CREATE TABLE webhook_outbox_v13 (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after TEXT NOT NULL,
        lease_owner TEXT,
        first_attempt_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        takeovers INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        lease_expires_at TEXT
      );
      INSERT INTO webhook_outbox_v13 (id, webhook_id, event_type, payload, status, attempts, run_after, lease_owner, first_attempt_at, created_at, updated_at)
        SELECT id, webhook_id, event_type, payload, CASE status WHEN 'pending' THEN 'queued' WHEN 'delivered' THEN 'done' ELSE status END,
          attempts, run_after, NULL, first_attempt_at, created_at, updated_at
        FROM webhook_outbox;
      DROP TABLE webhook_outbox;
      ALTER TABLE webhook_outbox_v13 RENAME TO webhook_outbox;
      -- the claim reads due rows in run_after, created_at order off this index, as jobs_ready for jobs
      CREATE INDEX webhook_outbox_ready ON webhook_outbox(status, run_after, created_at);
      CREATE INDEX webhook_outbox_webhook ON webhook_outbox(webhook_id);
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
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
      BEGIN
        SELECT RAISE(ABORT, 'audit_events is append-only: an event is never changed');
      END;
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
      -- event keeps count 1 and is never changed. The trigger of migration 17 is replaced by one that
      -- allows exactly that growth of a read's row and refuses any other UPDATE.
      ALTER TABLE audit_events ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE audit_events ADD COLUMN last_at TEXT;
      ALTER TABLE audit_events ADD COLUMN read_key TEXT;
      CREATE UNIQUE INDEX audit_events_read_key ON audit_events(read_key);
      DROP TRIGGER audit_events_append_only;
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
      WHEN NOT (
        OLD.read_key IS NOT NULL AND OLD.action IN ('note.transcript_exported', 'note.media_read', 'audit.exported')
        AND NEW.id IS OLD.id AND NEW.at IS OLD.at AND NEW.account_id IS OLD.account_id
        AND NEW.actor_type IS OLD.actor_type AND NEW.actor_id IS OLD.actor_id AND NEW.action IS OLD.action
        AND NEW.target_type IS OLD.target_type AND NEW.target_id IS OLD.target_id AND NEW.ip IS OLD.ip
        AND NEW.user_agent IS OLD.user_agent AND NEW.details IS OLD.details AND NEW.read_key IS OLD.read_key
        AND NEW.count > OLD.count AND NEW.last_at >= COALESCE(OLD.last_at, OLD.at)
      )
      BEGIN
        SELECT RAISE(ABORT, 'audit_events is append-only: an event is never changed (only a read''s count and last time grow)');
      END;
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
      ALTER TABLE note_speakers ADD COLUMN suggested_similarity REAL;
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
      -- A revision keeps either the transcript whole (transcript: a snapshot, as every revision did
      -- before) or what its edit changed from the version before (changes: the segments replaced,
      -- before and after, and the speakers when they changed), never both: an edit of one segment of a
      -- two-hour transcript stored 1.7 MB. A snapshot is kept every 50 versions and at version 0; a
      -- revision's transcript is its nearest snapshot with the changes after it applied
      -- (docs/decisions.md "Transcript revisions kept as changes"). The rows already kept are snapshots.
      -- SQLite cannot drop a NOT NULL: the table is made again, its columns in the same order.
      CREATE TABLE transcript_revisions_26 (
        note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        actor_type TEXT,
        actor_id TEXT,
        operation TEXT NOT NULL,
        created_at TEXT NOT NULL,
        transcript TEXT,
        restored_from INTEGER,
        changes TEXT,
        PRIMARY KEY (note_id, version),
        CHECK ((transcript IS NULL) <> (changes IS NULL))
      );
      INSERT INTO transcript_revisions_26 (note_id, version, actor_type, actor_id, operation, created_at, transcript, restored_from)
        SELECT note_id, version, actor_type, actor_id, operation, created_at, transcript, restored_from FROM transcript_revisions;
      DROP TABLE transcript_revisions;
      ALTER TABLE transcript_revisions_26 RENAME TO transcript_revisions;
    `,
  },
  {
    version: 27,
    name: 'live streams',
    sql: `
      -- A live transcription stream (/v1/realtime, modules/live): its state lives here, its audio in
      -- the media storage as parts (live/<id>/<n>.pcm), never only in one process, so that a resume
      -- reaching another node continues it and a restart after kill -9 makes its note from what was
      -- kept (docs/decisions.md "Live streams that survive"). generation rises at each resume: a
      -- node whose update names an older one has lost the stream; its parts are stored under its
      -- generation (live/<id>/<generation>/<n>.pcm) so that a late write of the node that lost the
      -- stream never lands on the new one's, and runs (JSON [[generation, first part], …]) says
      -- which generation wrote each part. No foreign key to the note: a note
      -- deleted mid-stream leaves the row to be finished (its parts removed) by the sweep.
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
        kept_bytes INTEGER NOT NULL DEFAULT 0,
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
  {
    version: 28,
    name: 'tags',
    sql: `
      -- Tags of a library (account + sandbox), many per note. name_key is the name as the service
      -- compares it (trimmed, NFC, lower-cased by JavaScript, so for every script alike on both back
      -- ends): unique per library, what the tag= filter looks up. notes.tags is the note's tags as
      -- JSON ([{"id","name","color"}], null for none), written with note_tags in one transaction, so a
      -- list item is its stored JSON with the tags added, no join per page (docs/decisions.md "Tags").
      CREATE TABLE tags (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        color TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX tags_by_name ON tags(account_id, sandbox, name_key);
      -- date_created: the note's (which never changes), so that a tag's notes are one range of
      -- note_tags_in_list_order in list order, as a folder's are of notes_by_folder: a page of
      -- tag=<name> at any offset reads that range, not the whole library (bench/list-notes.ts).
      CREATE TABLE note_tags (
        note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        tag_id TEXT NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
        date_created TEXT NOT NULL,
        PRIMARY KEY (note_id, tag_id)
      );
      CREATE INDEX note_tags_in_list_order ON note_tags(tag_id, date_created DESC, note_id DESC);
      ALTER TABLE notes ADD COLUMN tags TEXT;
    `,
  },
  {
    version: 29,
    name: 'share links of notes',
    sql: `
      -- A note's share link (src/modules/sharing): a read-only page for someone without an account. The
      -- token (256 random bits, base64url) is shown once when made and kept only as its SHA-256 hash;
      -- a passphrase only as its argon2id hash. What the page shows (summary, speakers' names, the
      -- recording, the downloadable formats: a comma-separated list) is chosen per link. Revoked or
      -- expired rows stay so that the owner's list shows them; the page answers 404 for both.
      CREATE TABLE note_shares (
        id TEXT PRIMARY KEY,
        note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        sandbox INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
        token_hash TEXT NOT NULL UNIQUE,
        show_summary INTEGER NOT NULL CHECK (show_summary IN (0, 1)),
        show_speakers INTEGER NOT NULL CHECK (show_speakers IN (0, 1)),
        show_recording INTEGER NOT NULL CHECK (show_recording IN (0, 1)),
        formats TEXT NOT NULL,
        expires_at TEXT,
        passphrase_hash TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        open_count INTEGER NOT NULL DEFAULT 0,
        last_opened_at TEXT
      );
      CREATE INDEX note_shares_by_note ON note_shares (note_id, created_at);
    `,
  },
  {
    version: 30,
    name: 'search rows: the library, order and filters of each indexed note in a narrow table (SQLite)',
    sql: `
      -- A search reads, for every note that has its words, the note's library, the keys of its order
      -- (date, id) and the filters (folder, status, type). They were read from notes by rowid: a wide
      -- row (list_item, summary) per match, 10,000 lookups spread over the whole table for a word in
      -- every note. Here they are copied, as PostgreSQL's search row holds them (migration 12), into
      -- a table of short rows keyed by the same rowid as note_search's, kept in step by triggers in
      -- the transaction of every write of a note (docs/decisions.md "Search rows on SQLite").
      CREATE TABLE search_keys (
        note_rowid INTEGER PRIMARY KEY,
        account_id TEXT NOT NULL,
        sandbox INTEGER NOT NULL,
        date_created TEXT NOT NULL,
        id TEXT NOT NULL,
        folder_id TEXT,
        status TEXT NOT NULL,
        type TEXT NOT NULL
      );
      CREATE TRIGGER search_keys_on_insert AFTER INSERT ON notes BEGIN
        INSERT INTO search_keys (note_rowid, account_id, sandbox, date_created, id, folder_id, status, type)
          VALUES (NEW.rowid, NEW.account_id, NEW.sandbox, NEW.date_created, NEW.id, NEW.folder_id, NEW.status, NEW.type);
      END;
      CREATE TRIGGER search_keys_on_update AFTER UPDATE OF account_id, sandbox, date_created, id, folder_id, status, type ON notes
        WHEN NEW.account_id IS NOT OLD.account_id OR NEW.sandbox IS NOT OLD.sandbox OR NEW.date_created IS NOT OLD.date_created
          OR NEW.id IS NOT OLD.id OR NEW.folder_id IS NOT OLD.folder_id OR NEW.status IS NOT OLD.status OR NEW.type IS NOT OLD.type BEGIN
        UPDATE search_keys SET account_id = NEW.account_id, sandbox = NEW.sandbox, date_created = NEW.date_created, id = NEW.id,
          folder_id = NEW.folder_id, status = NEW.status, type = NEW.type
          WHERE note_rowid = NEW.rowid;
      END;
      CREATE TRIGGER search_keys_on_delete AFTER DELETE ON notes BEGIN
        DELETE FROM search_keys WHERE note_rowid = OLD.rowid;
      END;
      INSERT INTO search_keys (note_rowid, account_id, sandbox, date_created, id, folder_id, status, type)
        SELECT rowid, account_id, sandbox, date_created, id, folder_id, status, type FROM notes;
    `,
  },
  {
    version: 31,
    name: 'search rows: the title on its own, indexed, so a search finds the notes titled with its words first (PostgreSQL)',
    sql: `
      -- PostgreSQL only (its note_search gains the title's own tsvector). Nothing changes here (the
      -- version is kept in step with PostgreSQL's, so a database copies between them).
      SELECT 1;
    `,
  },
  {
    version: 32,
    name: 'workspaces: team workspaces (accounts of kind team), their members, invitations and SSO group mappings',
    sql: `
      -- docs/decisions.md "Workspaces". A workspace is an accounts row: a person's personal workspace is
      -- the person's own account (every existing note, folder, key, credit and speaker stays where it is),
      -- a team workspace is a row of kind 'team' holding the team's pooled credits and plan. Every
      -- account_id of a library's table names the workspace that owns the row.
      ALTER TABLE accounts ADD COLUMN kind TEXT NOT NULL DEFAULT 'person' CHECK (kind IN ('person', 'team'));
      ALTER TABLE accounts ADD COLUMN name TEXT;

      -- The members of team workspaces. A personal workspace has none: its account is its only owner.
      CREATE TABLE workspace_members (
        workspace_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
        via TEXT NOT NULL CHECK (via IN ('created', 'invitation', 'sso')),
        added_at TEXT NOT NULL,
        last_active_at TEXT,
        PRIMARY KEY (workspace_id, account_id)
      );
      CREATE INDEX workspace_members_of_account ON workspace_members (account_id);

      -- An invitation by email; the token is stored as its SHA-256 only.
      CREATE TABLE workspace_invitations (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
        token_hash TEXT NOT NULL UNIQUE,
        invited_by TEXT REFERENCES accounts(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        accepted_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX workspace_invitations_of_workspace ON workspace_invitations (workspace_id, created_at);

      -- The provider's groups whose members join a workspace with a role at each sign-in.
      CREATE TABLE sso_group_workspaces (
        group_name TEXT NOT NULL,
        workspace_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
        PRIMARY KEY (group_name, workspace_id)
      );
      CREATE INDEX sso_group_workspaces_of_workspace ON sso_group_workspaces (workspace_id);

      -- A key belongs to one workspace (account_id) and acts as the member who made it (null: the
      -- workspace's own account, every key made before workspaces).
      ALTER TABLE api_keys ADD COLUMN made_by TEXT REFERENCES accounts(id) ON DELETE CASCADE;
      CREATE INDEX api_keys_made_by ON api_keys (made_by);
      -- An OAuth grant names the workspace chosen at consent (null: the person's own).
      ALTER TABLE oauth_codes ADD COLUMN workspace_id TEXT REFERENCES accounts(id) ON DELETE CASCADE;
      ALTER TABLE oauth_tokens ADD COLUMN workspace_id TEXT REFERENCES accounts(id) ON DELETE CASCADE;
      CREATE INDEX oauth_tokens_workspace ON oauth_tokens (workspace_id);
      -- Who spent a workspace's pooled credits (null before workspaces, and for the CLI).
      ALTER TABLE usage ADD COLUMN actor_id TEXT;
    `,
  },
  {
    version: 33,
    name: 'search rows: the library and the list filters indexed, so a filtered search reads only the rows it keeps (PostgreSQL)',
    sql: `
      -- PostgreSQL only (an index of its note_search rows). Nothing changes here: SQLite's search reads the
      -- filters from search_keys (migration 30); the version is kept in step with PostgreSQL's.
      SELECT 1;
    `,
  },
  {
    version: 34,
    name: 'webhooks and share links: the team member who made them, so removing the member ends them',
    sql: `
      -- A webhook endpoint and a share link name the member of a team who made them (null: made before,
      -- or in a personal workspace, whose person is its only member). Removing a member from a team
      -- disables the endpoints they made (the team's events no longer go to an address they chose) and
      -- revokes their share links, in the removal's transaction (docs/decisions.md "Workspaces").
      ALTER TABLE webhooks ADD COLUMN made_by TEXT REFERENCES accounts(id) ON DELETE SET NULL;
      ALTER TABLE note_shares ADD COLUMN made_by TEXT REFERENCES accounts(id) ON DELETE SET NULL;
    `,
  },
  {
    version: 35,
    name: 'search rows: the second each note was made, so one number orders a search (PostgreSQL)',
    sql: `
      -- PostgreSQL only (its note_search rows gain the second of date_created). Nothing changes here; the
      -- version is kept in step with PostgreSQL's, so a database copies between them.
      SELECT 1;
    `,
  },
  {
    version: 36,
    name: 'search rows found by the second each note was made, for deep pages of results (PostgreSQL)',
    sql: `
      -- PostgreSQL only (an index of note_search by the second its notes were made). Nothing changes
      -- here; the version is kept in step with PostgreSQL's, so a database copies between them.
      SELECT 1;
    `,
  },
]
