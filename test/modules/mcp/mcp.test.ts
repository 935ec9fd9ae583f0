import { SqliteStore } from '../../../src/db/store'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import mammoth from 'mammoth'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createApp } from '../../../src/app'
import { systemClock } from '../../../src/clock'
import { loadConfig } from '../../../src/config'
import { openDatabase } from '../../../src/db/database'
import type { Scope } from '../../../src/http/contract'
import { createIdGenerator } from '../../../src/ids'
import { silentLogger } from '../../../src/log'
import { CreateFolderRequest } from '../../../src/modules/folders/model'
import { CreateNoteRequest, ListNotesQuery, UpdateNoteRequest } from '../../../src/modules/notes/model'
import { SummaryRequest } from '../../../src/modules/processing/model'
import { createServices } from '../../../src/services'
import { ALL_OPERATIONS, SPEC_SCOPES } from '../../helpers/interface'

/** The app with the MCP module plugged in, served on a loopback port. */
function startServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-mcp-'))
  const bootConfig = loadConfig({ NOTESVC_PUBLIC_URL: 'http://127.0.0.1', NOTESVC_DATA_DIR: dataDir, NOTESVC_LLM: 'builtin' })
  const db = openDatabase(':memory:')
  const clock = systemClock
  const ids = createIdGenerator(() => clock.now().getTime())
  // The public URL is only known once the port is; the server is started first, the app swapped in.
  let fetchApp: (r: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 })
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => fetchApp(r) })
  const base = `http://127.0.0.1:${server.port}`
  const config = { ...bootConfig, publicUrl: base, docsUrl: `${base}/docs` }
  const services = createServices({ config, store: new SqliteStore(db), clock, ids, log: silentLogger })
  const app = createApp({ config, clock, ids, log: silentLogger, services })
  fetchApp = r => app.handle(r)
  const key = async (o: { email?: string; scopes?: Scope[]; sandbox?: boolean } = {}) =>
    (await services.accounts.createKey({ email: o.email ?? 'agent@example.com', scopes: o.scopes, sandbox: o.sandbox })).key
  return { server, base, services, key, db, stop: () => server.stop(true) }
}

async function connect(base: string, token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'notesvc-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  })
  await client.connect(transport)
  return client
}

const plain = (s: unknown) => JSON.parse(JSON.stringify(s))

let srv: ReturnType<typeof startServer>
beforeAll(() => {
  srv = startServer()
})
afterAll(() => srv.stop())

