import { afterAll, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { oauthApp } from '../../helpers/oauth'

const servers: { stop(force?: boolean): void }[] = []
afterAll(() => servers.forEach(s => s.stop(true)))

test('an MCP client connects with an access token from the OAuth flow; its charges show source "mcp"', async () => {
  const t = oauthApp()
  const { tokens } = await t.fullFlow({ scope: 'notes:read notes:write summaries:write usage:read' })
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
  servers.push(server)
  const client = new Client({ name: 'oauth-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
  }))
  try {
    const created = await client.callTool({ name: 'createNote', arguments: { title: 'From an agent', content: 'The pilot starts on Monday.' } })
    expect(created.isError ?? false).toBe(false) // MCP: an absent isError means success
    const summary = await client.callTool({ name: 'createSummary', arguments: { text: 'The pilot starts on Monday. Ana will run it.', styleId: 'note' } })
    expect(summary.isError ?? false).toBe(false) // MCP: an absent isError means success
    expect((summary.structuredContent as { creditsCharged: number }).creditsCharged).toBe(2)
    // outside the token's scopes
    const folder = await client.callTool({ name: 'createFolder', arguments: { name: 'No' } })
    expect(folder.isError).toBe(true)
    expect(JSON.stringify(folder.structuredContent)).toContain('insufficient_scope')
  } finally {
    await client.close()
  }
  const usage = await t.app.handle(new Request('http://localhost/v1/usage', { headers: { authorization: `Bearer ${tokens.access_token}` } }))
  const body = (await usage.json()) as { recent: { operation: string; source: string }[] }
  expect(body.recent.map(r => [r.operation, r.source])).toEqual([['createSummary', 'mcp']])
})
