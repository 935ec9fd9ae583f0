/**
 * The audit log of a scripted session against a real `notesvc serve` on loopback (issue 25's
 * acceptance): a sign-in for an unknown email and one with a wrong password, a sign-in, a key created
 * on the settings page, a transcript exported and a recording played in the browser, a note deleted
 * with the key, the key revoked, a sign-out; then the log downloaded from the settings page as JSON
 * lines, and exported by the operator with `notesvc audit export`. Every event is asserted in order
 * with its principal, target, address and user agent; no secret and no note text appears anywhere.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { freePort, ROOT, startServer, tempDir } from '../../helpers/process'
import { cookieBrowser, field } from '../../helpers/web'
import { makeWav } from '../../fixtures/wav'

const EMAIL = 'owner@audit.test'
const PASSWORD = 'correct horse battery staple'
const WRONG_PASSWORD = 'not-the-password-at-all'
const UNKNOWN_EMAIL = 'nobody-here@audit.test'
const UA = 'audit-session-test/1.0 (scripted browser)'
const TITLE = 'Board minutes: the Vega acquisition'
const TRANSCRIPT = 'Confidential: we offer 41 million for Vega and close on Friday.'

const data = tempDir('notesvc-audit-')
const env = { NOTESVC_DATA_DIR: join(data.path, 'data'), NOTESVC_WORKERS: '0', NOTESVC_LLM: 'builtin', NOTESVC_LOG_LEVEL: 'warn' }
let server: Awaited<ReturnType<typeof startServer>> | undefined
let base = ''

async function cli(args: string[], stdin?: string) {
  const p = Bun.spawn(['bun', 'run', 'src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin), stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { out, err, code }
}

beforeAll(async () => {
  expect((await cli(['accounts', 'password', '--email', EMAIL, '--password-stdin'], PASSWORD)).code).toBe(0)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env: { ...env, PORT: String(port), HOST: '127.0.0.1', NOTESVC_PUBLIC_URL: base }, timeoutMs: 30_000 })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  data.remove()
})

/** fetch as the scripted browser: its User-Agent on every request */
const send = (request: Request) => {
  const headers = new Headers(request.headers)
  headers.set('user-agent', UA)
  return fetch(new Request(request, { headers }))
}

