#!/usr/bin/env bun
/**
 * What a share link's lookup costs: requests per second, with wrk against a real server process
 * (test/fixtures/share-server.ts, SQLite), for the shared note's page (`/s/<token>`) and its transcript
 * (`/s/<token>/transcript.txt`) beside the same note signed in: the note page (`/notes/<id>` with the
 * session cookie) and its transcript (`GET /v1/notes/<id>/transcript?format=txt` with an API key).
 * Prints each figure and the ratio shared ÷ signed in (target ≥ 0.9). BENCH_SECONDS per run (default 5),
 * BENCH_RUNS runs each (median; default 3), BENCH_LOADS as bench/lib/wrk.ts (default 1u).
 * Every opening of the share page also writes `share.opened` to the audit log and counts it, as in use.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../test/helpers/process'
import { describeLoad, measure, median, parseLoads, type WrkResult } from './lib/wrk'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const LOADS = parseLoads(process.env.BENCH_LOADS ?? '1u')
const EMAIL = 'bench@example.com'
const PASSWORD = 'bench share passphrase'

const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-share-'))
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const proc = Bun.spawn(['bun', 'run', 'test/fixtures/share-server.ts'], {
  cwd: join(import.meta.dir, '..'), stdin: 'ignore', stdout: 'pipe', stderr: 'inherit',
  env: { ...process.env, NOTESVC_DATA_DIR: dir, PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_LLM: 'builtin', NOTESVC_OWNER_EMAIL: EMAIL, SHARE_PASSWORD: PASSWORD,
    NOTESVC_ACCESS_LOG: 'off', SHARE_LOG_LEVEL: 'error', NOTESVC_RATE_LIMITS: 'read=100000000,write=100000000,processing=100000000' },
})
try {
  const reader = proc.stdout.getReader()
  let out = ''
  while (out.split('\n').length < 3) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the server ended: ${out}`)
    out += new TextDecoder().decode(value)
  }
  const { key, noteId } = JSON.parse(out.split('\n')[1]!) as { key: string; noteId: string }
  const made = await (await fetch(`${base}/v1/notes/${noteId}/shares`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ showSummary: true, showSpeakers: true, showRecording: true, formats: ['txt'] }) })).json() as { url: string }
  const cookie = await signIn()

  const shell = await (await fetch(`${base}/notes/${noteId}`, { headers: { cookie } })).text()
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(shell)![1]!
  // the signed-in page shows the same note after its script's two reads: a wrk script sends the three in turn
  const viewScript = join(dir, 'view.lua')
  await Bun.write(viewScript, `local paths = { "/notes/${noteId}", "/v1/notes/${noteId}", "/v1/notes/${noteId}/transcript?format=verbose_json" }
local i = 0
request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end
`)
  const session = [`Cookie: ${cookie}`, `X-CSRF-Token: ${csrf}`, 'X-Notesvc-Library: live']
  const cases: { name: string; shared: [string, string[]]; signedIn: [string, string[], string?]; perView?: number }[] = [
    { name: 'the note page (one request each)', shared: [made.url, []], signedIn: [`${base}/notes/${noteId}`, [`Cookie: ${cookie}`]] },
    { name: 'the note shown: share page vs note page + its note and transcript reads (views/s)', shared: [made.url, []], signedIn: [`${base}/notes/${noteId}`, session, viewScript], perView: 3 },
    { name: 'its transcript (txt)', shared: [`${made.url}/transcript.txt`, []], signedIn: [`${base}/v1/notes/${noteId}/transcript?format=txt`, [`Authorization: Bearer ${key}`]] },
  ]
  for (const [url, headers] of cases.flatMap(c => [c.shared, c.signedIn])) {
    const res = await fetch(url, { headers: Object.fromEntries(headers.map(h => h.split(': ') as [string, string])) })
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  }
  const rps = async (url: string, headers: string[], load: (typeof LOADS)[number], script?: string) => {
    const runs: WrkResult[] = []
    for (let i = 0; i < RUNS; i++) runs.push(await measure({ proc }, url, SECONDS, load, headers, script))
    return median(runs)
  }
  console.log(`share page beside the signed-in note page: ${RUNS} runs of ${SECONDS} s each, median; SQLite, one server process`)
  for (const load of LOADS) {
    console.log(`\n${describeLoad(load)}`)
    console.log('| what | shared req/s | signed-in req/s | ratio (target ≥ 0.9) | shared p99 ms | signed-in p99 ms |')
    console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
    for (const c of cases) {
      const shared = await rps(c.shared[0], c.shared[1], load)
      const signed = await rps(c.signedIn[0], c.signedIn[1], load, c.signedIn[2])
      const signedPerSec = signed.requestsPerSec / (c.perView ?? 1)
      console.log(`| ${c.name} | ${shared.requestsPerSec.toFixed(0)} | ${signedPerSec.toFixed(0)} | ${(shared.requestsPerSec / signedPerSec).toFixed(2)} | ${shared.p99Ms.toFixed(2)} | ${signed.p99Ms.toFixed(2)} |`)
    }
  }
} finally {
  proc.kill('SIGTERM')
  await proc.exited
  rmSync(dir, { recursive: true, force: true })
}

/** The owner signed in through the sign-in form, as a browser: the session cookie. */
async function signIn(): Promise<string> {
  const form = await fetch(`${base}/signin`)
  const csrfCookie = form.headers.getSetCookie()[0]!.split(';')[0]!
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!
  const res = await fetch(`${base}/signin`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ email: EMAIL, password: PASSWORD, csrf, next: '/' }).toString(),
  })
  const session = res.headers.getSetCookie().find(c => !c.startsWith('notesvc_signin_csrf'))
  if (res.status !== 303 || !session) throw new Error(`sign-in failed: ${res.status}`)
  return session.split(';')[0]!
}
