import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../helpers/process'
import { OPERATIONS } from '../../../src/operations'
import { createTestApp, type CallResult } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'

/**
 * Roles on every operation (issue 35, docs/roles.md): a member of a team workspace calls every
 * operation with a key of the workspace (acting with their role), on both back ends. Below the
 * operation's role: 403 insufficient_scope naming both roles, before anything is read; at or above
 * it: never that refusal (what follows is the operation's own answer: 200, 400 for the empty body,
 * 404 for the made-up id…). The roles are written here from the issue's rules (viewer: read, export,
 * ask; editor: write notes, folders, tags, speakers, edits, uploads, transcriptions, summaries, share
 * links; admin: the audit log, retention changes, webhooks), not read from the declarations: a
 * one-line change of any declaration fails this test.
 */
const NEEDED: Record<string, 'none' | 'viewer' | 'editor' | 'admin' | 'owner'> = {
  getApiIndex: 'none', getHealth: 'none',
  listNotes: 'viewer', createNote: 'editor', getNote: 'viewer', updateNote: 'editor', deleteNote: 'editor',
  getNoteStatus: 'viewer', getNoteTranscript: 'viewer', askNoteQuestion: 'viewer', moveNote: 'editor',
  listNoteSpeakers: 'viewer', updateNoteSpeaker: 'editor', answerSpeakerSuggestion: 'editor', updateNoteSegment: 'editor',
  listSpeakerProfiles: 'viewer', getSpeakerProfile: 'viewer', deleteSpeakerProfile: 'editor',
  askLibrary: 'viewer',
  splitNoteSegment: 'editor', mergeNoteSegments: 'editor', reassignNoteWords: 'editor',
  previewNoteReplacement: 'viewer', replaceInNote: 'editor',
  listNoteRevisions: 'viewer', getNoteRevision: 'viewer', restoreNoteRevision: 'editor',
  exportNote: 'viewer',
  createNoteShare: 'editor', listNoteShares: 'viewer', revokeNoteShare: 'editor',
  listFolders: 'viewer', createFolder: 'editor', getFolder: 'viewer', updateFolder: 'editor', deleteFolder: 'editor',
  listTags: 'viewer', createTag: 'editor', updateTag: 'editor', deleteTag: 'editor',
  getNoteTags: 'viewer', addNoteTag: 'editor', removeNoteTag: 'editor',
  createUpload: 'editor', completeUpload: 'editor',
  createTranscription: 'editor', createSummary: 'editor', createYoutubeSummary: 'editor', createNoteSummary: 'editor',
  createAudioTranscription: 'editor', createAudioTranslation: 'editor', listModels: 'viewer',
  getUsage: 'viewer',
  listWebhooks: 'admin', createWebhook: 'admin', deleteWebhook: 'admin', listWebhookDeliveries: 'admin',
  listAuditEvents: 'admin', exportAuditEvents: 'admin',
  getRetentionPolicy: 'viewer', updateRetentionPolicy: 'admin',
  // the workspace's own: any member lists, creates a team, accepts, leaves and makes or revokes their own keys
  // (whose else: the service, by role); the members, invitations, name and SSO mappings are an admin's
  listWorkspaces: 'viewer', createWorkspace: 'viewer', getWorkspace: 'admin', renameWorkspace: 'admin',
  inviteMember: 'admin', revokeInvitation: 'admin', acceptInvitation: 'viewer', changeMemberRole: 'admin',
  removeMember: 'viewer', createWorkspaceKey: 'viewer', revokeWorkspaceKey: 'viewer', setSsoGroups: 'admin',
}

const RANK = { viewer: 0, editor: 1, admin: 2, owner: 3 } as const
type Held = keyof typeof RANK

/** Calls an operation with made-up ids in its path and an empty body (admission comes before either is read). */
async function callOperation(t: ReturnType<typeof createTestApp>, op: { method: string; path: string }, token: string): Promise<CallResult> {
  const path = op.path.replace(/:(\w+)/g, (_, name: string) => (name === 'index' || name === 'version' ? '1' : `made_up_${name}`))
  return t.call(op.method, path, { token, body: op.method === 'GET' || op.method === 'DELETE' ? undefined : {} })
}

function expectRefused(r: CallResult, id: string, held: Held, needed: string) {
  expect({ id, status: r.status, code: r.body?.error?.code }).toEqual({ id, status: 403, code: 'insufficient_scope' })
  expect(r.body.error.message).toContain(`Your role in this workspace is ${held}; ${id} needs ${needed} or above.`)
  expect(r.body.error.details).toEqual([{ field: 'role', issue: `${held} (needed: ${needed})` }])
}

