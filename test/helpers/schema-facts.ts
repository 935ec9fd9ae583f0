import type { Database } from 'bun:sqlite'
import type { PostgresStore } from '../../src/db/store'

/**
 * A live schema read as facts, in one vocabulary for both back ends, so two schemas compare key by
 * key: `'column notes.title default'` → `"''"`. A key is a subject (`table notes`, `column
 * notes.title`, `index notes_newest`, `trigger notes_derive`, `function note_list_item`, `sequence
 * note_revisions`, `view …`) and one attribute, its last word. Values say what a thing means rather
 * than how it is spelled: a column's type is what it holds (SQLite's declared affinity; PostgreSQL's
 * type), text collation is `bytewise` for SQLite's BINARY and PostgreSQL's "C", and expressions
 * (defaults, CHECKs, index columns and WHERE) are normalised by `sqlText`.
 */
export type Facts = Map<string, string>

/**
 * A difference between the two back ends made on purpose: the facts each side has that the other has
 * not, or has otherwise. A key's subject may hold `*` (any text); a value `*` is any value; a side
 * that does not name a key must lack it. `except` names subjects the entry does not cover.
 */
export interface DialectDifference {
  what: string
  sqlite: Record<string, string>
  postgres: Record<string, string>
  except?: string[]
  why: string
}

// ---------------------------------------------------------------- expressions

const QUOTED = /'(?:[^']|'')*'|"(?:[^"]|"")*"/g
const MARK = '\u0001'

/**
 * `sql` with each quoted part ('…' or "…") replaced by a mark that holds no quote, parenthesis,
 * comma or space, so the rest can be worked on as text; `restore` puts them back.
 */
function masked(sql: string): { text: string; restore: (s: string) => string } {
  const quoted: string[] = []
  const text = sql.replace(QUOTED, q => `${MARK}${quoted.push(q) - 1}${MARK}`)
  return { text, restore: s => s.replace(new RegExp(`${MARK}(\\d+)${MARK}`, 'g'), (_, n: string) => quoted[Number(n)]!) }
}

/** `sql` without its comments (`-- …` to the end of the line, `/* … *\/`), quoted text kept. */
function withoutComments(sql: string): string {
  const m = masked(sql)
  return m.restore(m.text.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' '))
}

/** Whether the parenthesis that opens `text` closes at its very end. */
function wrapsAll(text: string): boolean {
  let depth = 0
  for (const [i, c] of [...text].entries()) {
    if (c === '(') depth++
    if (c === ')' && --depth === 0) return i === text.length - 1
  }
  return false
}

/**
 * An expression as both back ends can be compared by: lower case outside quotes, casts (`::text`)
 * dropped, `x = ANY (ARRAY[a, b])` as `x in(a,b)` with the list sorted, spaces kept only between two
 * words, and parentheses around the whole taken off. Quoted text is kept as it is.
 */
function sqlText(expr: string): string {
  const m = masked(withoutComments(expr))
  let text = m.text.toLowerCase().replace(/::\s*[a-z_]+( varying| precision)?/g, '').replace(/\s+/g, ' ')
  text = text.replace(/ (?![\w\u0001])|(?<![\w\u0001]) /g, '').trim()
  text = text.replace(/([\w.]+)=any\(array\[([^\]]*)\]\)/g, '$1 in($2)')
  text = text.replace(/\bin\(([\w.\u0001-]+(?:,[\w.\u0001-]+)*)\)/g, (_, list: string) =>
    `in(${list.split(',').sort((a, b) => m.restore(a).localeCompare(m.restore(b))).join(',')})`)
  while (text.startsWith('(') && wrapsAll(text)) text = text.slice(1, -1)
  return m.restore(text)
}

/** The comma-separated items of `text` that stand outside parentheses and quotes. */
function topLevelItems(text: string): string[] {
  const m = masked(text)
  const items: string[] = []
  let depth = 0
  let item = ''
  for (const c of m.text) {
    if (c === '(') depth++
    if (c === ')') depth--
    if (c === ',' && depth === 0) {
      items.push(item)
      item = ''
    } else item += c
  }
  items.push(item)
  return items.map(i => m.restore(i).trim()).filter(i => i !== '')
}

