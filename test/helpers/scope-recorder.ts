/**
 * The repository check of issue 35: every SQL statement a run issues, recorded below the repositories,
 * and checked for the workspace it names. A statement that reads or writes a library table (SCOPED)
 * must name that table's `account_id` in its WHERE (`<alias>.account_id = ?`) or INSERT column list,
 * bound to the caller's workspace; reads of child tables by a parent id are allowed (AFTER_PARENT) when
 * that id was bound in a statement of the same request that passed the check first. Statements with no
 * caller (sweeps, workers, the share-openings flush) are checked against BACKGROUND.
 *
 * Recording: SQLite by patching the `Database` instance's query/prepare/run before the app is made
 * (whatever path a repository takes: the Store, `store.db.query`, a transaction's statements); the
 * caller is carried by AsyncLocalStorage from `as(workspace, …)` into every statement the request
 * causes. PostgreSQL by the server's own log (`log_statement=all`, test/helpers/postgres.ts), parsed
 * with its `DETAIL: parameters:` lines; the caller is given by the marker statements `mark` sends.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { oneLine, repoFrame, siteOf } from './sql-sites'
import type { Database } from 'bun:sqlite'

/**
 * The library tables: each row belongs to the workspace its account_id names. (Their child tables,
 * note_tags, note_bodies, note_speakers, transcript_revisions, webhook_outbox and the like, have no
 * account_id: they are read by the parent's id, which the parent's scoped read vouched for.) (PostgreSQL's note_search
 * is a table with the note's account_id, checked as one; SQLite's is the FTS5 index of notes, keyed by
 * the note's rowid, without account_id, and read only joined to `notes n` with n.account_id.)
 */
const SCOPED = ['notes', 'folders', 'tags', 'speaker_profiles', 'webhooks', 'audit_events', 'note_shares', 'retention_policies', 'uploads', 'usage', 'live_streams'] as const

/**
 * Statements allowed to read or write a scoped table (or a child table) by a parent's id, each with why.
 * `needsParent`: one of its bound values must have been bound in a statement of the same request that
 * passed the check before it (the parent was found in the caller's workspace first).
 */
