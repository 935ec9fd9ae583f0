import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startCluster, type Cluster } from '../helpers/cluster'
import { operationsOf, type Auth, type Libraries, type Operation } from '../helpers/fuzz-requests'
import { perOperationLines, runFuzz, summaryLine, type FuzzOptions } from '../helpers/fuzz-run'
import type { Known, OpenApiDocument } from '../helpers/fuzz-schema'
import { postgresUnavailable } from '../helpers/postgres'
import { makeWav } from '../fixtures/wav'

/**
 * The standing fuzz (issue 29): every operation of the OpenAPI document a real `serve` process serves,
 * every parameter and body field generated from its schema (wrong types, bounds ±1, empty and huge
 * values, NUL and lone surrogates, nesting 20,000 and 40,000 deep, unknown fields), with live, sandbox,
 * under-scoped, bogus and no credentials, real ids of the caller's and another account's notes and
 * folders beside generated ones, each request sent up to three times in a row; on SQLite and on a
 * PostgreSQL cluster. It fails on any 5xx but the documented ones, any error outside the envelope, HTML
 * from /v1, an answer after 2 s, and another account's GET /v1/health slower than 250 ms meanwhile
 * (fuzz-run.ts), and prints the shrunk request.
 *
 * The seed is fixed and printed: NOTESVC_FUZZ_SEED=… and NOTESVC_FUZZ_RUNS=… run another seed or
 * count; NOTESVC_FUZZ_ONLY=listNotes,createFolder fuzzes only those operations, NOTESVC_FUZZ_VERBOSE=1
 * prints the statuses of each operation's answers, NOTESVC_FUZZ_TRACE=1 every request and answer
 * (test/README.md).
 */
const SEED = Number(process.env.NOTESVC_FUZZ_SEED ?? 29)
const RUNS = Number(process.env.NOTESVC_FUZZ_RUNS ?? 1800)
const ONLY = process.env.NOTESVC_FUZZ_ONLY?.split(',').map(s => s.trim()).filter(Boolean)
if (!Number.isInteger(SEED) || !Number.isInteger(RUNS) || RUNS < 1) throw new Error('NOTESVC_FUZZ_SEED and NOTESVC_FUZZ_RUNS must be whole numbers (RUNS at least 1)')
console.log(`fuzz: seed ${SEED} (NOTESVC_FUZZ_SEED), ${RUNS} runs per back end (NOTESVC_FUZZ_RUNS)${ONLY ? `, only ${ONLY.join(', ')}` : ''}`)

const pgSkip = postgresUnavailable()
const UNLIMITED = 'read=1000000,write=1000000,processing=1000000'
/** where the seeded webhooks point (nothing listens: a delivery fails, which is not what is fuzzed) */
const HOOK_URL = 'http://127.0.0.1:8089/hook'

/** Values the rules take that no schema states (DECISIONS.md, docs/api.md), by field name. */
const RULES: Known = {
  contentType: ['audio/wav', 'audio/mpeg', 'video/mp4', 'application/pdf'],
  url: [HOOK_URL, 'https://hooks.example.com/notesvc'],
  mode: ['default', 'forever', 'media', 'notes'],
  audioUrl: ['http://127.0.0.1:8089/memo.wav', 'https://media.example.com/memo.mp3'],
  youtubeUrl: ['https://www.youtube.com/watch?v=dQw4w9WgXcQ', 'https://youtu.be/dQw4w9WgXcQ'],
  q: ['budget', 'Maria budget', '"the budget"'],
  speaker: ['A', 'Maria'],
}

