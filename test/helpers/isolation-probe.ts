/**
 * The isolation probe of issue 35: a workspace filled with one of everything, then every operation of
 * the registry (OPERATIONS, iterated, never listed) called with another workspace's credential, its
 * path parameters and body naming the first workspace's ids. Shared by test/system/isolation-probe.test.ts
 * and scripts/isolation-table.ts (which prints the table as Markdown).
 */
import { OPERATIONS } from '../../src/operations'
import type { Operation } from '../../src/http/contract'
import { makeWav } from '../fixtures/wav'
import type { createTestApp, CallResult } from './app'
import type { ScopeRecorder } from './scope-recorder'
import { voicedNote } from './voiced-note'
import { cookieBrowser, field } from './web'

type TestApp = ReturnType<typeof createTestApp>

/** A workspace's credential and the ids of what it holds. */
export interface Filled {
  name: string
  workspace: string
  key: string
  ids: { note: string; folder: string; tag: string; profile: string; webhook: string; share: string; upload: string; pendingUpload: string; key: string; member: string; invitation: string }
  /** the words only this workspace's content holds (a leak of content shows them) */
  marks: string[]
}

export interface ProbeRow {
  operation: string
  method: string
  path: string
  /** whether the request named the other workspace's ids (path or body) */
  namesIds: boolean
  status: number
  code: string | null
  /** what the answer body holds of the other workspace: its ids or marks found */
  leaked: string[]
  /** for an answer other than 404/403 to a request naming the target's ids: whether it equals the answer for ids that exist nowhere */
  sameAsNowhere: boolean | null
  ok: boolean
}

/** what a caller asks on the app: `as(workspace, label, fn)` of a recorder, or just fn */
const asCaller = (rec: ScopeRecorder | undefined) => <T>(workspace: string, label: string, fn: () => Promise<T>) => (rec ? rec.as(workspace, label, fn) : fn())

/** A workspace's credential: the workspace, its key and the key's id, and the person the key acts as. */
export interface Credential {
  workspace: string
  key: string
  keyId: string
  person: string
}

/** A person's personal workspace: a key made as the CLI makes one. */
export async function personalKey(t: TestApp, email: string): Promise<Credential> {
  const { key, info, account } = await t.services.accounts.createKey({ email, plan: 'pro' })
  return { workspace: account.id, key, keyId: info.id, person: account.id }
}

/**
 * A team workspace made through the API by `owner` (createWorkspace with their own key), and a key
 * its owner made for it from the browser, in the team (createWorkspaceKey with X-Notesvc-Workspace).
 */
