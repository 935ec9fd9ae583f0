/**
 * The isolation probe of issue 35, on SQLite and on PostgreSQL. Workspace A (a person's own) and a team
 * workspace T are filled with one of everything; then every operation of the registry is called with
 * B's key (another person's own workspace) on A's ids, with T's key on A's ids and with B's key on T's
 * ids: 404 or 403, or for an id used as a filter the answer an id that exists nowhere gets, and never
 * anything of the target in an answer. Then the MCP tools and the web pages with B's credentials. Every
 * SQL statement of the run is recorded below the repositories (test/helpers/scope-recorder.ts) and must
 * name the caller's workspace in each library table's account_id. The table is printed
 * (scripts/isolation-table.ts prints it as Markdown).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { readFileSync } from 'node:fs'
import { createTestApp } from '../helpers/app'
import { migratedMemoryStore } from '../helpers/memory-store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'
import { freePort } from '../helpers/process'
import { cookieBrowser, field } from '../helpers/web'
import { PROBE_ENV, fillWorkspace, markdownTable, personalKey, probeOperations, teamKey, type Filled, type ProbeRow } from '../helpers/isolation-probe'
import { unreachedMethods, checkScoping, createScopeRecorder, describeViolation, markStatement, readPostgresLog, type Recorded, type ScopeRecorder } from '../helpers/scope-recorder'
import { migrateStore } from '../../src/db/migrate-store'
import { postgresMigrations } from '../../src/db/migrations-postgres'
import { PostgresStore, type Store } from '../../src/db/store'
import { OPERATIONS } from '../../src/operations'
import { createFoldersRepo } from '../../src/modules/folders/repo'
import { createTagsRepo } from '../../src/modules/tags/repo'
import { createSpeakersRepo } from '../../src/modules/notes/speakers-repo'
import { createWebhooksRepo } from '../../src/modules/webhooks/repo'
import { createAuditRepo } from '../../src/modules/audit/repo'
import { createRetentionRepo } from '../../src/modules/retention/repo'
import { createSharesRepo } from '../../src/modules/sharing/repo'
import { createUploadsRepo } from '../../src/modules/uploads/repo'
import { createRevisionsRepo } from '../../src/modules/notes/revisions-repo'
import { notesRepoFor } from '../../src/services'
import { createPlantedRepo } from '../fixtures/planted-repo'

const PASSWORD = 'a long enough password 35'

/** The repository objects of the library tables, whose every method the run must reach (or NOT_REACHED name). */
function scopedRepos(store: Store) {
  return [
    { file: 'src/modules/folders/repo.ts', repo: createFoldersRepo(store) },
    { file: 'src/modules/tags/repo.ts', repo: createTagsRepo(store) },
    { file: 'src/modules/notes/speakers-repo.ts', repo: createSpeakersRepo(store) },
    { file: 'src/modules/webhooks/repo.ts', repo: createWebhooksRepo(store) },
    { file: 'src/modules/audit/repo.ts', repo: createAuditRepo(store) },
    { file: 'src/modules/retention/repo.ts', repo: createRetentionRepo(store) },
    { file: 'src/modules/sharing/repo.ts', repo: createSharesRepo(store) },
    { file: 'src/modules/uploads/repo.ts', repo: createUploadsRepo(store) },
    { file: 'src/modules/notes/revisions-repo.ts', repo: createRevisionsRepo(store) },
    { file: 'src/modules/notes/repo.ts', repo: notesRepoFor(store) },
  ]
}