function expectAdmitted(r: CallResult, id: string) {
  expect({ id, refused: r.status === 403 && r.body?.error?.code === 'insufficient_scope', status: r.status < 500 }).toEqual({ id, refused: false, status: true })
}

for (const b of backEnds) describe.skipIf(b.skip)(`roles on every operation on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function team() {
    const t = createTestApp({ store: await open(), env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    const ws = await teamWorkspace(t, 'Roles')
    const keys = {} as Record<Held, string>
    for (const role of Object.keys(RANK) as Held[]) keys[role] = await memberKey(t, ws, (await person(t, `${role}@example.com`)).id, role)
    return { t, keys }
  }

  test('the table names every operation the service serves', () => {
    expect(Object.keys(NEEDED).sort()).toEqual(OPERATIONS.map(o => o.id).sort())
  })

  for (const held of Object.keys(RANK) as Held[]) {
    test(`${held === 'editor' || held === 'admin' || held === 'owner' ? 'an' : 'a'} ${held}: refused exactly the operations that need more`, async () => {
      const { t, keys } = await team()
      for (const op of OPERATIONS) {
        const needed = NEEDED[op.id]!
        const r = await callOperation(t, op, keys[held])
        if (needed !== 'none' && RANK[held] < RANK[needed]) expectRefused(r, op.id, held, needed)
        else expectAdmitted(r, op.id)
      }
    }, 60_000) // some sixty requests on a shared machine: a bound for a hang, not a speed
  }

  test('over MCP a tool is refused as its operation is: a viewer\'s createNote is a tool error naming the role; listNotes answers', async () => {
    const { t, keys } = await team()
    const tool = (name: string, args: Record<string, unknown>) => t.call('POST', '/mcp', {
      token: keys.viewer, headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    })
    const refused = (await tool('createNote', { title: 'Not made', content: 'No.' })).body.result
    expect(refused.isError).toBe(true)
    expect(refused.content[0].text).toStartWith('insufficient_scope: Your role in this workspace is viewer; createNote needs editor or above.')
    const listed = (await tool('listNotes', {})).body.result
    expect(listed.isError ?? false).toBe(false)
    expect(listed.structuredContent?.data ?? JSON.parse(listed.content[0].text).data).toEqual([])
  })

  test('a refused write changes nothing: a viewer\'s createNote and deleteNote leave the library as it was', async () => {
    const { t, keys } = await team()
    const made = await t.call('POST', '/v1/notes', { token: keys.editor, body: { title: 'Kept', content: 'Still here.' } })
    expect(made.status).toBe(201)
    expect((await t.call('POST', '/v1/notes', { token: keys.viewer, body: { title: 'Not made', content: 'No.' } })).status).toBe(403)
    expect((await t.call('DELETE', `/v1/notes/${made.body.id}`, { token: keys.viewer })).status).toBe(403)
    expect(((await t.call('GET', '/v1/notes', { token: keys.viewer })).body.data as { title: string }[]).map(n => n.title)).toEqual(['Kept'])
  })
})

describe('the roles, published', () => {
  test('the OpenAPI document gives each operation its role as x-notesvc-role (none on the public ones)', async () => {
    const t = createTestApp()
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    const published: Record<string, string> = {}
    for (const methods of Object.values<any>(doc.paths)) for (const op of Object.values<any>(methods)) published[op.operationId] = op['x-notesvc-role'] ?? 'none'
    expect(published).toEqual(NEEDED)
  })

  test('each MCP tool\'s description ends with the role it needs', async () => {
    const t = createTestApp()
    const manifest = (await t.call('GET', '/.well-known/mcp.json')).body
    expect(manifest.tools.length).toBeGreaterThan(40)
    for (const tool of manifest.tools as { name: string; description: string }[]) {
      const needed = NEEDED[tool.name]!
      if (needed === 'none') expect(tool.description).not.toContain('Needs the role')
      else expect({ tool: tool.name, ends: tool.description.endsWith(`Needs the role ${needed} or above in the workspace.`) }).toEqual({ tool: tool.name, ends: true })
    }
  })

  test('docs/roles.md is what scripts/roles-table.ts prints, and names each operation with the role of the table above', () => {
    const printed = Bun.spawnSync(['bun', 'run', 'scripts/roles-table.ts'], { cwd: ROOT }).stdout.toString()
    const doc = readFileSync(join(ROOT, 'docs/roles.md'), 'utf8')
    expect(doc).toBe(printed)
    const rows = Object.fromEntries([...doc.matchAll(/^\| (\w+) \| `[^`]+` \| ([^|]+) \|$/gm)].map(m => [m[1]!, m[2]!.trim().replace('none (public)', 'none')]))
    expect(rows).toEqual(NEEDED)
  })
})