test('a scripted session is in the audit log, in order, with who, what, where; no secret or note text', async () => {
  const b = cookieBrowser(base, send)
  expect((await b.signIn(UNKNOWN_EMAIL, WRONG_PASSWORD)).status).toBe(401)
  expect((await b.signIn(EMAIL, WRONG_PASSWORD)).status).toBe(401)
  expect((await b.signIn(EMAIL, PASSWORD)).status).toBe(303)
  const csrf = field((await b.get('/settings')).text, 'csrf')!

  // a key created on the settings page (shown once, in the page)
  const created = await b.post('/settings/keys', { csrf, library: 'live', name: 'laptop', scopes: ['notes:read', 'notes:write', 'transcriptions:write', 'usage:read'] })
  expect(created.status).toBe(200)
  const key = /<code id="new-key">([^<]+)<\/code>/.exec(created.text)![1]!
  const keyId = /action="\/settings\/keys\/([^/]+)\/revoke"/.exec(created.text)![1]!
  const asKey = (method: string, path: string, body?: unknown) => fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': 'scripted-cli/2.0' }, body: body === undefined ? undefined : JSON.stringify(body),
  })

  // a text note, and an uploaded recording (not processed: the player needs only the file)
  const note = (await (await asKey('POST', '/v1/notes', { title: TITLE, content: TRANSCRIPT })).json()) as { id: string }
  const wav = makeWav({ seconds: 1 })
  const upload = (await (await asKey('POST', '/v1/uploads', { fileName: 'call.wav', contentType: 'audio/wav', fileSize: wav.length })).json()) as { noteId: string; uploadUrl: string; headers: Record<string, string> }
  expect((await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.headers, body: new Blob([wav as BlobPart]) })).status).toBeLessThan(300)

  // the browser downloads the transcript (the library's download: the session as credential) …
  const exported = await b.get(`/v1/notes/${note.id}/transcript?format=txt`, { 'x-csrf-token': csrf })
  expect(exported.status).toBe(200)
  expect(exported.text).toContain(TRANSCRIPT)
  // … twice: one event counting two reads (issue 29)
  expect((await b.get(`/v1/notes/${note.id}/transcript?format=txt`, { 'x-csrf-token': csrf })).status).toBe(200)
  // … and plays the recording
  const played = await b.get(`/notes/${upload.noteId}/media`)
  expect(played.status).toBe(200)
  // the key deletes the note
  expect((await asKey('DELETE', `/v1/notes/${note.id}`)).status).toBe(204)
  // the key is revoked on the settings page, then the person signs out
  expect((await b.post(`/settings/keys/${keyId}/revoke`, { csrf })).status).toBe(303)
  expect((await b.post('/signout', { csrf })).status).toBe(303)

  // signed in again: the settings page lists the latest events and links the download
  expect((await b.signIn(EMAIL, PASSWORD)).status).toBe(303)
  const settings = await b.get('/settings')
  expect(settings.text).toContain('Download all (JSON lines)')
  expect(settings.text).toContain('Transcript read or exported')
  expect(settings.text).toContain('Recording played')
  const download = await b.get('/settings/audit-events.jsonl')
  expect(download.status).toBe(200)
  expect(download.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8')
  console.log(`the audit log of the session, as downloaded from /settings (JSON lines):\n${download.text}`)
  const events = download.text.trimEnd().split('\n').map(l => JSON.parse(l))

  const accountId = events[0].accountId as string
  expect(accountId).toMatch(/^acct_/)
  const user = { type: 'user', id: accountId }
  const account = { type: 'account', id: accountId }
  const HTTP = { ip: '127.0.0.1', userAgent: UA }
  expect(events.map(e => ({ action: e.action, actor: e.actor, target: e.target, ip: e.ip, userAgent: e.userAgent, details: e.details }))).toEqual([
    { action: 'account.created', actor: { type: 'operator', id: null }, target: account, ip: null, userAgent: null, details: { plan: 'free' } },
    { action: 'signin.failed', actor: user, target: account, ...HTTP, details: { reason: 'wrong_password' } },
    { action: 'signin.succeeded', actor: user, target: account, ...HTTP, details: { method: 'password' } },
    { action: 'key.created', actor: user, target: { type: 'key', id: keyId }, ...HTTP, details: { sandbox: false, scopes: 'notes:read notes:write transcriptions:write usage:read' } },
    { action: 'note.transcript_exported', actor: user, target: { type: 'note', id: note.id }, ...HTTP, details: { format: 'txt', sandbox: false } },
    { action: 'note.media_read', actor: user, target: { type: 'note', id: upload.noteId }, ...HTTP, details: { sandbox: false } },
    { action: 'note.deleted', actor: { type: 'key', id: keyId }, target: { type: 'note', id: note.id }, ip: '127.0.0.1', userAgent: 'scripted-cli/2.0', details: { sandbox: false } },
    { action: 'key.revoked', actor: user, target: { type: 'key', id: keyId }, ...HTTP, details: { sandbox: false } },
    { action: 'signout', actor: user, target: account, ...HTTP, details: {} },
    { action: 'signin.succeeded', actor: user, target: account, ...HTTP, details: { method: 'password' } },
    { action: 'audit.exported', actor: user, target: account, ...HTTP, details: {} },
  ])
  // how many times: the transcript's two downloads are one event; everything else once
  expect(events.map(e => `${e.action} ×${e.count}`)).toContain('note.transcript_exported ×2')
  expect(events.filter(e => e.count !== 1).map(e => e.action)).toEqual(['note.transcript_exported'])
  expect(settings.text).toContain('Transcript read or exported, 2 times')
  // when: each at a real instant, in order
  for (let i = 1; i < events.length; i++) expect(events[i].at >= events[i - 1].at).toBe(true)
  for (const e of events) expect(e.accountId).toBe(accountId)

  // never a secret or a note's text (a one-line slip, e.g. logging the form or the body, would show here)
  for (const secret of [key, PASSWORD, WRONG_PASSWORD, TRANSCRIPT, TITLE, UNKNOWN_EMAIL, b.jar.get('notesvc_session')!, csrf]) {
    expect({ secret, found: download.text.includes(secret) }).toEqual({ secret, found: false })
  }

  // the operator's export: every account's events, and those of no account, oldest first
  await server!.stop()
  server = undefined
  const all = await cli(['audit', 'export'])
  expect(all.code).toBe(0)
  console.log(`notesvc audit export (every account), stdout:\n${all.out}stderr: ${all.err}`)
  const allEvents = all.out.trimEnd().split('\n').map(l => JSON.parse(l))
  const unknown = allEvents.filter(e => e.accountId === null && e.action === 'signin.failed')
  expect(unknown.map(e => ({ actor: e.actor, target: e.target, ip: e.ip, userAgent: e.userAgent, details: e.details }))).toEqual([
    { actor: { type: 'user', id: null }, target: null, ip: '127.0.0.1', userAgent: UA, details: { reason: 'unknown_account' } },
  ])
  expect(allEvents.at(-1)).toMatchObject({ action: 'audit.exported', accountId: null, actor: { type: 'operator', id: null }, details: { scope: 'all' } })
  expect(allEvents.find(e => e.action === 'note.transcript_exported')).toMatchObject({ count: 2, lastAt: expect.any(String) })
  expect(allEvents.length).toBe(events.length + 2)
  for (const secret of [key, PASSWORD, WRONG_PASSWORD, TRANSCRIPT, TITLE, UNKNOWN_EMAIL]) expect({ secret, found: all.out.includes(secret) }).toEqual({ secret, found: false })
  expect(all.err).toContain(`audit export: ${events.length + 2} events of all accounts`)

  // one account's, from a date on
  const mine = await cli(['audit', 'export', '--email', EMAIL, '--since', events[1].at])
  expect(mine.code).toBe(0)
  const mineEvents = mine.out.trimEnd().split('\n').map(l => JSON.parse(l))
  expect(mineEvents.map(e => e.id)).toEqual([...events.slice(1).map(e => e.id), mineEvents.at(-1).id])
  expect(mineEvents.at(-1)).toMatchObject({ action: 'audit.exported', accountId, actor: { type: 'operator', id: null }, details: { scope: 'account', since: events[1].at } })

  // a mistyped email or date is told what to do
  const nobody = await cli(['audit', 'export', '--email', UNKNOWN_EMAIL])
  expect(nobody.code).toBe(2)
  expect(nobody.err).toContain(`no account with email ${UNKNOWN_EMAIL}`)
  const badDate = await cli(['audit', 'export', '--since', 'last tuesday'])
  expect(badDate.code).toBe(2)
  expect(badDate.err).toContain('--since must be a date')
}, 120_000)
