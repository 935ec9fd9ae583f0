#!/usr/bin/env bun
/**
 * The isolation probe's table (issue 35): every operation of the registry called with another
 * workspace's credential on a filled workspace's ids, on SQLite (and PostgreSQL with --postgres),
 * printed as Markdown: the status and error code of each, ✗ where the outcome is not a refusal
 * (404/403 when the request names the other workspace's ids; no 5xx and none of its ids otherwise).
 *
 *   bun run scripts/isolation-table.ts [--postgres]
 */
import { createTestApp } from '../test/helpers/app'
import { PROBE_ENV, fillWorkspace, markdownTable, personalKey, probeOperations, teamKey } from '../test/helpers/isolation-probe'
import { freshPostgresUrl, stopSharedPostgres } from '../test/helpers/backends'
import { PostgresStore } from '../src/db/store'

const onPostgres = process.argv.includes('--postgres')
const store = onPostgres ? new PostgresStore(await freshPostgresUrl(), { max: 4 }) : undefined
const t = createTestApp({ store, env: PROBE_ENV })
const ada = await fillWorkspace(t, await personalKey(t, 'ada@example.com'), 'apricot')
const bo = await personalKey(t, 'bo@example.com')
const team = await teamKey(t, 'Team Quince', { ...(await personalKey(t, 'cy@example.com')), email: 'cy@example.com' })
const teamFilled = await fillWorkspace(t, team, 'quince')
const columns = [
  { title: 'personal B → personal A', rows: await probeOperations(t, { ...bo, label: 'B' }, ada) },
  { title: 'team T → personal A', rows: await probeOperations(t, { ...team, label: 'T' }, ada) },
  { title: 'personal B → team T', rows: await probeOperations(t, { ...bo, label: 'B' }, teamFilled) },
]
console.log(`Isolation probe on ${onPostgres ? 'PostgreSQL' : 'SQLite'}: ${columns[0]!.rows.length} operations\n`)
console.log(markdownTable(columns))
const bad = columns.flatMap(c => c.rows.filter(r => !r.ok).map(r => `${c.title}: ${r.operation} ${r.status}`))
console.log(bad.length ? `\n${bad.length} outcome(s) not a refusal:\n${bad.join('\n')}` : '\nevery outcome a refusal')
await store?.close()
if (onPostgres) await stopSharedPostgres()
process.exit(bad.length ? 1 : 0)
