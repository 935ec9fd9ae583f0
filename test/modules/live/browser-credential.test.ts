/**
 * The web library's own live stream: GET /v1/realtime through real HTTP on loopback with the signed-in
 * session (cookie), the page's CSRF token as the subprotocol `notesvc-csrf.<token>` and this site's
 * Origin, as Chromium sends them (docs/realtime.md "In the browser"). The recognizer is the TEST-ONLY
 * replay of the LibriVox clips (test/fixtures/replay-recognizer.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { listen } from '../../../src/http/listen'
import { createTestApp } from '../../helpers/app'
import { until } from '../../helpers/process'
import { sessionCookie } from '../../helpers/web'
import { replayLibrivoxRecognizers } from '../../fixtures/replay-recognizer'
import { speechWav } from '../../fixtures/speech'
import { teamWorkspace } from '../../helpers/team-workspace'

const EMAIL = 'recorder@example.com'
const PASSWORD = 'a recording passphrase'
const t = createTestApp({ liveRecognizers: replayLibrivoxRecognizers() })
const server = listen(t.app, { port: 0, hostname: '127.0.0.1' })
const port = server.port!
const site = `http://127.0.0.1:${port}`
afterAll(() => void server.stop(true))

let cookie = ''
let csrf = ''
beforeAll(async () => {
  await t.services.web.setPassword(EMAIL, PASSWORD)
  cookie = await sessionCookie(site, request => fetch(request), EMAIL, PASSWORD, '/')
  const page = await (await fetch(`${site}/`, { headers: { cookie } })).text()
  csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!
})

/** An upgrade request as a browser sends it; the answer when it is refused. */
async function refusal(headers: Record<string, string>) {
  const res = await fetch(`${site}/v1/realtime?intent=transcription`, {
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
  })
  return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } }
}

test('a page of another site (or another port of this host) with the cookie and the right token is refused before the upgrade', async () => {
  for (const origin of ['https://elsewhere.example', `http://127.0.0.1:${port + 1}`, 'null']) {
    const r = await refusal({ cookie, origin, 'sec-websocket-protocol': `realtime, notesvc-csrf.${csrf}` })
    expect([origin, r.status, r.body.error.code]).toEqual([origin, 401, 'invalid_token'])
    expect(r.body.error.message).toStartWith('This request came from another site, so the browser session was not used. Sign in again at /signin')
  }
})

test('a wrong token, no token, or a signed-out session is refused before the upgrade, each with what to do', async () => {
  const wrong = await refusal({ cookie, origin: site, 'sec-websocket-protocol': 'realtime, notesvc-csrf.not-the-token' })
  expect([wrong.status, wrong.body.error.code, wrong.body.error.message]).toEqual([401, 'invalid_token', expect.stringContaining('does not match your session; reload the page.')])
  // the cookie alone is no credential: a cross-site page could have it sent with its own socket
  const none = await refusal({ cookie, origin: site, 'sec-websocket-protocol': 'realtime' })
  expect([none.status, none.body.error.code, none.body.error.message]).toEqual([401, 'invalid_token', expect.stringContaining('No credential was sent')])
  const other = await sessionCookie(site, request => fetch(request), EMAIL, PASSWORD, '/')
  const otherCsrf = /<meta name="csrf-token" content="([^"]+)">/.exec(await (await fetch(`${site}/`, { headers: { cookie: other } })).text())![1]!
  await (await fetch(`${site}/signout`, { method: 'POST', headers: { cookie: other, origin: site, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${otherCsrf}` })).arrayBuffer()
  const ended = await refusal({ cookie: other, origin: site, 'sec-websocket-protocol': `realtime, notesvc-csrf.${otherCsrf}` })
  expect([ended.status, ended.body.error.message]).toEqual([401, expect.stringContaining('Your browser session has ended.')])
})

test('the signed-in page with its token upgrades, is answered `realtime`, and gets the live text of what it sends', async () => {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime?intent=transcription`, { protocols: ['realtime', `notesvc-csrf.${csrf}`], headers: { cookie, origin: site } } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  const closed = new Promise<number>(resolve => ws.addEventListener('close', e => resolve(e.code)))
  await new Promise((resolve, reject) => {
    ws.onopen = resolve
    ws.onerror = reject
  })
  expect(ws.protocol).toBe('realtime')
  await until('session.created', () => events.find(e => e.type === 'session.created'))
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } }))
  const pcm = speechWav(8).subarray(44, 44 + 8 * 16000 * 2)
  for (let at = 0; at < pcm.byteLength; at += 3200) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.subarray(at, at + 3200)).toString('base64') }))
  const completed = await until('a completed turn', () => events.find(e => e.type === 'conversation.item.input_audio_transcription.completed'))
  expect(completed.transcript).toBe('and mr john guess what and then at leisure to consider how much there might be greatly in his power to do how about')
  ws.close(1000)
  expect(await closed).toBe(1000)
})