const AFTER_PARENT: { name: string; match: RegExp; needsParent: boolean; reason: string }[] = [
  { name: 'tags.attach', match: /^INSERT INTO note_tags \(note_id, tag_id, date_created\) SELECT id, \S+, date_created FROM notes WHERE id = /, needsParent: true, reason: 'copies the note\'s date into note_tags; the note was read with its account_id by tags.lockNote in the same transaction' },
  { name: 'tags.refreshNote (lock)', match: /^SELECT id FROM notes WHERE id = \S+( FOR UPDATE)?$/, needsParent: true, reason: 'locks a note whose tags changed; the note id came from a scoped read (lockNote) or from the tag\'s notes (notesWith after a scoped tag read)' },
  { name: 'tags.refreshNote (write)', match: /^UPDATE notes SET tags = \S+, updated_at = .* WHERE id = \S+$/, needsParent: true, reason: 'the note\'s denormalised tag list, after the lock above' },
  { name: 'notes.write (repo.ts updateColumns)', match: /^UPDATE notes SET .* WHERE id = \S+$/, needsParent: true, reason: 'a note\'s columns written by id; every request path reads the note with its account_id first (requireNote), workers write the note their job names' },
  { name: 'notes.getById (worker read)', match: /^SELECT n\.\*, .* FROM notes n LEFT JOIN note_bodies b ON b\.note_id = n\.id WHERE n\.id = \S+$/, needsParent: true, reason: 'processing-writes.ts settles the note its job names, read by id after the write above' },
  { name: 'tags of a note (note_tags → tags)', match: /^SELECT t\.[\w*]+(, t\.\w+)* FROM note_tags nt JOIN tags t ON t\.id = nt\.tag_id WHERE nt\.note_id = \S+ ORDER BY/, needsParent: true, reason: 'the tags a note carries, by the note\'s id (a note carries only its workspace\'s tags: addNoteTag finds them scoped)' },
  { name: 'uploads.byNote', match: /^SELECT \* FROM uploads WHERE note_id = \S+( FOR UPDATE)?$/, needsParent: true, reason: 'a note\'s upload row by the note\'s id, after the note was found in the workspace' },
  { name: 'uploads.markReceived', match: /^UPDATE uploads SET received_size = \S+, received_at = \S+ WHERE note_id = \S+$/, needsParent: true, reason: 'the PUT of a signed upload URL (the signature names the note)' },
  { name: 'notes.unfileAll', match: /^UPDATE notes SET folder_id = NULL, updated_at = .* WHERE folder_id = \S+$/, needsParent: true, reason: 'a deleted folder\'s notes go to the top level, by the folder\'s id, after the folder was found in the workspace (a note is filed only in a folder of its own workspace: checkFolder, and moveNote clears it)' },
  { name: 'notes list items by rowid', match: /^SELECT rowid, revision, list_item, tags FROM notes WHERE rowid IN \(SELECT value FROM json_each\(/, needsParent: false, reason: 'the rows of a list page by the rowids a scoped range read (account_id = $account_id) returned just before, in the same call (repo.sqlite.ts listItems)' },
]

/** Statements with no caller that may touch scoped tables: sweeps, workers and flushes, each with why. */
const BACKGROUND: { name: string; match: RegExp; reason: string }[] = [
  { name: 'share openings flush', match: /^UPDATE note_shares SET open_count = open_count \+/, reason: 'counts openings of a share found by its token hash; no caller (a public page), the share id is the row\'s own' },
  { name: 'webhook outbox', match: /webhook_(outbox|deliveries)|FROM webhooks/, reason: 'the sender delivers queued events to each event\'s own webhook; no caller' },
  { name: 'jobs', match: /FROM notes WHERE id = \S+$|FROM uploads WHERE note_id = /, reason: 'a worker processes the note its job names (the job was queued in the note\'s workspace)' },
]

export interface Caller {
  workspace: string
  /** what the request was, for the failures' messages */
  label: string
  request: number
}

export interface Recorded {
  sql: string
  /** positional values, or named ones (SQLite's `$name`) */
  params: unknown[] | Record<string, unknown>
  /** the repository function (file:line and the method named there) that issued it */
  fn: string
  caller: Caller | null
  /** rows returned or changed (SQLite); undefined where unknown (PostgreSQL's log) */
  rows?: number
}

export interface Violation {
  table: string
  sql: string
  fn: string
  caller: string
  why: string
}

const MUTATING = new Set(['all', 'get', 'run', 'values', 'iterate'])

/**
 * `mark`: how to tell PostgreSQL's log a caller's request begins and ends; `sources`: more files whose
 * statements are named (a planted repository), beside src/modules.
 */
export function createScopeRecorder(opts: { mark?: (text: string) => Promise<void>; sources?: string[] } = {}) {
  const als = new AsyncLocalStorage<Caller>()
  const statements: Recorded[] = []
  let requests = 0

  function record(sql: string, params: unknown[] | Record<string, unknown>, caller: Caller | null = als.getStore() ?? null): Recorded | null {
    if (/^(BEGIN|COMMIT|ROLLBACK|PRAGMA|SAVEPOINT|RELEASE)/i.test(sql.trim())) return null
    // the statement's literal in the source names its method (a repository's arrow method is a tail
    // call, absent from the stack); the stack when no literal matches (a statement built from pieces)
    const text = oneLine(sql)
    const r: Recorded = { sql: text, params, fn: siteOf(text, opts.sources ?? []) ?? repoFrame(new Error().stack ?? ''), caller }
    statements.push(r)
    return r
  }

  const wrap = (sql: string, st: object) => new Proxy(st, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target)
      if (typeof v !== 'function') return v
      if (!MUTATING.has(prop as string)) return v.bind(target)
      return (...args: unknown[]) => {
        const named = args.length === 1 && args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0]) && !(args[0] instanceof Uint8Array)
        const r = record(sql, named ? (args[0] as Record<string, unknown>) : args.length === 1 && Array.isArray(args[0]) ? args[0] : args)
        const result = v.apply(target, args)
        if (r) r.rows = prop === 'run' ? (result as { changes: number }).changes : Array.isArray(result) ? result.length : result == null ? 0 : 1
        return result
      }
    },
  })

  return {
    statements,
    /** Runs `fn` as a request of `workspace`: every statement it causes is the caller's. */
    async as<T>(workspace: string, label: string, fn: () => Promise<T>): Promise<T> {
      const caller = { workspace, label, request: ++requests }
      if (!opts.mark) return als.run(caller, fn)
      // on PostgreSQL the caller is told to the server's log: what runs between the two marks is theirs
      await opts.mark(`${MARK} begin ${caller.request} ${workspace} ${label}`)
      try {
        return await fn()
      } finally {
        await opts.mark(`${MARK} end ${caller.request}`)
      }
    },
    /** Runs `fn` as the operator (the CLI): its statements are listed apart, not checked against a workspace. */
    operator<T>(label: string, fn: () => Promise<T>): Promise<T> {
      return this.as(OPERATOR, label, fn)
    },
    /** Patches one SQLite connection: every statement prepared on it from now on is recorded when it runs. */
    attachSqlite(db: Database): void {
      const d = db as unknown as Record<string, (...a: unknown[]) => unknown>
      for (const name of ['query', 'prepare'] as const) {
        const original = d[name]!.bind(db)
        d[name] = (sql: unknown, ...rest: unknown[]) => wrap(sql as string, original(sql, ...rest) as object)
      }
      const run = d.run!.bind(db)
      d.run = (sql: unknown, ...rest: unknown[]) => {
        record(sql as string, (rest.length === 1 && Array.isArray(rest[0]) ? rest[0] : rest) as unknown[])
        return run(sql, ...rest)
      }
    },
    record,
  }
}
export type ScopeRecorder = ReturnType<typeof createScopeRecorder>