/** Repository methods the probe's run does not reach, each with why (a new method not here fails the check). */
const NOT_REACHED: Record<string, string> = {
  // the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)
  'src/modules/notes/repo.ts listJson': "the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)",
  'src/modules/notes/repo.ts listPage': "the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)",
  'src/modules/notes/repo.ts pageKey': "the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)",
  'src/modules/notes/repo.ts keptPage': "the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)",
  'src/modules/notes/repo.ts keptBody': "the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)",
  'src/modules/notes/repo.ts searchPage': "the listing's statements are written in repo.sqlite.ts / repo.postgres.ts and named there (checked as those files' functions)",
  // its statements are built by a helper (updateColumns, saveTranscript's) and named there
  'src/modules/notes/repo.ts write': "its statements are built by a helper (updateColumns, saveTranscript's) and named there",
  'src/modules/notes/repo.ts saveEdit': "its statements are built by a helper (updateColumns, saveTranscript's) and named there",
  'src/modules/notes/repo.ts remakeTitle': "its statements are built by a helper (updateColumns, saveTranscript's) and named there",
  // its statement is a module constant (INSERT) run in a tail call: named by the caller's frame (audit/service.ts append)
  'src/modules/audit/repo.ts append': "its statement is a module constant (INSERT) run in a tail call: named by the caller's frame (audit/service.ts append)",
  'src/modules/audit/repo.ts appendRead': "its statement is a module constant (INSERT) run in a tail call: named by the caller's frame (audit/service.ts append)",
  // a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe
  'src/modules/notes/repo.ts agedPage': 'a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe',
  'src/modules/notes/repo.ts markMediaRemoved': 'a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe',
  'src/modules/notes/repo.ts deleteSettled': 'a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe',
  'src/modules/retention/repo.ts remove': 'a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe',
  'src/modules/audit/repo.ts pruneBefore': 'a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe',
  'src/modules/webhooks/repo.ts prune': 'a sweep with no caller (retention, audit pruning, webhook pruning): not run by the probe',
  // the webhook sender's (no caller): no delivery is due within the probe's run
  'src/modules/webhooks/repo.ts byId': "the webhook sender's (no caller): no delivery is due within the probe's run",
  'src/modules/webhooks/repo.ts enqueue': "the webhook sender's (no caller): no delivery is due within the probe's run",
  'src/modules/webhooks/repo.ts logAttempt': "the webhook sender's (no caller): no delivery is due within the probe's run",
  'src/modules/webhooks/repo.ts disable': "the webhook sender's (no caller): no delivery is due within the probe's run",
  'src/modules/webhooks/repo.ts outboxOf': "the webhook sender's (no caller): no delivery is due within the probe's run",
  // the public share page's (opened by token, no credential): not part of the API probe
  'src/modules/sharing/repo.ts get': "the public share page's (opened by token, no credential): not part of the API probe",
  'src/modules/sharing/repo.ts noteRevision': "the public share page's (opened by token, no credential): not part of the API probe",
  'src/modules/sharing/repo.ts byTokenHash': "the public share page's (opened by token, no credential): not part of the API probe",
  'src/modules/sharing/repo.ts countOpened': "the public share page's (opened by token, no credential): not part of the API probe",
  // a speaker suggestion (a new recording matched against remembered voices): the probe's notes are not processed by an engine
  'src/modules/notes/speakers-repo.ts profilesFor': "a speaker suggestion (a new recording matched against remembered voices): the probe's notes are not processed by an engine",
  // the probe's own-use bodies do not reach it (updateTag renames to a name in use: 409; removeNoteTag/detachAll after deleteTag; the web library's durations; completion after processing)
  'src/modules/tags/repo.ts update': "the probe's own-use bodies do not reach it (updateTag renames to a name in use: 409; removeNoteTag/detachAll after deleteTag; the web library's durations; completion after processing)",
  'src/modules/tags/repo.ts detach': "the probe's own-use bodies do not reach it (updateTag renames to a name in use: 409; removeNoteTag/detachAll after deleteTag; the web library's durations; completion after processing)",
  'src/modules/tags/repo.ts detachAll': "the probe's own-use bodies do not reach it (updateTag renames to a name in use: 409; removeNoteTag/detachAll after deleteTag; the web library's durations; completion after processing)",
  'src/modules/uploads/repo.ts durations': "the probe's own-use bodies do not reach it (updateTag renames to a name in use: 409; removeNoteTag/detachAll after deleteTag; the web library's durations; completion after processing)",
  'src/modules/uploads/repo.ts markCompleted': "the probe's own-use bodies do not reach it (updateTag renames to a name in use: 409; removeNoteTag/detachAll after deleteTag; the web library's durations; completion after processing)",
}

interface Run {
  columns: { title: string; rows: ProbeRow[] }[]
  /** A's own use of every operation (for the repository check) */
  ordinary: ProbeRow[]
  mcp: { tool: string; isError: boolean; text: string }[]
  pages: { what: string; status: number; sameAsUnknown: boolean; leaked: boolean }[]
  statements: () => Recorded[]
  a: Filled
  aBefore: string
  aAfter: string
}