test('with notesvc-library.sandbox the stream is the sandbox library\'s: its note is there, not in the live library, and nothing is charged', async () => {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime?intent=transcription`, { protocols: ['realtime', `notesvc-csrf.${csrf}`, 'notesvc-library.sandbox'], headers: { cookie, origin: site } } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
  const pcm = speechWav(3).subarray(44, 44 + 3 * 24000 * 2)
  for (let at = 0; at < pcm.byteLength; at += 4800) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.subarray(at, at + 4800)).toString('base64') }))
  ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
  const finished = await until('notesvc.stream.finished', () => events.find(e => e.type === 'notesvc.stream.finished'), 30_000)
  expect([finished.note.status, finished.credits_charged]).toEqual(['Done', 0])
  const inLibrary = async (library: string) => (await fetch(`${site}/v1/notes/${finished.note.id}`, { headers: { cookie, origin: site, 'x-csrf-token': csrf, 'x-notesvc-library': library } })).status
  expect({ sandbox: await inLibrary('sandbox'), live: await inLibrary('live') }).toEqual({ sandbox: 200, live: 404 })
})

test('with notesvc-workspace.<id> the stream records into that team workspace of the person (its editor); a viewer, or a workspace not theirs, is refused before the upgrade', async () => {
  const me = (await t.services.accounts.accountOfEmail(EMAIL))!.id
  const team = await teamWorkspace(t, 'Recorders')
  await t.services.workspacesRepo.addMember({ workspace_id: team, account_id: me, role: 'editor', via: 'invitation', added_at: new Date().toISOString() })
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime?intent=transcription`, { protocols: ['realtime', `notesvc-csrf.${csrf}`, `notesvc-workspace.${team}`], headers: { cookie, origin: site } } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
  const pcm = speechWav(3).subarray(44, 44 + 3 * 24000 * 2)
  for (let at = 0; at < pcm.byteLength; at += 4800) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.subarray(at, at + 4800)).toString('base64') }))
  ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
  const finished = await until('notesvc.stream.finished', () => events.find(e => e.type === 'notesvc.stream.finished'), 30_000)
  const inWorkspace = async (workspace: string) => (await fetch(`${site}/v1/notes/${finished.note.id}`, { headers: { cookie, origin: site, 'x-csrf-token': csrf, 'x-notesvc-workspace': workspace } })).status
  expect({ team: await inWorkspace(team), personal: await inWorkspace(me) }).toEqual({ team: 200, personal: 404 })
  // the session's use of the team is the member's last activity, which the workspace page shows
  expect((await t.services.workspacesRepo.member(team, me))!.last_active_at).toBeString()

  const upgrade = (workspace: string) => refusal({ cookie, origin: site, 'sec-websocket-protocol': `realtime, notesvc-csrf.${csrf}, notesvc-workspace.${workspace}` })
  await t.services.workspacesRepo.setRole(team, me, 'viewer')
  const asViewer = await upgrade(team)
  expect([asViewer.status, asViewer.body.error.code]).toEqual([403, 'insufficient_scope'])
  expect(asViewer.body.error.message).toContain('Your role in this workspace is viewer')
  const notMine = await upgrade(await teamWorkspace(t, 'Others'))
  expect([notMine.status, notMine.body.error.code]).toEqual([403, 'insufficient_scope'])
  expect(notMine.body.error.message).toContain('You are not a member of the workspace')
})