const MARK = 'scope-recorder-mark'
/** the caller of the operator's statements (the CLI: accounts create-key and the like) */
const OPERATOR = '(operator)'

/** A statement that marks a caller's request in PostgreSQL's log (sent through the app's own store). */
export const markStatement = (text: string) => `SELECT '${text.replaceAll("'", "''")}' AS mark`

/** A parameter value as the log writes it: 'text' (quotes doubled) or NULL. */
function logValue(v: string): string | null {
  return v === 'NULL' ? null : v.slice(1, -1).replaceAll("''", "'")
}

/**
 * The statements of a PostgreSQL server log written with log_statement=all (from `from`, a character
 * offset), each with its parameters (the DETAIL line after it) and the caller whose marks enclose it.
 */
export function readPostgresLog(text: string): Recorded[] {
  const entries: { body: string; pid: string }[] = []
  for (const line of text.split('\n')) {
    const m = /^\S+ \S+ \S+ \[(\d+)\] (LOG|DETAIL|ERROR|STATEMENT|WARNING|HINT|CONTEXT|FATAL):  (.*)$/.exec(line)
    if (m) entries.push({ pid: m[1]!, body: `${m[2]}:${m[3]}` })
    else if (entries.length > 0 && line.startsWith('\t')) entries.at(-1)!.body += `\n${line.slice(1)}`
  }
  const out: Recorded[] = []
  let caller: Caller | null = null
  const lastOf = new Map<string, Recorded>()
  for (const e of entries) {
    const statement = /^LOG:(?:statement|execute [^:]*): ([\s\S]*)$/.exec(e.body)
    if (statement) {
      const sql = oneLine(statement[1]!)
      const mark = new RegExp(`^SELECT '${MARK} (begin|end) (\\d+)(?: (\\S+) (.*))?' AS mark$`).exec(sql)
      if (mark) {
        caller = mark[1] === 'begin' ? { request: Number(mark[2]), workspace: mark[3]!, label: mark[4]!.replaceAll("''", "'") } : null
        continue
      }
      if (/^(BEGIN|COMMIT|ROLLBACK|SET |SAVEPOINT|RELEASE|SELECT pg_advisory)/i.test(sql)) continue
      const r: Recorded = { sql, params: [], fn: siteOf(sql, []) ?? '(postgres log)', caller }
      out.push(r)
      lastOf.set(e.pid, r)
      continue
    }
    const detail = /^DETAIL:parameters: ([\s\S]*)$/.exec(e.body)
    const r = lastOf.get(e.pid)
    if (detail && r) {
      const params: (string | null)[] = []
      for (const p of detail[1]!.matchAll(/\$(\d+) = ('(?:[^']|'')*'|NULL)/g)) params[Number(p[1]) - 1] = logValue(p[2]!)
      r.params = params
    }
  }
  return out
}

/** The index of each `?` placeholder outside quoted strings. */
function placeholderPositions(sql: string): number[] {
  const out: number[] = []
  let quote: string | null = null
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!
    if (quote) {
      if (c === quote) quote = null
    } else if (c === "'" || c === '"') quote = c
    else if (c === '?') out.push(i)
  }
  return out
}

/** The value bound to the placeholder at `at` (`?`, `$name` or `$n`). */
function boundAt(r: Recorded, at: number, token: string): unknown {
  if (token === '?') return (r.params as unknown[])[placeholderPositions(r.sql).indexOf(at)]
  if (/^\$\d+$/.test(token)) return (r.params as unknown[])[Number(token.slice(1)) - 1]
  return (r.params as Record<string, unknown>)[token.slice(1)] ?? (r.params as Record<string, unknown>)[token]
}