/** A library's notes, folders, a webhook, an upload and a sandbox speaker profile, made through the API; their ids (fuzz-requests.ts Libraries). */
async function seedLibrary(base: string, key: string, sandbox: boolean): Promise<Record<string, string[]>> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const json = await res.json().catch(() => null) as any
    if (res.status >= 300) throw new Error(`seeding ${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
  const folder = async (name: string) => (await call('POST', '/v1/folders', { name, color: '#ff0000' })).id as string
  const note = async (title: string, folderId?: string) => (await call('POST', '/v1/notes', { title, content: `Maria said the ${title} is fine.`, folderId })).id as string
  const folders = [await folder('Fuzz A'), await folder('Fuzz B')]
  const doomedFolders = [await folder('Doomed A'), await folder('Doomed B')]
  const notes = [await note('budget'), await note('plan', folders[0]), await note('trip', doomedFolders[0])]
  const doomedNotes = [await note('old'), await note('older', folders[1])]
  const upload = await call('POST', '/v1/uploads', { fileName: 'memo.wav', contentType: 'audio/wav', fileSize: 1000 })
  notes.push(upload.noteId)
  if (sandbox) await call('POST', `/v1/uploads/${upload.noteId}/complete`)
  const webhook = async () => (await call('POST', '/v1/webhooks', { url: HOOK_URL, events: ['note.completed'] })).id as string
  const webhooks = [await webhook()]
  const doomedWebhooks = [await webhook()]
  const speakerLabels = ['A', 'B', 'S1', 'Z']
  const speakers: string[] = []
  if (sandbox) {
    const labels = ((await call('GET', `/v1/notes/${upload.noteId}/speakers`)).data ?? []).map((s: any) => s.id as string)
    speakerLabels.push(...labels)
    if (labels[0]) await call('PATCH', `/v1/notes/${upload.noteId}/speakers/${labels[0]}`, { name: 'Maria', remember: true }).catch(() => null)
    speakers.push(...((await call('GET', '/v1/speakers')).data ?? []).map((s: any) => s.id as string))
  }
  return {
    notes, folders, webhooks, speakers, speakerId: [...new Set(speakerLabels)], index: ['0', '1', '2'],
    'notes:delete': doomedNotes, 'folders:delete': doomedFolders, 'webhooks:delete': doomedWebhooks,
  }
}

for (const backEnd of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backEnd === 'postgres' && pgSkip !== null)(`the standing fuzz on ${backEnd}`, () => {
    let c: Cluster
    let options: FuzzOptions

    beforeAll(async () => {
      c = await startCluster({ backEnd, nodes: 1, workers: 0, env: { NOTESVC_RATE_LIMITS: UNLIMITED } })
      const base = c.nodes[0]!.base
      const key = async (...args: string[]) => (await c.cli(['keys', 'create', ...args])).stdout.trim()
      const live = await key('--email', 'fuzz@example.com', '--plan', 'pro')
      const [sandbox, scoped, victim] = await Promise.all([
        key('--email', 'fuzz@example.com', '--sandbox'),
        key('--email', 'fuzz@example.com', '--scopes', 'notes:read'),
        key('--email', 'victim@example.com'),
        c.cli(['accounts', 'credit', '--email', 'fuzz@example.com', '--credits', '1000000']),
      ])
      const own = await seedLibrary(base, live, false)
      const sandboxIds = await seedLibrary(base, sandbox!, true)
      const victimIds = await seedLibrary(base, victim!, false)
      /** a library's ids, by collection and by the fields that name them */
      const library = (ids: Record<string, string[]>): Known => ({
        ...RULES, ...ids,
        folderId: ids.folders!, noteId: ids.notes!, mergeInto: ids.speakerId!, speaker: [...RULES.speaker!, ...ids.speakerId!],
      })
      const libraries: Libraries = { live: library(own), sandbox: library(sandboxIds), others: [...victimIds.notes!, ...victimIds.folders!, ...victimIds.webhooks!] }
      const doc = await (await fetch(`${base}/v1/openapi.json`)).json() as OpenApiDocument
      const all: Operation[] = operationsOf(doc)
      const ops = ONLY ? all.filter(op => ONLY.includes(op.id)) : all
      if (ONLY && ops.length !== ONLY.length) throw new Error(`NOTESVC_FUZZ_ONLY names operations the document does not have: ${ONLY.filter(id => !all.some(op => op.id === id)).join(', ')}`)
      const keys: Record<Auth, string | undefined> = { live, sandbox, scoped, bogus: 'svc_live_notAKeyAtAllButShapedLikeOne00', none: undefined }
      options = { name: backEnd, base, doc, ops, libraries, keys, victimKey: victim!, seed: SEED, runs: RUNS, wav: makeWav({ seconds: 0.5 }), trace: process.env.NOTESVC_FUZZ_TRACE === '1' }
    }, 120_000)

    afterAll(async () => {
      await c?.stop()
    })

    test('no 5xx but the documented ones, every error in the envelope, no HTML, each answer within 2 s, no stall of another account', async () => {
      const outcome = await runFuzz(options)
      console.log(summaryLine(options, outcome))
      if (process.env.NOTESVC_FUZZ_VERBOSE) console.log(perOperationLines(outcome))
      if (outcome.failure) console.log(outcome.failure)
      if (outcome.failure) console.log(`the server's last lines:\n${c.nodes[0]!.tail(15)}`)
      expect(outcome.failure).toBeNull()
      // every operation of the document was sent at least once
      expect(options.ops.filter(op => !outcome.perOperation.has(op.id)).map(op => op.id)).toEqual([])
    }, 150_000)
  })
}