describe('MCP endpoint', () => {
  test('lists one tool per operation, with input schemas from the models', async () => {
    const client = await connect(srv.base, await srv.key())
    try {
      expect(client.getServerVersion()?.name).toBe('notesvc')
      const { tools } = await client.listTools()
      expect(tools.map(t => t.name).sort()).toEqual(ALL_OPERATIONS.map(o => o.id).sort())
      const byName = new Map(tools.map(t => [t.name, t]))
      for (const op of ALL_OPERATIONS) {
        const t = byName.get(op.id)!
        expect(t.inputSchema.type).toBe('object')
        // the description tells an agent which scopes the tool needs (SPEC.md Endpoints)
        for (const scope of op.scopes) expect(t.description, op.id).toContain(scope)
      }
      expect(byName.get('createNote')!.inputSchema).toEqual(plain(CreateNoteRequest))
      expect(byName.get('createFolder')!.inputSchema).toEqual(plain(CreateFolderRequest))
      expect(byName.get('createSummary')!.inputSchema).toEqual(plain(SummaryRequest))
      expect(byName.get('listNotes')!.inputSchema).toEqual(plain(ListNotesQuery))
      // id operations: the path id beside the body's fields
      const update = byName.get('updateNote')!.inputSchema as any
      expect(update.required).toEqual(['id'])
      expect(update.properties.id.type).toBe('string')
      for (const [k, v] of Object.entries(plain(UpdateNoteRequest).properties)) expect(update.properties[k]).toEqual(v)
      expect(update.additionalProperties).toBe(false)
      expect((byName.get('askNoteQuestion')!.inputSchema as any).required).toEqual(['id', 'question'])
      expect(byName.get('deleteNote')!.annotations?.destructiveHint).toBe(true)
    } finally {
      await client.close()
    }
  })

  test('listSpeakerProfiles pages as the API does: limit, offset, hasMore; a limit over 100 refused', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'voices@example.com' }))
    try {
      const account = (await srv.services.accounts.accountOfEmail('voices@example.com'))!.id
      for (const name of ['Cleo', 'Ana', 'Bo']) {
        srv.db.query('INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES (?, ?, 0, ?, \'builtin\', \'[1,0]\', \'2026-11-01T00:00:00.000Z\', \'2026-11-01T00:00:00.000Z\')').run(`spk_${name}`, account, name)
      }
      const first = (await client.callTool({ name: 'listSpeakerProfiles', arguments: { limit: 2 } })).structuredContent as any
      expect({ names: first.data.map((p: any) => p.name), pagination: first.pagination }).toEqual({ names: ['Ana', 'Bo'], pagination: { limit: 2, offset: 0, hasMore: true } })
      const rest = (await client.callTool({ name: 'listSpeakerProfiles', arguments: { limit: 2, offset: 2 } })).structuredContent as any
      expect({ names: rest.data.map((p: any) => p.name), pagination: rest.pagination }).toEqual({ names: ['Cleo'], pagination: { limit: 2, offset: 2, hasMore: false } })
      const refused = await client.callTool({ name: 'listSpeakerProfiles', arguments: { limit: 101 } })
      expect(refused.isError).toBe(true)
      expect((refused.structuredContent as any).error.code).toBe('invalid_request')
    } finally {
      await client.close()
    }
  })

  test('share links over MCP: made, listed with their openings, revoked (issue 33)', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'sharer@example.com' }))
    try {
      const note = (await client.callTool({ name: 'createNote', arguments: { title: 'Shared standup', content: 'Ana ships on Friday.' } })).structuredContent as any
      const made = await client.callTool({ name: 'createNoteShare', arguments: { id: note.id, showSummary: true } })
      expect(made.isError ?? false).toBe(false)
      const share = made.structuredContent as any
      expect(share.url).toMatch(new RegExp(`^${srv.base}/s/[A-Za-z0-9_-]{43}$`))
      const page = await fetch(share.url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('Ana ships on Friday.')
      const listed = (await client.callTool({ name: 'listNoteShares', arguments: { id: note.id } })).structuredContent as any
      expect(listed.data.map((x: any) => [x.id, x.openCount])).toEqual([[share.id, 1]])
      expect(JSON.stringify(listed)).not.toContain(new URL(share.url).pathname.slice(3))
      const revoked = await client.callTool({ name: 'revokeNoteShare', arguments: { id: note.id, shareId: share.id } })
      expect(revoked.isError ?? false).toBe(false)
      expect((await fetch(share.url)).status).toBe(404)
      const other = await connect(srv.base, await srv.key({ email: 'not-the-owner@example.com' }))
      const refused = await other.callTool({ name: 'createNoteShare', arguments: { id: note.id } })
      expect(refused.isError).toBe(true)
      await other.close()
    } finally {
      await client.close()
    }
  })

  test('createNote → getNote → listNotes, updateNote, folders', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'notes@example.com' }))
    try {
      const created = await client.callTool({ name: 'createNote', arguments: { title: 'Standup', content: 'Ana will ship the release on Friday. Bo reviews the docs.' } })
      expect(created.isError ?? false).toBe(false) // MCP: an absent isError means success
      const note = created.structuredContent as any
      expect(note.id).toMatch(/^note_/)
      expect(note.title).toBe('Standup')
      expect(JSON.parse((created.content as any)[0].text)).toEqual(note)

      const got = await client.callTool({ name: 'getNote', arguments: { id: note.id } })
      expect((got.structuredContent as any).id).toBe(note.id)

      const listed = await client.callTool({ name: 'listNotes', arguments: { limit: 10 } })
      expect((listed.structuredContent as any).data.map((n: any) => n.id)).toContain(note.id)
      expect((listed.structuredContent as any).pagination.limit).toBe(10)

      const updated = await client.callTool({ name: 'updateNote', arguments: { id: note.id, isPinned: true } })
      expect((updated.structuredContent as any).isPinned).toBe(true)

      const folder = await client.callTool({ name: 'createFolder', arguments: { name: 'Meetings', color: 'blue' } })
      expect(folder.isError ?? false).toBe(false) // MCP: an absent isError means success
      const f = folder.structuredContent as any
      expect(f.id).toMatch(/^fld_/)
      const folders = await client.callTool({ name: 'listFolders', arguments: {} })
      expect((folders.structuredContent as any).data.map((x: any) => x.name)).toEqual(['Meetings'])

      const deleted = await client.callTool({ name: 'deleteNote', arguments: { id: note.id } })
      expect(deleted.structuredContent).toEqual({ id: note.id, deleted: true })
      const gone = await client.callTool({ name: 'getNote', arguments: { id: note.id } })
      expect(gone.isError).toBe(true)
      expect((gone.structuredContent as any).error.code).toBe('not_found')
    } finally {
      await client.close()
    }
  })

  test('find and replace through the tools: previewNoteReplacement writes nothing, replaceInNote makes one revision by the MCP key (issue 31)', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'replace@example.com' }))
    try {
      const note = (await client.callTool({ name: 'createNote', arguments: { title: 'Standup', content: 'Ana will ship the release on Friday.\n\nBo reviews the release notes.' } })).structuredContent as any
      const preview = await client.callTool({ name: 'previewNoteReplacement', arguments: { id: note.id, find: 'release', replace: 'launch' } })
      expect(preview.structuredContent).toEqual({ count: 2, matches: [
        { segment: 0, before: 'Ana will ship the release on Friday.', after: 'Ana will ship the launch on Friday.' },
        { segment: 1, before: 'Bo reviews the release notes.', after: 'Bo reviews the launch notes.' },
      ] })
      const replaced = await client.callTool({ name: 'replaceInNote', arguments: { id: note.id, find: 'release', replace: 'launch', segments: [1] } })
      expect(replaced.isError ?? false).toBe(false)
      expect(replaced.structuredContent).toEqual({ count: 1, segments: [1], version: 1 })
      const transcript = (await client.callTool({ name: 'getNoteTranscript', arguments: { id: note.id } })).structuredContent as any
      expect(transcript.transcript).toBe('Ana will ship the release on Friday.\n\nBo reviews the launch notes.')
      const revisions = (await client.callTool({ name: 'listNoteRevisions', arguments: { id: note.id } })).structuredContent as any
      expect(revisions.data.map((r: any) => [r.version, r.operation, r.actor.type])).toEqual([[1, 'replaceInNote', 'key'], [0, 'transcribed', null]])
      const bad = await client.callTool({ name: 'replaceInNote', arguments: { id: note.id, find: 'launch', replace: 'x', segments: [9] } })
      expect([bad.isError, (bad.structuredContent as any).error.code]).toEqual([true, 'not_found'])
    } finally {
      await client.close()
    }
  })

  test('deletions and a transcript export through tools are in the audit log as through the API: the key, the origin and user agent of the MCP request, the details', async () => {
    const token = await srv.key({ email: 'audited-agent@example.com' })
    const client = await connect(srv.base, token, { 'user-agent': 'agent-under-audit/2.0' })
    const api = (path: string, method = 'GET') => fetch(`${srv.base}${path}`, { method, headers: { authorization: `Bearer ${token}` } })
    try {
      const note = (await client.callTool({ name: 'createNote', arguments: { title: 'Board minutes', content: 'We agreed the budget.' } })).structuredContent as any
      const folder = (await client.callTool({ name: 'createFolder', arguments: { name: 'Board' } })).structuredContent as any
      const vtt = await client.callTool({ name: 'getNoteTranscript', arguments: { id: note.id, format: 'txt' } })
      expect(vtt.structuredContent).toEqual({ noteId: note.id, format: 'txt', contentType: 'text/plain; charset=utf-8', content: 'We agreed the budget.\n' })
      expect((await client.callTool({ name: 'deleteFolder', arguments: { id: folder.id } })).structuredContent).toEqual({ id: folder.id, deleted: true })
      expect((await client.callTool({ name: 'deleteNote', arguments: { id: note.id } })).structuredContent).toEqual({ id: note.id, deleted: true })

      // `local`: this server hands requests to app.handle, so no socket's address is known (as for the API's own)
      const events = ((await (await api('/v1/audit-events')).json()) as any).data.filter((e: any) => !['key.created', 'account.created'].includes(e.action))
      const keyId = events[0]?.actor.id
      expect(keyId).toMatch(/^key_/)
      expect(events.map((e: any) => ({ action: e.action, actor: e.actor, target: e.target, ip: e.ip, userAgent: e.userAgent, details: e.details }))).toEqual([
        { action: 'note.deleted', actor: { type: 'key', id: keyId }, target: { type: 'note', id: note.id }, ip: 'local', userAgent: 'agent-under-audit/2.0', details: { sandbox: false } },
        { action: 'folder.deleted', actor: { type: 'key', id: keyId }, target: { type: 'folder', id: folder.id }, ip: 'local', userAgent: 'agent-under-audit/2.0', details: { sandbox: false } },
        { action: 'note.transcript_exported', actor: { type: 'key', id: keyId }, target: { type: 'note', id: note.id }, ip: 'local', userAgent: 'agent-under-audit/2.0', details: { format: 'txt', sandbox: false } },
      ])
    } finally {
      await client.close()
    }
  })

  test('getSpeakerProfile reads one remembered voice as GET /v1/speakers/{id} does; another account\'s is not_found', async () => {
    const token = await srv.key({ email: 'voices@example.com' })
    const account = (srv.db.query('SELECT id FROM accounts WHERE email = ?').get('voices@example.com') as { id: string }).id
    const at = '2026-11-01T00:00:00.000Z'
    srv.db.run('INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES (?, ?, 0, ?, ?, ?, ?, ?)', ['spk_mcp_voice', account, 'Maria', 'builtin', '[1,0]', at, at])
    const client = await connect(srv.base, token)
    const stranger = await connect(srv.base, await srv.key({ email: 'stranger@example.com' }))
    try {
      const r = await client.callTool({ name: 'getSpeakerProfile', arguments: { id: 'spk_mcp_voice' } })
      const expected = { id: 'spk_mcp_voice', name: 'Maria', engine: 'builtin', createdAt: at, updatedAt: at }
      expect(r.structuredContent).toEqual(expected)
      expect(await (await fetch(`${srv.base}/v1/speakers/spk_mcp_voice`, { headers: { authorization: `Bearer ${token}` } })).json()).toEqual(expected)
      const refused = await stranger.callTool({ name: 'getSpeakerProfile', arguments: { id: 'spk_mcp_voice' } })
      expect({ isError: refused.isError, code: (refused.structuredContent as any).error.code }).toEqual({ isError: true, code: 'not_found' })
    } finally {
      await client.close()
      await stranger.close()
    }
  })

  test('createSummary charges 2 credits recorded with source "mcp"', async () => {
    const token = await srv.key({ email: 'summaries@example.com' })
    const client = await connect(srv.base, token)
    try {
      const before = (await client.callTool({ name: 'getUsage', arguments: {} })).structuredContent as any
      const r = await client.callTool({
        name: 'createSummary',
        arguments: { text: 'We met on Monday to plan the launch. Ana will write the announcement by Friday. Bo will fix the login bug before the release. The team agreed to ship next week.' },
      })
      expect(r.isError ?? false).toBe(false) // MCP: an absent isError means success
      const s = r.structuredContent as any
      expect(s.creditsCharged).toBe(2)
      expect(typeof s.summary).toBe('string')
      expect(r._meta?.['notesvc/creditsRemaining']).toBe(before.balance.totalRemaining - 2)

      // and the HTTP API sees the same row
      const res = await fetch(`${srv.base}/v1/usage`, { headers: { authorization: `Bearer ${token}` } })
      expect(res.status).toBe(200)
      const usage = await res.json() as any
      expect(usage.recent[0]).toMatchObject({ operation: 'createSummary', credits: 2, source: 'mcp' })
    } finally {
      await client.close()
    }
  })

  test('createNoteSummary: a note summarized again through the tool, 2 credits recorded with source "mcp"; exportNote gives the Markdown as text and the DOCX as base64', async () => {
    const token = await srv.key({ email: 'again@example.com' })
    const client = await connect(srv.base, token)
    try {
      const note = (await client.callTool({ name: 'createNote', arguments: { title: 'Launch', content: 'Ana will write the announcement by Friday. The team agreed to ship next week.' } })).structuredContent as any
      const before = (await client.callTool({ name: 'getUsage', arguments: {} })).structuredContent as any
      const r = await client.callTool({ name: 'createNoteSummary', arguments: { id: note.id, styleId: 'bulletpoints' } })
      expect(r.isError ?? false).toBe(false)
      expect(r.structuredContent).toMatchObject({ id: note.id, status: 'Summarizing', creditsCharged: 2 })
      expect(r._meta?.['notesvc/creditsRemaining']).toBe(before.balance.totalRemaining - 2)
      const usage = await (await fetch(`${srv.base}/v1/usage`, { headers: { authorization: `Bearer ${token}` } })).json() as any
      expect(usage.recent[0]).toMatchObject({ operation: 'createNoteSummary', credits: 2, source: 'mcp', noteId: note.id })

      const other = (await client.callTool({ name: 'createNote', arguments: { title: 'Notes', content: 'Plain words.' } })).structuredContent as any
      const md = (await client.callTool({ name: 'exportNote', arguments: { id: other.id, format: 'md' } })).structuredContent as any
      expect(md).toMatchObject({ noteId: other.id, format: 'md', contentType: 'text/markdown; charset=utf-8' })
      expect(md.content).toContain('# Notes')
      const docx = (await client.callTool({ name: 'exportNote', arguments: { id: other.id, format: 'docx' } })).structuredContent as any
      expect(docx.contentType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document')
      const { value } = await mammoth.extractRawText({ buffer: Buffer.from(docx.contentBase64, 'base64') })
      expect(value).toContain('Plain words.')
    } finally {
      await client.close()
    }
  })

  test('a tool the credential lacks the scope for is a tool error with insufficient_scope', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'reader@example.com', scopes: ['notes:read'] }))
    try {
      const r = await client.callTool({ name: 'createFolder', arguments: { name: 'Nope' } })
      expect(r.isError).toBe(true)
      const env = r.structuredContent as any
      expect(env.error.code).toBe('insufficient_scope')
      expect(env.error.message).toContain('folders:write')
      expect((r.content as any)[0].text).toContain('insufficient_scope')
      // what it may do still works
      const ok = await client.callTool({ name: 'listNotes', arguments: {} })
      expect(ok.isError ?? false).toBe(false) // MCP: an absent isError means success
      // charging operations too: refused before anything is charged
      const s = await client.callTool({ name: 'createSummary', arguments: { text: 'hello there' } })
      expect((s.structuredContent as any).error.code).toBe('insufficient_scope')
    } finally {
      await client.close()
    }
  })

  test('arguments are checked with the model schemas, field by field', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'validation@example.com' }))
    try {
      const r = await client.callTool({ name: 'createNote', arguments: { title: 7, extra: true } })
      expect(r.isError).toBe(true)
      const env = r.structuredContent as any
      expect(env.error.code).toBe('invalid_request')
      const fields = env.error.details.map((d: any) => d.field)
      expect(fields).toContain('title')
      expect(fields).toContain('content')
      const noId = await client.callTool({ name: 'getFolder', arguments: {} })
      expect((noId.structuredContent as any).error.details).toEqual([{ field: 'id', issue: 'is required' }])
      const emptyUpdate = await client.callTool({ name: 'updateFolder', arguments: { id: 'fld_x' } })
      expect((emptyUpdate.structuredContent as any).error.code).toBe('invalid_request')
      const badLimit = await client.callTool({ name: 'listNotes', arguments: { limit: 500 } })
      expect((badLimit.structuredContent as any).error.details[0].field).toBe('limit')
      await expect(client.callTool({ name: 'noSuchTool', arguments: {} })).rejects.toThrow()
    } finally {
      await client.close()
    }
  })

  test('a sandbox key works in the sandbox library and is not charged', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'sandbox@example.com', sandbox: true }))
    try {
      const r = await client.callTool({ name: 'createSummary', arguments: { text: 'Anything at all.' } })
      expect((r.structuredContent as any).creditsCharged).toBe(0)
      expect((r.structuredContent as any).notice).toContain('fixed sample data')
    } finally {
      await client.close()
    }
  })

  test('without a credential: 401 with a WWW-Authenticate header pointing at the protected-resource metadata', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const res = await fetch(`${srv.base}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${srv.base}/.well-known/oauth-protected-resource"`)
    expect(((await res.json()) as any).error.code).toBe('invalid_token')

    const bad = await fetch(`${srv.base}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer svc_live_nope' }, body: JSON.stringify(init) })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('www-authenticate')).toContain(`resource_metadata="${srv.base}/.well-known/oauth-protected-resource"`)
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"')

    // the SDK client sees the refusal too
    await expect(connect(srv.base, 'svc_live_nope')).rejects.toThrow()
  })

  test('GET /mcp (no standalone stream in stateless mode) is 405 once authenticated', async () => {
    const res = await fetch(`${srv.base}/mcp`, { headers: { authorization: `Bearer ${await srv.key()}`, accept: 'text/event-stream' } })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
  })

  test('the manifest is served without a credential', async () => {
    const res = await fetch(`${srv.base}/.well-known/mcp.json`)
    expect(res.status).toBe(200)
    const m = await res.json() as any
    expect(m.name).toBe('notesvc')
    expect(m.endpoint).toBe(`${srv.base}/mcp`)
    expect(m.transport).toBe('streamable-http')
    expect(m.authentication.resource_metadata).toBe(`${srv.base}/.well-known/oauth-protected-resource`)
    expect(m.tools.map((t: any) => t.name).sort()).toEqual(ALL_OPERATIONS.map(o => o.id).sort())
    // each tool's scopes and cost as SPEC.md's Endpoints tables give them
    const listed = new Map<string, any>(m.tools.map((t: any) => [t.name, t]))
    for (const op of ALL_OPERATIONS) expect({ op: op.id, scopes: listed.get(op.id).scopes, credits: listed.get(op.id).credits }).toEqual({ op: op.id, scopes: op.scopes, credits: op.cost })
    expect(m.authentication.scopes).toEqual(SPEC_SCOPES)

    const index = await (await fetch(`${srv.base}/v1`)).json() as any
    expect(index.mcp).toBe(m.endpoint)
  })
})

describe('getHealth over MCP', () => {
  test('answers as GET /v1/health does: with detail, the database back end and the live job workers', async () => {
    const client = await connect(srv.base, await srv.key({ email: 'health@example.com' }))
    try {
      const plainHealth = (await client.callTool({ name: 'getHealth', arguments: {} })).structuredContent as any
      expect(plainHealth).toEqual(await (await fetch(`${srv.base}/v1/health`)).json())
      expect(plainHealth.database).toBeUndefined()
      const detailed = (await client.callTool({ name: 'getHealth', arguments: { detail: '1' } })).structuredContent as any
      expect(detailed).toEqual(await (await fetch(`${srv.base}/v1/health?detail=1`)).json())
      expect(detailed).toMatchObject({ database: 'sqlite', workers: 0 })
    } finally {
      await client.close()
    }
  })
})