const NOT_ALIAS = new Set(['where', 'set', 'on', 'left', 'right', 'inner', 'join', 'cross', 'indexed', 'order', 'group', 'limit', 'values', 'select', 'using', 'as', 'default', 'union', 'returning', 'natural', 'full', 'outer', 'having', 'window', 'offset', 'for', 'and', 'or'])
const PLACEHOLDER = String.raw`(\?|\$[A-Za-z_]\w*|\$\d+)`

/** The scoped tables a statement names, each with its alias. */
function scopedMentions(sql: string, tables: readonly string[] = SCOPED): { table: string; alias: string | null; insert: boolean }[] {
  const out: { table: string; alias: string | null; insert: boolean }[] = []
  const re = new RegExp(String.raw`\b(FROM|JOIN|UPDATE|INTO)\s+"?(${tables.join('|')})"?(?:\s+(?:AS\s+)?([A-Za-z_]\w*))?`, 'gi')
  for (const m of sql.matchAll(re)) {
    const alias = m[3] && !NOT_ALIAS.has(m[3].toLowerCase()) ? m[3] : null
    out.push({ table: m[2]!.toLowerCase(), alias, insert: m[1]!.toUpperCase() === 'INTO' })
  }
  return out
}

/** Whether the statement binds `table`'s account_id (through its alias) to `workspace`; the reason when not. */
function bindsWorkspace(r: Recorded, mention: { table: string; alias: string | null; insert: boolean }, workspace: string, created: ReadonlySet<unknown>): string | null {
  const mine = (v: unknown) => v === workspace || created.has(v)
  if (mention.insert) {
    const m = new RegExp(String.raw`INTO\s+"?${mention.table}"?\s*\(([^)]*)\)\s*VALUES\s*\(`, 'i').exec(r.sql)
    if (!m) return `an INSERT into ${mention.table} without a column list and VALUES`
    const columns = m[1]!.split(',').map(c => c.trim().replace(/"/g, ''))
    const at = columns.indexOf('account_id')
    if (at < 0) return `an INSERT into ${mention.table} that does not name account_id`
    // the values' tokens, in order, from the VALUES tuple
    let i = m.index + m[0].length
    const tokens: { token: string; at: number }[] = []
    let depth = 0
    let start = i
    for (; i < r.sql.length && depth >= 0; i++) {
      const c = r.sql[i]
      if (c === '(') depth++
      else if (c === ')') depth--
      if ((c === ',' && depth === 0) || depth < 0) {
        const text = r.sql.slice(start, i)
        tokens.push({ token: text.trim(), at: start + text.indexOf(text.trim()) })
        start = i + 1
      }
    }
    const value = tokens[at]
    if (!value || !new RegExp(`^${PLACEHOLDER}$`).test(value.token)) return `${mention.table}.account_id is not a bound value`
    const bound = boundAt(r, value.at, value.token)
    return mine(bound) ? null : `${mention.table}.account_id is bound to ${String(bound)}, not the caller's workspace ${workspace}`
  }
  const column = mention.alias ? String.raw`\b${mention.alias}\.account_id` : String.raw`(?:\b${mention.table}\.|(?<![\w.]))account_id`
  const seen: unknown[] = []
  for (const m of r.sql.matchAll(new RegExp(String.raw`${column}\s*=\s*${PLACEHOLDER}`, 'g'))) {
    const bound = boundAt(r, m.index + m[0].length - m[1]!.length, m[1]!)
    if (mine(bound)) return null
    seen.push(bound)
  }
  if (seen.length > 0) return `${mention.alias ?? mention.table}.account_id is bound to ${seen.join(', ')}, not the caller's workspace ${workspace}`
  return `no ${mention.alias ? `${mention.alias}.` : ''}account_id = ? for ${mention.table}`
}

const boundValues = (r: Recorded): unknown[] => (Array.isArray(r.params) ? r.params : Object.values(r.params))

export interface ScopeReport {
  /** statements naming a scoped table, checked against their caller's workspace */
  checked: number
  /** of those, allowed by AFTER_PARENT */
  afterParent: { name: string; count: number; reason: string }[]
  /** statements with no caller naming a scoped table, by BACKGROUND entry */
  background: { name: string; count: number; reason: string }[]
  /** the operator's (CLI) statements naming a scoped table, by request */
  operator: { name: string; count: number; reason: string }[]
  violations: Violation[]
  /** the repository functions seen, `file method` */
  functions: Set<string>
}

/** The rule, over every recorded statement. */
export function checkScoping(statements: readonly Recorded[], backEnd: 'sqlite' | 'postgres'): ScopeReport {
  const tables = backEnd === 'postgres' ? [...SCOPED, 'note_search'] : SCOPED
  const report: ScopeReport = { checked: 0, afterParent: [], background: [], operator: [], violations: [], functions: new Set() }
  const count = (list: { name: string; count: number; reason: string }[], name: string, reason: string) => {
    const entry = list.find(e => e.name === name)
    if (entry) entry.count++
    else list.push({ name, count: 1, reason })
  }
  /** per request, the values bound in statements that passed */
  const vouched = new Map<number, Set<unknown>>()
  /** per request, the workspaces it made (createWorkspace: the team's row, then its audit line in it) */
  const createdBy = new Map<number, Set<unknown>>()
  for (const r of statements) {
    if (r.caller && /^INSERT INTO accounts \(id,/.test(r.sql) && Array.isArray(r.params)) {
      const made = createdBy.get(r.caller.request) ?? new Set<unknown>()
      createdBy.set(r.caller.request, made.add(r.params[0]))
    }
    report.functions.add(r.fn.replace(/:\d+ /, ' '))
    const mentions = scopedMentions(r.sql, tables)
    if (mentions.length === 0) continue
    if (!r.caller) {
      const entry = BACKGROUND.find(b => b.match.test(r.sql))
      if (entry) count(report.background, entry.name, entry.reason)
      else report.violations.push({ table: mentions[0]!.table, sql: r.sql, fn: r.fn, caller: '(no caller)', why: 'a statement with no caller that BACKGROUND does not list' })
      continue
    }
    if (r.caller.workspace === OPERATOR) {
      count(report.operator, r.caller.label, 'the operator (CLI) acts on the account it names')
      continue
    }
    report.checked++
    const mine = vouched.get(r.caller.request) ?? new Set<unknown>()
    vouched.set(r.caller.request, mine)
    const failures = mentions.map(m => ({ m, why: bindsWorkspace(r, m, r.caller!.workspace, createdBy.get(r.caller!.request) ?? new Set()) })).filter(f => f.why !== null)
    if (failures.length === 0) {
      // a parent found in the caller's workspace (rows unknown on PostgreSQL: the text and values alone)
      if (r.rows === undefined || r.rows > 0) for (const v of boundValues(r)) mine.add(v)
      continue
    }
    // `JOIN notes n ON n.id = page.id`: rows joined by id to a row set of the same statement that is
    // itself read with the caller's account_id (a list page's keys, a search's matches)
    const joinedById = (m: { table: string; alias: string | null }) => m.alias !== null && new RegExp(String.raw`JOIN\s+${m.table}\s+${m.alias}\s+ON\s+${m.alias}\.id\s*=\s*\w+\.(id|note_id)\b`, 'i').test(r.sql)
    if (failures.length < mentions.length && failures.every(f => joinedById(f.m))) {
      count(report.afterParent, 'joined by id to a scoped row set of the same statement', 'a list page\'s or search\'s rows, joined by id to keys the same statement reads with the caller\'s account_id')
      if (r.rows === undefined || r.rows > 0) for (const v of boundValues(r)) mine.add(v)
      continue
    }
    const allowed = AFTER_PARENT.find(a => a.match.test(r.sql))
    if (allowed && (!allowed.needsParent || boundValues(r).some(v => typeof v === 'string' && mine.has(v)))) {
      count(report.afterParent, allowed.name, allowed.reason)
      continue
    }
    for (const f of failures) {
      report.violations.push({ table: f.m.table, sql: r.sql, fn: r.fn, caller: `${r.caller.label} (workspace ${r.caller.workspace})`, why: allowed ? `${allowed.name}: no parent id vouched for in the same request` : f.why! })
    }
  }
  return report
}

/**
 * The methods of the given repository objects (`file`: its path from src/) that no recorded statement
 * came from: each must be reached by the run, or be named in `unreached` with why.
 */
export function unreachedMethods(report: ScopeReport, repos: { file: string; repo: object }[], unreached: Record<string, string>): string[] {
  return repos.flatMap(({ file, repo }) => Object.entries(repo).filter(([, v]) => typeof v === 'function').map(([name]) => `${file} ${name}`))
    .filter(name => !report.functions.has(name) && !(name in unreached) && !/ transaction$/.test(name))
}

/** A violation as one line: the function, the table, why, the statement. */
export const describeViolation = (v: Violation) => `${v.fn}: ${v.table}: ${v.why}; by ${v.caller}: ${v.sql.slice(0, 300)}`