export async function teamKey(t: TestApp, name: string, owner: Credential & { email: string }, rec?: ScopeRecorder): Promise<Credential> {
  const as = asCaller(rec)
  const ownerEmail = owner.email
  const made = await as(owner.workspace, 'createWorkspace', () => t.call('POST', '/v1/workspaces', { token: owner.key, body: { name } }))
  if (made.status !== 201) throw new Error(`POST /v1/workspaces: ${made.text}`)
  const team: string = made.body.id
  const password = 'the team owner\'s password 35'
  await (rec ? rec.operator('web set-password', () => t.services.web.setPassword(ownerEmail, password)) : t.services.web.setPassword(ownerEmail, password))
  const origin = new URL(t.config.publicUrl).origin
  const browser = cookieBrowser(origin, r => as(owner.workspace, `browser ${new URL(r.url).pathname}`, () => t.app.handle(r)))
  if ((await browser.signIn(ownerEmail, password)).status !== 303) throw new Error(`${ownerEmail} could not sign in`)
  const csrf = field((await browser.get('/settings')).text, 'csrf')!
  const r = await as(team, 'createWorkspaceKey', () => t.app.handle(new Request(`${origin}/v1/workspaces/${team}/keys`, {
    method: 'POST', body: JSON.stringify({ name: 'team key' }),
    headers: { cookie: [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'x-csrf-token': csrf, origin, 'content-type': 'application/json', 'x-notesvc-workspace': team },
  })))
  const body = await r.json() as { id: string; key: string }
  if (r.status !== 201) throw new Error(`POST /v1/workspaces/${team}/keys: ${JSON.stringify(body)}`)
  return { workspace: team, key: body.key, keyId: body.id, person: owner.workspace }
}

/** Fills a workspace through the API with one of everything: a note with a transcript, its revision and voice, a folder, a tag, a webhook, a share link, an export (audit), a pending upload. */
export async function fillWorkspace(t: TestApp, who: Credential, word: string, rec?: ScopeRecorder): Promise<Filled> {
  const as = asCaller(rec)
  const ok = (method: string, path: string, body?: unknown) => as(who.workspace, `fill ${method} ${path}`, async () => {
    const res = await t.call(method, path, { token: who.key, body })
    if (res.status >= 300) throw new Error(`${word}: ${method} ${path}: ${res.status} ${res.text}`)
    return res.body
  })
  const folder = await ok('POST', '/v1/folders', { name: `${word} folder` })
  const tag = await ok('POST', '/v1/tags', { name: `${word}-tag` })
  const { noteId, uploadId } = await as(who.workspace, 'fill voiced note', () => voicedNote(t, who.key, { title: `${word} meeting`, text: `The ${word} roadmap is ready.`, speakerName: `${word} speaker` }))
  await ok('PATCH', `/v1/notes/${noteId}`, { folderId: folder.id })
  await ok('POST', `/v1/notes/${noteId}/tags`, { tags: [tag.name] })
  await ok('PATCH', `/v1/notes/${noteId}/segments/0`, { text: `The ${word} roadmap is done.` })
  const share = await ok('POST', `/v1/notes/${noteId}/shares`, {})
  await ok('GET', `/v1/notes/${noteId}/export?format=md`)
  const webhook = await ok('POST', '/v1/webhooks', { url: `http://127.0.0.1:8080/${word}`, events: ['note.completed'] })
  const profiles = await ok('GET', '/v1/speakers')
  const wav = makeWav({ seconds: 1 })
  const pending = await ok('POST', '/v1/uploads', { fileName: `${word}.wav`, contentType: 'audio/wav', fileSize: wav.length })
  // a team's open invitation (a personal workspace has none: its id stands for one that exists nowhere)
  const invitation = who.workspace === who.person ? { id: 'inv_nowhere' } : await ok('POST', `/v1/workspaces/${who.workspace}/invitations`, { email: `invited-${word}@example.com`, role: 'viewer' })
  return {
    name: word, workspace: who.workspace, key: who.key,
    ids: { note: noteId, folder: folder.id, tag: tag.id, profile: profiles.data[0].id, webhook: webhook.id, share: share.id, upload: uploadId, pendingUpload: pending.noteId, key: who.keyId, member: who.person, invitation: invitation.id },
    marks: [word],
  }
}

/** The value of a path parameter, from the target's ids: by the parameter's name and the resource the path is under. */
function pathValue(path: string, param: string, target: Filled): string {
  const resource = path.split('/')[2]!
  const byResource: Record<string, string> = {
    notes: target.ids.note, speakers: target.ids.profile, folders: target.ids.folder, tags: target.ids.tag,
    uploads: target.ids.pendingUpload, webhooks: target.ids.webhook, workspaces: target.workspace,
  }
  const byName: Record<string, string> = { speakerId: 'A', index: '0', version: '1', shareId: target.ids.share, tagId: target.ids.tag, accountId: target.ids.member, keyId: target.ids.key, invitationId: target.ids.invitation }
  const value = param === 'id' ? byResource[resource] : byName[param]
  if (value === undefined) throw new Error(`the isolation probe does not know what :${param} of ${path} names; add it to pathValue (test/helpers/isolation-probe.ts)`)
  return value
}

/** An id of the target for a body field named like one (folderId, noteIds, workspaceId, …), or undefined. */
function idForField(name: string, target: Filled): string | undefined {
  const n = name.replace(/s$/, '')
  const byField: Record<string, string> = { folderId: target.ids.folder, noteId: target.ids.note, tagId: target.ids.tag, profileId: target.ids.profile, workspaceId: target.workspace, uploadId: target.ids.pendingUpload, webhookId: target.ids.webhook, shareId: target.ids.share }
  return byField[n]
}

/** A value the JSON schema accepts, with the target's ids in every field that names one (optional ones too). */
function sample(schema: any, name: string, target: Filled): unknown {
  if (schema.anyOf) return sample(schema.anyOf.find((s: any) => s.type !== 'null') ?? schema.anyOf[0], name, target)
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  if (schema.examples) return schema.examples[0]
  const id = idForField(name, target)
  switch (schema.type) {
    case 'string':
      if (id) return id
      if (/^speaker$|^mergeInto$/.test(name)) return 'A'
      if (name === 'contentType') return 'audio/wav'
      if (schema.pattern?.startsWith('^#')) return '#2f6fdf'
      // a URL nothing answers (loopback, refused at once): no request leaves the machine
      if (schema.format === 'uri' || /url$/i.test(name)) return 'http://127.0.0.1:8080/probe.wav'
      if (schema.format === 'email') return 'probe@example.com'
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z'
      return 'probe'.padEnd(schema.minLength ?? 0, 'x')
    case 'integer':
    case 'number':
      return schema.minimum ?? 1
    case 'boolean':
      return true
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(schema.items ?? {}, name, target))
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [prop, s] of Object.entries<any>(schema.properties ?? {})) {
        const example = s.examples ?? s.anyOf?.find((a: any) => a.examples)?.examples
        if ((schema.required ?? []).includes(prop) || idForField(prop, target) || example) out[prop] = sample(s, prop, target)
      }
      const first = Object.keys(schema.properties ?? {})[0]
      if (Object.keys(out).length < (schema.minProperties ?? 0) && first) out[first] = sample(schema.properties[first], first, target)
      return out
    }
    default:
      return 'probe'
  }
}

