import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createApp } from '../../../src/app'
import { systemClock } from '../../../src/clock'
import { loadConfig } from '../../../src/config'
import { openDatabase } from '../../../src/db/database'
import { SqliteStore } from '../../../src/db/store'
import { createIdGenerator } from '../../../src/ids'
import { silentLogger } from '../../../src/log'
import { createServices } from '../../../src/services'

/** The app with its MCP endpoint on a loopback port, as an agent reaches it (the MCP SDK's client). */
function startServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-tags-mcp-'))
  const clock = systemClock
  const ids = createIdGenerator(() => clock.now().getTime())
  let fetchApp: (r: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 })
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => fetchApp(r) })
  const base = `http://127.0.0.1:${server.port}`
  const config = { ...loadConfig({ NOTESVC_PUBLIC_URL: base, NOTESVC_DATA_DIR: dataDir, NOTESVC_LLM: 'builtin' }), docsUrl: `${base}/docs` }
  const services = createServices({ config, store: new SqliteStore(openDatabase(':memory:')), clock, ids, log: silentLogger })
  const app = createApp({ config, clock, ids, log: silentLogger, services })
  fetchApp = r => app.handle(r)
  return { server, base, services }
}

let srv: ReturnType<typeof startServer>
beforeAll(() => {
  srv = startServer()
})
afterAll(() => srv.server.stop(true))

async function connect(email: string): Promise<Client> {
  const token = (await srv.services.accounts.createKey({ email })).key
  const client = new Client({ name: 'notesvc-tags-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const content = (r: unknown) => (r as { structuredContent: any }).structuredContent

test('an agent adds tags to notes, lists the tags, and lists the notes carrying two of them', async () => {
  const client = await connect('agent@example.com')
  try {
    const note = async (title: string) => content(await client.callTool({ name: 'createNote', arguments: { title, content: `${title}.` } })).id as string
    const both = await note('Quarterly budget review')
    const one = await note('Budget draft')
    const added = await client.callTool({ name: 'addNoteTag', arguments: { id: both, tags: ['finance', 'Q3'] } })
    expect(added.isError).toBeFalsy()
    expect(content(added).data.map((t: any) => t.name)).toEqual(['finance', 'Q3'])
    await client.callTool({ name: 'addNoteTag', arguments: { id: one, tags: ['Finance'] } })
    expect(content(await client.callTool({ name: 'listTags', arguments: {} })).data.map((t: any) => t.name)).toEqual(['finance', 'Q3'])
    const listed = content(await client.callTool({ name: 'listNotes', arguments: { tag: ['finance', 'q3'] } }))
    expect(listed.data.map((n: any) => n.title)).toEqual(['Quarterly budget review'])
    expect(listed.data[0].tags.map((t: any) => t.name)).toEqual(['finance', 'Q3'])
    // a bad name is the tool's error, saying what to send
    const refused = await client.callTool({ name: 'addNoteTag', arguments: { id: one, tags: ['a\u0000b'] } })
    expect(refused.isError).toBe(true)
    expect(JSON.stringify(refused.content)).toContain('NUL character')
  } finally {
    await client.close()
  }
  // another account's agent sees none of it
  const other = await connect('other@example.com')
  try {
    expect(content(await other.callTool({ name: 'listTags', arguments: {} })).data).toEqual([])
    expect(content(await other.callTool({ name: 'listNotes', arguments: { tag: ['finance'] } })).data).toEqual([])
  } finally {
    await other.close()
  }
})