/** A's id of the kind a path's :id names */
function idUnder(path: string, a: Filled): string {
  const byResource: Record<string, string> = { notes: a.ids.note, speakers: a.ids.profile, folders: a.ids.folder, tags: a.ids.tag, webhooks: a.ids.webhook, uploads: a.ids.pendingUpload }
  return byResource[path.split('/')[2]!] ?? a.workspace
}

/** What A itself sees of its library, to compare before and after the probes. */
async function libraryOf(t: ReturnType<typeof createTestApp>, a: Filled): Promise<string> {
  const seen = []
  for (const path of ['/v1/notes', `/v1/notes/${a.ids.note}`, `/v1/notes/${a.ids.note}/transcript`, '/v1/folders', '/v1/tags', '/v1/speakers', '/v1/webhooks', `/v1/notes/${a.ids.note}/shares`, `/v1/notes/${a.ids.note}/revisions`]) {
    const r = await t.call('GET', path, { token: a.key })
    seen.push([path, r.status, r.body])
  }
  return JSON.stringify(seen)
}

async function probeRun(store: Store, rec: ScopeRecorder, port: number): Promise<Run> {
  const origin = `http://127.0.0.1:${port}`
  const t = createTestApp({ store, env: { ...PROBE_ENV, NOTESVC_PUBLIC_URL: origin } })
  // requests over HTTP (the MCP client's) are the caller their key names
  const keyOwners = new Map<string, string>()
  const server = Bun.serve({
    port, hostname: '127.0.0.1',
    fetch: r => {
      const owner = keyOwners.get(r.headers.get('authorization')?.replace(/^Bearer /, '') ?? '')
      return owner ? rec.as(owner, `HTTP ${r.method} ${new URL(r.url).pathname}`, () => t.app.handle(r)) : t.app.handle(r)
    },
  })
  try {
    // keys made as the CLI makes them: the operator's statements, listed apart
    const a = await fillWorkspace(t, await rec.operator('accounts create-key ada', () => personalKey(t, 'ada@example.com')), 'apricot', rec)
    const b = await rec.operator('accounts create-key bo', () => personalKey(t, 'bo@example.com'))
    const cy = await rec.operator('accounts create-key cy', () => personalKey(t, 'cy@example.com'))
    // the team made through the API, its key made by its owner from the browser, in the team
    const team = await teamKey(t, 'Team Quince', { ...cy, email: 'cy@example.com' }, rec)
    keyOwners.set(b.key, b.workspace)
    const teamFilled = await fillWorkspace(t, team, 'quince', rec)
    const aBefore = await rec.as(a.workspace, 'A reads its library', () => libraryOf(t, a))
    const columns = [
      { title: 'personal B → personal A', rows: await probeOperations(t, { ...b, label: 'B' }, a, rec) },
      { title: 'team T → personal A', rows: await probeOperations(t, { ...team, label: 'T' }, a, rec) },
      { title: 'personal B → team T', rows: await probeOperations(t, { ...b, label: 'B' }, teamFilled, rec) },
    ]
    // MCP: B's key, tools on A's ids
    const mcp: Run['mcp'] = []
    const client = new Client({ name: 'isolation-probe', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${b.key}` } } }))
    try {
      // every tool that reads one thing by its id (GET …/:id), and a change, with A's ids
      const listed = new Set((await client.listTools()).tools.map(x => x.name))
      const byId = OPERATIONS.filter(o => o.method === 'GET' && /^\/v1\/\w+\/:id(\/\w+)?$/.test(o.path) && listed.has(o.id))
      // (with the query's required values: exportNote's format)
      const required = (o: (typeof OPERATIONS)[number]) => Object.fromEntries(((o as { query?: any }).query?.required ?? []).map((k: string) => [k, (o as { query?: any }).query.properties[k].anyOf?.[0]?.const ?? 'probe']))
      const calls: [string, Record<string, unknown>][] = [...byId.map(o => [o.id, { id: idUnder(o.path, a), ...required(o) }] as [string, Record<string, unknown>]), ['updateNote', { id: a.ids.note, title: 'taken' }]]
      for (const [tool, args] of calls) {
        const r = await client.callTool({ name: tool, arguments: args })
        mcp.push({ tool, isError: r.isError === true, text: JSON.stringify(r.content) })
      }
    } finally {
      await client.close()
    }
    // the web pages with B's session: A's note page, its recording, the API as the session, A's workspace named
    await rec.operator('web set-password bo', () => t.services.web.setPassword('bo@example.com', PASSWORD))
    const browser = cookieBrowser(origin, r => rec.as(b.workspace, `B web ${r.method} ${new URL(r.url).pathname}`, () => t.app.handle(r)))
    const signin = await browser.signIn('bo@example.com', PASSWORD, '/')
    expect(signin.status).toBe(303)
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec((await browser.get('/')).text)?.[1] ?? field((await browser.get('/settings')).text, 'csrf')!
    const unknown = a.ids.note.slice(0, -1) + (a.ids.note.endsWith('a') ? 'b' : 'a')
    const pages: Run['pages'] = []
    for (const [what, path, headers] of [
      ['note page', '/notes/{id}', {}], ['recording', '/notes/{id}/media', {}], ['API as the session', '/v1/notes/{id}', { 'x-csrf-token': csrf }],
      ['API as the session, A\'s workspace named', '/v1/notes/{id}', { 'x-csrf-token': csrf, 'x-notesvc-workspace': a.workspace }],
    ] as const) {
      const mine = await browser.get(path.replace('{id}', a.ids.note), headers)
      const other = await browser.get(path.replace('{id}', unknown), headers)
      const seen = (r: typeof mine, id: string) => `${r.status} ${r.text.replaceAll(id, '{id}').replaceAll(/req_[0-9a-f-]+/g, 'req')}`
      pages.push({ what, status: mine.status, sameAsUnknown: seen(mine, a.ids.note) === seen(other, unknown), leaked: mine.text.includes('apricot') })
    }
    const aAfter = await rec.as(a.workspace, 'A reads its library', () => libraryOf(t, a))
    // then A's ordinary use of its own library, every operation on its own ids (deletions last), for
    // the repository check: the statements of the answers that find something, not only of refusals
    const ordinary = await probeOperations(t, { ...a, label: 'A (own)' }, a, rec)
    return { columns, ordinary, mcp, pages, statements: () => rec.statements, a, aBefore, aAfter }
  } finally {
    server.stop(true)
  }
}

const pgSkip = postgresUnavailable()
const runs: Record<string, Promise<Run>> = {}
let pg: PostgresCluster | null = null
const stores: Store[] = []

beforeAll(async () => {
  const sqlite = migratedMemoryStore()
  const sqliteRec = createScopeRecorder()
  sqliteRec.attachSqlite(sqlite.db)
  stores.push(sqlite)
  runs.sqlite = probeRun(sqlite, sqliteRec, await freePort())
  await runs.sqlite.catch(() => {})
  if (pgSkip) return
  pg = await startPostgres({ logStatements: true })
  const store = new PostgresStore(await pg.createDatabase('notesvc_probe'), { max: 4 })
  stores.push(store)
  await migrateStore(store, postgresMigrations())
  const logFrom = readFileSync(pg.logPath, 'utf8').length
  const pgRec = createScopeRecorder({ mark: async text => { await store.run(markStatement(text)) } })
  const log = () => readPostgresLog(readFileSync(pg!.logPath, 'utf8').slice(logFrom))
  runs.postgres = probeRun(store, pgRec, await freePort()).then(r => ({ ...r, statements: log }))
  await runs.postgres.catch(() => {})
}, 600_000)

afterAll(async () => {
  for (const s of stores) await s.close()
  await pg?.stop()
})

for (const backEnd of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backEnd === 'postgres' && pgSkip !== null)(`isolation probe on ${backEnd}`, () => {
    test('every operation of the registry, with another workspace\'s key on the ids of A (and of a team), is refused and shows nothing of it', async () => {
      const run = await runs[backEnd]!
      console.log(`\nIsolation probe on ${backEnd}: ${run.columns[0]!.rows.length} operations × ${run.columns.length} credentials\n${markdownTable(run.columns)}`)
      const notRefused = run.columns.flatMap(c => c.rows.filter(r => !r.ok).map(r => `${c.title}: ${r.operation} answered ${r.status} ${r.code ?? ''}${r.leaked.length ? `, showing ${r.leaked.join(', ')}` : ''}`))
      expect(notRefused).toEqual([])
      // the probe reached every operation that needs a credential, in each column
      for (const c of run.columns) expect(c.rows.length).toBeGreaterThan(50)
      expect(run.aAfter).toBe(run.aBefore)
    })

    test('MCP tools with B\'s key on A\'s ids: errors that show nothing of A', async () => {
      const run = await runs[backEnd]!
      console.log(`MCP on ${backEnd}: ${run.mcp.map(m => `${m.tool} ${m.isError ? 'error' : 'ok'} ${m.text.slice(0, 80)}`).join('\n  ')}`)
      for (const m of run.mcp) {
        expect({ tool: m.tool, isError: m.isError, leaked: m.text.includes('apricot') }).toEqual({ tool: m.tool, isError: true, leaked: false })
        expect(m.text).toContain('not_found')
      }
    })

    test('the web pages with B\'s session: A\'s note is what an unknown id is, and naming A\'s workspace is refused', async () => {
      const run = await runs[backEnd]!
      console.log(`Web on ${backEnd}: ${run.pages.map(p => `${p.what}: ${p.status}${p.sameAsUnknown ? ' (= unknown id)' : ''}`).join('; ')}`)
      for (const p of run.pages) {
        expect({ what: p.what, leaked: p.leaked }).toEqual({ what: p.what, leaked: false })
        // the note page is the library's shell for any id (its script then asks the API, refused below)
        if (p.what.includes('workspace named')) expect(p.status).toBe(403)
        else expect({ what: p.what, sameAsUnknown: p.sameAsUnknown }).toEqual({ what: p.what, sameAsUnknown: true })
        if (p.what.startsWith('API') || p.what === 'recording') expect(p.status).toBeGreaterThanOrEqual(400)
      }
    })

    test('the repository check: every statement on a library table names the caller\'s workspace', async () => {
      const run = await runs[backEnd]!
      expect(run.ordinary.filter(r => !r.ok).map(r => `${r.operation} ${r.status}`)).toEqual([])
      const report = checkScoping(run.statements(), backEnd)
      console.log(`Repository check on ${backEnd}: ${run.statements().length} statements recorded, ${report.checked} on library tables checked against the caller's workspace; ` +
        `allowed after a parent: ${report.afterParent.map(a => `${a.name} ×${a.count}`).join(', ')}; no caller: ${report.background.map(a => `${a.name} ×${a.count}`).join(', ') || 'none'}; the operator (CLI): ${report.operator.map(a => `${a.name} ×${a.count}`).join(', ')}`)
      expect(report.violations.map(describeViolation)).toEqual([])
      expect(report.checked).toBeGreaterThan(300)
      const unreached = unreachedMethods(report, scopedRepos(stores[backEnd === 'sqlite' ? 0 : 1]!), NOT_REACHED)
      console.log(`Repository methods not reached on ${backEnd}: ${unreached.join('\n') || 'none'}`)
      expect(unreached).toEqual([])
    })
  })
}