/** Where the answer shows the target: its ids or words. */
function leaksOf(res: CallResult, target: Filled, asked: string): string[] {
  return [...Object.values(target.ids), target.workspace, ...target.marks].filter(v => res.text.includes(v) && !asked.includes(v))
}

const idsOf = (target: Filled) => [...Object.values(target.ids), target.workspace]

/** The request with each of the target's ids replaced by an id of the same kind that exists nowhere. */
function withoutIds<T>(value: T, target: Filled): T {
  if (value === undefined) return value
  let text = JSON.stringify(value)
  for (const id of idsOf(target)) text = text.replaceAll(id, `${id.split('_')[0]}_nowhere`)
  return JSON.parse(text) as T
}

/** An answer's text without what differs between two calls: request ids, times, the ids made for it. */
const normalized = (text: string) => text.replaceAll(/req_[0-9a-f-]+/g, 'req').replaceAll(/\d{4}-\d{2}-\d{2}T[0-9:.]+Z/g, 'T')

/** Sends one operation's request (JSON, or multipart with a short WAV). */
async function callOperation(t: TestApp, op: Operation, path: string, body: unknown, key: string): Promise<CallResult> {
  if (!op.multipartBody) return t.call(op.method, path, { token: key, body })
  const form = new FormData()
  form.append('file', new Blob([makeWav({ seconds: 1 }) as unknown as BlobPart], { type: 'audio/wav' }), 'probe.wav')
  form.append('model', 'whisper-1')
  const r = await t.app.handle(new Request(`http://localhost${path}`, { method: op.method, headers: { authorization: `Bearer ${key}` }, body: form }))
  const text = await r.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: r.status, headers: r.headers, body: parsed, text }
}

/**
 * Every operation of the registry, called with `caller`'s key on `target`'s ids. When the caller is the
 * target's own workspace (ordinary use, for the repository check), any answer but a 500 is fine.
 */