/** The text inside the first parentheses that open at or after `from` in `text` (quoted text kept as it is). */
function parenthesised(text: string, from: number): string {
  const m = masked(text.slice(from))
  const open = m.text.indexOf('(')
  let depth = 0
  for (let i = open; i < m.text.length; i++) {
    if (m.text[i] === '(') depth++
    if (m.text[i] === ')' && --depth === 0) return m.restore(m.text.slice(open + 1, i))
  }
  throw new Error(`unbalanced parentheses: ${text}`)
}

/** `CREATE [UNIQUE] INDEX name ON [public.]table [USING m] (a, b DESC, lower(c)) [WHERE …]`, as facts. */
function indexFacts(facts: Facts, definition: string): void {
  const sql = withoutComments(definition).trim()
  const head = /^CREATE (UNIQUE )?INDEX (?:IF NOT EXISTS )?"?(\w+)"? ON (?:public\.)?"?(\w+)"?(?: USING (\w+))?\s*\(/i.exec(sql)
  if (!head) throw new Error(`not an index definition: ${sql}`)
  const columns = parenthesised(sql, head[0].length - 1)
  const rest = sql.slice(head[0].length + columns.length + 1).trim()
  const subject = `index ${head[2]}`
  facts.set(`${subject} on`, `${head[3]} (${topLevelItems(columns).map(sqlText).join(', ')})`)
  if (head[1]) facts.set(`${subject} unique`, 'yes')
  if (head[4] && head[4].toLowerCase() !== 'btree') facts.set(`${subject} using`, head[4].toLowerCase())
  if (rest) facts.set(`${subject} where`, sqlText(rest.replace(/^WHERE/i, '')))
}

// ---------------------------------------------------------------- SQLite

/** SQLite's affinity of a declared type (datatype3.html §3.1), named by what it holds. */
function sqliteAffinity(declared: string): string {
  const t = declared.toUpperCase()
  if (t.includes('INT')) return 'integer (64-bit)'
  if (/CHAR|CLOB|TEXT/.test(t)) return 'text'
  if (t === '' || t.includes('BLOB')) return 'blob'
  if (/REAL|FLOA|DOUB/.test(t)) return 'float (8 bytes)'
  return 'numeric'
}

const SQLITE_COLLATIONS: Record<string, string> = { binary: 'bytewise', nocase: 'nocase', rtrim: 'rtrim' }

/** The column definitions and table constraints of a CREATE TABLE, by column name ('' for constraints). */
function sqliteColumnDefinitions(createTable: string): { column: string; definition: string }[] {
  const body = parenthesised(withoutComments(createTable), 0)
  return topLevelItems(body).map(definition => {
    const constraint = /^(CONSTRAINT|PRIMARY|UNIQUE|CHECK|FOREIGN)\b/i.test(definition)
    return { column: constraint ? '' : definition.match(/^["`[]?(\w+)/)![1]!, definition }
  })
}

/** Every `CHECK (…)` of a definition, normalised. */
function checks(definition: string): string[] {
  return [...definition.matchAll(/\bCHECK\s*\(/gi)].map(m => sqlText(parenthesised(definition, m.index!)))
}

/** The facts of a SQLite database's schema (tables of FTS5's own storage left out: the virtual table stands for them). */
export function sqliteSchemaFacts(db: Database): Facts {
  const facts: Facts = new Map()
  const objects = db.query<{ type: string; name: string; tbl_name: string; sql: string | null }, []>(
    "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all()
  const virtual = objects.filter(o => o.type === 'table' && /^CREATE VIRTUAL TABLE/i.test(o.sql ?? '')).map(o => o.name)
  const shadow = (name: string) => virtual.some(v => name.startsWith(`${v}_`))

  for (const t of objects.filter(o => o.type === 'table' && !shadow(o.name))) {
    if (virtual.includes(t.name)) {
      facts.set(`table ${t.name} kind`, `virtual table ${sqlText(t.sql!.replace(/^[\s\S]*?\bUSING\b/i, 'using'))}`)
      continue
    }
    facts.set(`table ${t.name} kind`, 'table')
    const definitions = sqliteColumnDefinitions(t.sql!)
    const columns = db.query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number; hidden: number }, [string]>(
      'SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid').all(t.name)
    const pk = columns.filter(c => c.pk > 0).sort((a, b) => a.pk - b.pk)
    let previous = ''
    for (const c of columns) {
      const subject = `column ${t.name}.${c.name}`
      const definition = definitions.find(d => d.column === c.name)?.definition ?? ''
      const type = sqliteAffinity(c.type)
      // A rowid alias (INTEGER PRIMARY KEY) is never null; any other primary key column of a rowid table may be.
      const rowid = pk.length === 1 && c.pk === 1 && c.type.toUpperCase() === 'INTEGER'
      facts.set(`${subject} position`, previous ? `after ${previous}` : 'first')
      facts.set(`${subject} type`, type)
      facts.set(`${subject} null`, c.notnull === 1 || rowid ? 'not null' : c.pk > 0 ? 'nullable (primary key)' : 'nullable')
      if (c.dflt_value !== null) facts.set(`${subject} default`, sqlText(c.dflt_value))
      if (type === 'text') facts.set(`${subject} collation`, SQLITE_COLLATIONS[(/\bCOLLATE\s+(\w+)/i.exec(definition)?.[1] ?? 'binary').toLowerCase()] ?? 'unknown')
      if (c.hidden === 2 || c.hidden === 3) facts.set(`${subject} generated`, c.hidden === 3 ? 'stored' : 'virtual')
      const columnChecks = checks(definition)
      if (columnChecks.length > 0) facts.set(`${subject} check`, columnChecks.sort().join(' and '))
      previous = c.name
    }
    const tableChecks = definitions.filter(d => d.column === '').flatMap(d => checks(d.definition))
    if (tableChecks.length > 0) facts.set(`table ${t.name} check`, tableChecks.sort().join(' and '))
    if (pk.length > 0) facts.set(`table ${t.name} primary_key`, pk.map(c => c.name).join(', '))
    const unique = db.query<{ columns: string }, [string]>(`
      SELECT (SELECT group_concat(name, ', ') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno)) AS columns
      FROM pragma_index_list(?) l WHERE l.origin = 'u'`).all(t.name).map(u => u.columns)
    if (unique.length > 0) facts.set(`table ${t.name} unique`, unique.sort().join('; '))
    const fks = db.query<{ id: number; table: string; from: string; to: string | null; on_update: string; on_delete: string }, [string]>(
      'SELECT id, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(t.name)
    for (const fk of fks) {
      if (fks.filter(f => f.id === fk.id).length > 1) throw new Error(`${t.name}: a foreign key of several columns, which this comparison does not read yet`)
      const to = fk.to ?? db.query<{ name: string }, [string]>('SELECT name FROM pragma_table_info(?) WHERE pk = 1').get(fk.table)!.name
      facts.set(`column ${t.name}.${fk.from} references`, `${fk.table}.${to} on delete ${fk.on_delete.toLowerCase()} on update ${fk.on_update.toLowerCase()}`)
    }
  }
  for (const i of objects.filter(o => o.type === 'index' && o.sql !== null)) indexFacts(facts, i.sql!)
  for (const tr of objects.filter(o => o.type === 'trigger')) {
    const head = withoutComments(tr.sql!).replace(/^\s*CREATE\s+(?:TEMP\w*\s+)?TRIGGER\s+(?:IF NOT EXISTS\s+)?\S+\s+/i, '').split(/\bBEGIN\b/i)[0]!
    facts.set(`trigger ${tr.name} fires`, sqlText(head))
  }
  for (const v of objects.filter(o => o.type === 'view')) facts.set(`view ${v.name} kind`, 'view')
  return facts
}

// ---------------------------------------------------------------- PostgreSQL

const POSTGRES_TYPES: Record<string, string> = {
  smallint: 'integer (16-bit)', integer: 'integer (32-bit)', bigint: 'integer (64-bit)',
  real: 'float (4 bytes)', 'double precision': 'float (8 bytes)', text: 'text', bytea: 'blob', numeric: 'numeric',
}
const POSTGRES_ACTIONS: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' }
const POSTGRES_STORAGE: Record<string, string> = { p: 'plain', m: 'main', e: 'external', x: 'extended' }

/** The facts of a PostgreSQL database's `public` schema. */
export async function postgresSchemaFacts(store: PostgresStore): Promise<Facts> {
  const facts: Facts = new Map()
  const tables = await store.all<{ name: string; persistence: string; options: string[] | null }>(`
    SELECT relname AS name, relpersistence AS persistence, reloptions AS options FROM pg_class
    WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')`)
  for (const t of tables) {
    facts.set(`table ${t.name} kind`, t.persistence === 'u' ? 'unlogged table' : 'table')
    if (t.options) facts.set(`table ${t.name} options`, [...t.options].sort().join(', '))
  }
  const columns = await store.all<{ tbl: string; name: string; type: string; notnull: boolean; dflt: string | null; collation: string | null; generated: string; identity: string; storage: string; typstorage: string }>(`
    SELECT c.relname AS tbl, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
      pg_get_expr(d.adbin, d.adrelid) AS dflt, co.collname AS collation, a.attgenerated AS generated, a.attidentity AS identity,
      a.attstorage AS storage, ty.typstorage
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_type ty ON ty.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum LEFT JOIN pg_collation co ON co.oid = a.attcollation
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY c.relname, a.attnum`)
  let previous = { tbl: '', name: '' }
  for (const c of columns) {
    const subject = `column ${c.tbl}.${c.name}`
    facts.set(`${subject} position`, previous.tbl === c.tbl ? `after ${previous.name}` : 'first')
    facts.set(`${subject} type`, POSTGRES_TYPES[c.type] ?? c.type)
    facts.set(`${subject} null`, c.notnull ? 'not null' : 'nullable')
    if (c.dflt !== null) facts.set(`${subject} default`, sqlText(c.dflt))
    if (c.collation !== null) facts.set(`${subject} collation`, c.collation === 'C' || c.collation === 'POSIX' ? 'bytewise' : `"${c.collation}"`)
    if (c.generated === 's') facts.set(`${subject} generated`, 'stored')
    if (c.identity) facts.set(`${subject} generated`, c.identity === 'a' ? 'identity always' : 'identity by default')
    if (c.storage !== c.typstorage) facts.set(`${subject} storage`, POSTGRES_STORAGE[c.storage] ?? c.storage)
    previous = c
  }
  const constraints = await store.all<{ tbl: string; type: string; def: string; columns: string[]; target: string | null; targetColumns: string[] | null; ondelete: string; onupdate: string }>(`
    SELECT t.relname AS tbl, c.contype AS type, pg_get_constraintdef(c.oid) AS def,
      (SELECT array_agg(a.attname ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS columns,
      r.relname AS target,
      (SELECT array_agg(a.attname ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n) AS "targetColumns",
      c.confdeltype AS ondelete, c.confupdtype AS onupdate
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid LEFT JOIN pg_class r ON r.oid = c.confrelid
    WHERE t.relnamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'c', 'f')`)
  const grouped = (type: string, tbl: string) => constraints.filter(c => c.type === type && c.tbl === tbl)
  for (const t of tables) {
    const pk = grouped('p', t.name)[0]
    if (pk) facts.set(`table ${t.name} primary_key`, pk.columns.join(', '))
    const unique = grouped('u', t.name).map(u => u.columns.join(', '))
    if (unique.length > 0) facts.set(`table ${t.name} unique`, unique.sort().join('; '))
    const checksOf = (cs: typeof constraints) => cs.map(c => sqlText(c.def.replace(/^CHECK\s*/i, ''))).sort().join(' and ')
    const tableChecks = grouped('c', t.name).filter(c => c.columns.length !== 1)
    if (tableChecks.length > 0) facts.set(`table ${t.name} check`, checksOf(tableChecks))
    for (const column of new Set(grouped('c', t.name).filter(c => c.columns.length === 1).map(c => c.columns[0]!))) {
      facts.set(`column ${t.name}.${column} check`, checksOf(grouped('c', t.name).filter(c => c.columns.length === 1 && c.columns[0] === column)))
    }
    for (const fk of grouped('f', t.name)) {
      if (fk.columns.length > 1) throw new Error(`${t.name}: a foreign key of several columns, which this comparison does not read yet`)
      facts.set(`column ${t.name}.${fk.columns[0]} references`, `${fk.target}.${fk.targetColumns![0]} on delete ${POSTGRES_ACTIONS[fk.ondelete]} on update ${POSTGRES_ACTIONS[fk.onupdate]}`)
    }
  }
  // indexes of their own, not those that back a primary key or unique constraint
  const indexes = await store.all<{ def: string }>(`
    SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE c.relnamespace = 'public'::regnamespace AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`)
  for (const i of indexes) indexFacts(facts, i.def)
  const triggers = await store.all<{ name: string; def: string }>(`
    SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal`)
  for (const t of triggers) {
    facts.set(`trigger ${t.name} fires`, sqlText(t.def.replace(/^CREATE (CONSTRAINT )?TRIGGER \S+ /, '').replace(/\bON public\./, 'ON ')))
  }
  const functions = await store.all<{ name: string; args: string; result: string; language: string }>(`
    SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result, l.lanname AS language
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.pronamespace = 'public'::regnamespace`)
  for (const f of functions) facts.set(`function ${f.name} returns`, `${f.result} (${f.args}) in ${f.language}`)
  const others = await store.all<{ name: string; kind: string }>(`
    SELECT relname AS name, CASE relkind WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' WHEN 'm' THEN 'view' ELSE 'other' END AS kind
    FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('S', 'v', 'm')`)
  for (const o of others) facts.set(`${o.kind} ${o.name} kind`, o.kind)
  return facts
}

// ---------------------------------------------------------------- comparing

const BACK_ENDS = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const
type Side = keyof typeof BACK_ENDS

const glob = (pattern: string) => new RegExp(`^${pattern.split('*').map(s => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
const subjectOf = (key: string) => key.slice(0, key.lastIndexOf(' '))
const attributeOf = (key: string) => key.slice(key.lastIndexOf(' ') + 1)

/**
 * Every way the PostgreSQL facts differ from SQLite's that `allowed` does not list, and every fact
 * `allowed` lists that was not found (an entry that no longer holds), as lines for a person to read.
 * A subject one side lacks altogether is one line.
 */
export function compareFacts(sqlite: Facts, postgres: Facts, allowed: DialectDifference[]): string[] {
  const used = new Set<string>()
  /**
   * Whether an entry's facts of one side say this side has `value` for `key` (or lacks it, when the
   * entry names no such key); the pattern that says so, if any.
   */
  const says = (d: DialectDifference, side: Side, key: string, value: string | undefined): { holds: boolean; pattern?: string } => {
    if (d.except?.includes(subjectOf(key))) return { holds: false }
    const named = Object.entries(d[side]).filter(([pattern]) => glob(pattern).test(key))
    if (value === undefined) return { holds: named.length === 0 }
    const hit = named.find(([, v]) => v === '*' || v === value)
    return { holds: hit !== undefined, pattern: hit?.[0] }
  }
  const explains = (d: DialectDifference, entry: number, key: string, values: Record<Side, string | undefined>) => {
    const sides = (['sqlite', 'postgres'] as const).map(side => ({ side, ...says(d, side, key, values[side]) }))
    if (!sides.every(s => s.holds)) return false
    for (const s of sides) if (s.pattern) used.add(`${entry} ${s.side} ${s.pattern}`)
    return true
  }
  const unexplained: { key: string; sqlite?: string; postgres?: string }[] = []
  for (const key of [...new Set([...sqlite.keys(), ...postgres.keys()])].sort()) {
    const values = { sqlite: sqlite.get(key), postgres: postgres.get(key) }
    if (values.sqlite === values.postgres) continue
    if (!allowed.some((d, i) => explains(d, i, key, values))) unexplained.push({ key, ...values })
  }

  const lines: string[] = []
  const has = (facts: Facts, subject: string) => [...facts.keys()].some(k => subjectOf(k) === subject)
  for (const subject of new Set(unexplained.map(u => subjectOf(u.key)))) {
    const mine = unexplained.filter(u => subjectOf(u.key) === subject)
    const lacking = (['sqlite', 'postgres'] as const).find(side => !has(side === 'sqlite' ? sqlite : postgres, subject))
    if (lacking) {
      const other = lacking === 'sqlite' ? 'postgres' : 'sqlite'
      lines.push(`${subject}: only on ${BACK_ENDS[other]} (${mine.map(u => `${attributeOf(u.key)} ${u[other]}`).join(', ')})`)
    } else {
      for (const u of mine) lines.push(`${u.key}: SQLite ${u.sqlite ?? '(none)'}, PostgreSQL ${u.postgres ?? '(none)'}`)
    }
  }
  allowed.forEach((d, i) => {
    for (const side of ['sqlite', 'postgres'] as const) {
      for (const [key, value] of Object.entries(d[side])) {
        if (!used.has(`${i} ${side} ${key}`)) lines.push(`listed as a dialect difference (${d.what}) but not found: ${BACK_ENDS[side]} ${key} ${value}`)
      }
    }
  })
  return lines
}