describe('the repository check itself', () => {
  test('a planted repository function without account_id fails the check, named with its table; so does one bound to another workspace', async () => {
    const store = migratedMemoryStore()
    const rec = createScopeRecorder({ sources: ['test/fixtures/planted-repo.ts'] })
    rec.attachSqlite(store.db)
    const t = createTestApp({ store, env: PROBE_ENV })
    const a = await rec.operator('key a', () => personalKey(t, 'ada@example.com'))
    const b = await rec.operator('key b', () => personalKey(t, 'bo@example.com'))
    const note = await rec.as(a.workspace, 'A creates a note', () => t.call('POST', '/v1/notes', { token: a.key, body: { title: 'apricot', content: 'x' } }))
    const planted = createPlantedRepo(store)
    await rec.as(b.workspace, 'B through the planted repo', async () => {
      await planted.findNote(note.body.id)
      await planted.findFolderOf(a.workspace, 'fld_x')
    })
    const violations = checkScoping(rec.statements, 'sqlite').violations
    expect(violations.map(v => ({ fn: v.fn.replace(/:\d+ /, ' '), table: v.table, why: v.why }))).toEqual([
      { fn: 'test/fixtures/planted-repo.ts findNote', table: 'notes', why: 'no account_id = ? for notes' },
      { fn: 'test/fixtures/planted-repo.ts findFolderOf', table: 'folders', why: `folders.account_id is bound to ${a.workspace}, not the caller's workspace ${b.workspace}` },
    ])
  })
})