export async function probeOperations(t: TestApp, caller: { workspace: string; key: string; label: string }, target: Filled, rec?: ScopeRecorder): Promise<ProbeRow[]> {
  const own = caller.workspace === target.workspace
  const as = asCaller(rec)
  const rows: ProbeRow[] = []
  // the deletions last: were one to succeed, the other probes would still find what they look for
  const ordered = ([...OPERATIONS] as Operation[]).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))
  for (const op of ordered) {
    if (op.public) continue
    const params = [...op.path.matchAll(/:(\w+)/g)].map(m => m[1]!)
    const query = op.query ? new URLSearchParams(Object.entries(sample(op.query, '', target) as Record<string, unknown>).map(([k, v]) => [k, String(v)])).toString() : ''
    const path = op.path.replace(/:(\w+)/g, (_, p: string) => pathValue(op.path, p, target)) + (query ? `?${query}` : '')
    let body: unknown
    if (op.body) body = sample(op.body, '', target)
    const asked = `${path} ${JSON.stringify(body ?? null)}`
    const namesIds = params.length > 0 || idsOf(target).some(id => `${query} ${JSON.stringify(body ?? null)}`.includes(id))
    const send = (p: string, b: unknown) => as(caller.workspace, `${caller.label} ${op.id}`, () => callOperation(t, op, p, b, caller.key))
    const res = await send(path, body)
    if (own) {
      rows.push({ operation: op.id, method: op.method, path: op.path, namesIds, status: res.status, code: res.body?.error?.code ?? null, leaked: [], sameAsNowhere: null, ok: res.status !== 500 })
      continue
    }
    const leaked = leaksOf(res, target, asked)
    const code = res.body?.error?.code ?? null
    // naming the target's ids: 404 or 403, or the very answer ids that exist nowhere get; naming none:
    // anything but a 500 (a 502 is a URL nothing answers); never anything of the target in the answer
    let refused = res.status === 404 || res.status === 403
    // an id used as a filter (listNotes?folderId=, askLibrary's folderId): answered as for an id that
    // exists nowhere, so the answer tells nothing of the target (the ids of the answers set aside)
    let sameAsNowhere: boolean | null = null
    if (namesIds && !refused) {
      const nowhere = await send(withoutIds(path, target), withoutIds(body, target))
      sameAsNowhere = nowhere.status === res.status && normalized(nowhere.text) === normalized(res.text.replaceAll(/[a-z]+_[0-9a-z]{20,}/g, m => (idsOf(target).includes(m) ? `${m.split('_')[0]}_nowhere` : m)))
      refused = sameAsNowhere
    }
    const ok = leaked.length === 0 && (namesIds ? refused : res.status !== 500)
    rows.push({ operation: op.id, method: op.method, path: op.path, namesIds, status: res.status, code, leaked, sameAsNowhere, ok })
  }
  return rows
}

/** The rows as a Markdown table, one column of outcomes per probe. */
export function markdownTable(columns: { title: string; rows: ProbeRow[] }[]): string {
  const outcome = (r: ProbeRow | undefined) => (r ? `${r.status}${r.code ? ` ${r.code}` : ''}${r.sameAsNowhere ? ' (= unknown id)' : ''}${r.leaked.length ? ` LEAK ${r.leaked.join(',')}` : ''}${r.ok ? '' : ' ✗'}` : '')
  const lines = [`| operation | ${columns.map(c => c.title).join(' | ')} |`, `| --- | ${columns.map(() => '---').join(' | ')} |`]
  for (const r of columns[0]!.rows) lines.push(`| ${r.operation} (${r.method} ${r.path}) | ${columns.map(c => outcome(c.rows.find(x => x.operation === r.operation))).join(' | ')} |`)
  return lines.join('\n')
}

/** The app's settings for the probe: rate limits out of the way (it sends hundreds of writes), loopback webhooks. */
export const PROBE_ENV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_RATE_LIMITS: 'read=1000000000,write=1000000000,processing=1000000000' }
