#!/usr/bin/env bun
/**
 * One owner per back end (docs/architecture.md, "Rules the checks enforce"): everything that differs
 * between SQLite and PostgreSQL lives in `src/db/` (the stores, the dialect object) and in the
 * per-back-end repository files (`*.sqlite.ts`, `*.postgres.ts`), which the composition root picks
 * through `Store.choose`. No other source file names a back end in code: no branch on the dialect, no
 * store class, no driver. Run by .ci/run; exits 1 listing every offending line.
 *
 *   bun run scripts/check-backends.ts [DIR]    (default: src)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/** What names a back end in code. The first three are the acceptance grep; the rest close the doors around it. */
const NAMES_A_BACK_END = /dialect|sqliteOf|'postgres'|'sqlite'|\bSqliteStore\b|\bPostgresStore\b|bun:sqlite|\bBun\.SQL\b/

/** Where a back end may be named: the data-access layer and the per-back-end repository files. */
function mayName(path: string): boolean {
  return path.startsWith('src/db/') || /\.(sqlite|postgres)\.ts$/.test(path)
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

const root = resolve(import.meta.dir, '..')
const dir = resolve(root, process.argv[2] ?? 'src')
const offences: string[] = []
for (const file of sourceFiles(dir)) {
  const path = relative(root, file)
  if (mayName(path)) continue
  readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    if (NAMES_A_BACK_END.test(line)) offences.push(`${path}:${i + 1}: ${line.trim()}`)
  })
}
if (offences.length > 0) {
  process.stderr.write(`${offences.length} line${offences.length === 1 ? '' : 's'} outside src/db/ and the *.sqlite.ts / *.postgres.ts repository files name a back end:\n`)
  for (const o of offences) process.stderr.write(`  ${o}\n`)
  process.stderr.write('Move what differs behind the store: a piece of SQL into the dialect (src/db/dialect.ts, used as store.sql.…), a capability into the Store, or a query that truly differs into a per-back-end repository file chosen in src/services.ts with store.choose.\n')
  process.exit(1)
}
process.stdout.write(`back ends named only in src/db/ and the per-back-end repository files (${sourceFiles(dir).length} files checked)\n`)
