import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Store } from '../../src/db/store'
import { speechWav } from '../fixtures/speech'
import { startCluster, type Cluster, type ClusterBackEnd } from '../helpers/cluster'
import { apiClient, until } from '../helpers/process'
import { cookieBrowser, field } from '../helpers/web'
import { postgresUnavailable } from '../helpers/postgres'

/**
 * Several machines, for real: two `serve` nodes (NOTESVC_WORKERS=0, the API alone) and two `notesvc
 * worker` processes on one PostgreSQL database and one S3 bucket (s3rver), PocketSphinx transcribing
 * real speech, each process with a data folder of its own. What a user of a load-balanced installation
 * would notice: uploads finish and are charged once whichever node took them, a worker that dies
 * mid-job costs a lease and nothing else, a revoked key stops working everywhere within a second, and
 * rate limits and credits hold across nodes.
 *
 * NOTESVC_CLUSTER_BACKENDS=sqlite (or postgres,sqlite) runs the same checks on the embedded database:
 * one data folder, one serve and the workers (rate limits and caches live in the one serve process).
 */
const LEASE_SECONDS = 3
const PROCESSING_LIMIT = 10
const wanted = (process.env.NOTESVC_CLUSTER_BACKENDS ?? 'postgres').split(',').map(s => s.trim()) as ClusterBackEnd[]
const pgSkip = postgresUnavailable()
if (pgSkip && wanted.includes('postgres')) console.log(`cluster test on PostgreSQL skipped: ${pgSkip}`)

const PASSWORD = 'cluster test password'

/** Counts, in the database itself, every write of a note's transcript, whichever process makes it. */
async function countTranscriptWrites(store: Store): Promise<(noteId: string) => Promise<number>> {
  if (store.sql.name === 'postgres') {
    await store.run('CREATE TABLE test_transcript_writes (note_id TEXT, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())')
    await store.run(`CREATE FUNCTION test_count_transcript_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO test_transcript_writes (note_id) VALUES (NEW.note_id); RETURN NEW; END $$`)
    await store.run(`CREATE TRIGGER test_count_transcript_writes AFTER UPDATE OF original_transcription ON note_bodies
      FOR EACH ROW EXECUTE FUNCTION test_count_transcript_write()`)
  } else {
    await store.run('CREATE TABLE test_transcript_writes (note_id TEXT, at TEXT)')
    await store.run(`CREATE TRIGGER test_count_transcript_writes AFTER UPDATE OF original_transcription ON note_bodies
      BEGIN INSERT INTO test_transcript_writes VALUES (new.note_id, strftime('%Y-%m-%dT%H:%M:%fZ')); END`)
  }
  return async noteId => Number((await store.get<{ n: number | string }>('SELECT count(*) AS n FROM test_transcript_writes WHERE note_id = ?', [noteId]))!.n)
}

for (const backEnd of (['postgres', 'sqlite'] as const).filter(b => wanted.includes(b))) {
  const skip = backEnd === 'postgres' && pgSkip !== null
  describe.skipIf(skip)(`a cluster on ${backEnd}: ${backEnd === 'postgres' ? 'two serve nodes' : 'one serve'} and two worker processes, media in S3`, () => {
    let c: Cluster
    let transcriptWrites: (noteId: string) => Promise<number>
    /** keys of the main account (pro): uploads go through them in turn, each far from its processing limit */
    let mainKeys: string[]
    let mainKey: string
    const t0 = performance.now()

    const createKey = async (email: string, plan: 'free' | 'pro') => {
      const r = await c.cli(['keys', 'create', '--email', email, '--plan', plan])
      return { key: r.stdout.trim(), id: /key (\S+) for/.exec(r.stderr)![1]! }
    }
    const node = (i: number) => c.nodes[i % c.nodes.length]!
    const api = (i: number, key: string) => apiClient(node(i).base, key)
    const jobOf = async (noteId: string) => {
      const rows = await c.store.all<{ status: string; attempts: number; lease_owner: string | null }>('SELECT status, attempts, lease_owner FROM jobs WHERE note_id = ?', [noteId])
      expect(rows.length).toBeLessThanOrEqual(1)
      return rows[0] ? { ...rows[0], attempts: Number(rows[0].attempts) } : null
    }
    const pidOf = async (workerId: string) => {
      const row = await c.store.get<{ pid: number | string }>('SELECT pid FROM workers WHERE id = ?', [workerId])
      return row ? Number(row.pid) : undefined
    }
    /** createUpload on one node, PUT to S3, completeUpload on the next node */
    const upload = async (i: number, seconds: number) => {
      const wav = speechWav(seconds)
      const up = await api(i, mainKey)('POST', '/v1/uploads', { fileName: `speech-${i}.wav`, contentType: 'audio/wav', fileSize: wav.length })
      expect(up.status).toBe(201)
      expect(up.body.uploadUrl).toStartWith(c.s3.endpoint)
      expect((await fetch(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit })).status).toBe(200)
      // completeUpload is a processing request: each key stays well under its limit of 10 a minute
      const done = await api(i + 1, mainKeys[i % mainKeys.length]!)('POST', `/v1/uploads/${up.body.noteId}/complete`)
      expect(done.status).toBe(202)
      return { noteId: up.body.noteId as string, credits: done.body.creditsCharged as number, createdOn: node(i).name, completedOn: node(i + 1).name }
    }
    const finished = (noteId: string, ms = 60_000) => until(`note ${noteId} Done`, async () => {
      const s = (await api(0, mainKey)('GET', `/v1/notes/${noteId}/status`)).body
      if (s.status === 'Error') throw new Error(`note ${noteId} failed: ${JSON.stringify(s)}`)
      return s.status === 'Done'
    }, ms, 100)
    const usage = async (key: string) => (await api(0, key)('GET', '/v1/usage?limit=100')).body as {
      balance: { totalRemaining: number }
      recent: { operation: string; credits: number; noteId: string | null }[]
    }

    beforeAll(async () => {
      c = await startCluster({
        backEnd, nodes: backEnd === 'postgres' ? 2 : 1, workers: 2, leaseSeconds: LEASE_SECONDS,
        env: { NOTESVC_RATE_LIMITS: `read=100000,write=100000,processing=${PROCESSING_LIMIT}` },
      })
      transcriptWrites = await countTranscriptWrites(c.store)
      mainKeys = []
      for (let i = 0; i < 3; i++) mainKeys.push((await createKey('main@cluster.test', 'pro')).key)
      mainKey = mainKeys[0]!
      console.log(`${backEnd} cluster: ${c.nodes.map(n => `${n.name} (pid ${n.pid}, ${n.base})`).join(', ')}, ${c.workers.map(w => `${w.name} (pid ${w.pid})`).join(', ')}, S3 ${c.s3.endpoint}; up in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    }, 60_000)

    afterAll(async () => {
      await c?.stop()
      console.log(`${backEnd} cluster: whole file ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    })

    test('every node reports the shared database and both live workers', async () => {
      for (const n of c.nodes) {
        const health = await until(`${n.name} counts 2 live workers`, async () => {
          const h = (await (await fetch(`${n.base}/v1/health?detail`)).json()) as { database: string; workers: number }
          return h.workers === 2 ? h : null
        }, 20_000)
        expect(health).toMatchObject({ database: backEnd, workers: 2 })
      }
    })

    test('doctor, run against the same database, names the back end (without a password) and both live workers; on PostgreSQL it warns about media on disk', async () => {
      const line = (out: string, name: string) => out.split('\n').find(l => l.includes(` ${name} `)) ?? ''
      // trust authentication here: a password in the URL is not needed, but doctor must not print it
      const url = c.databaseUrl?.replace('://postgres@', '://postgres:s3cret@')
      const r = await c.cli(['doctor'], { env: url ? { NOTESVC_DATABASE_URL: url } : {} })
      expect(line(r.stdout, 'database')).toStartWith('ok')
      expect(line(r.stdout, 'database')).toContain(`${backEnd}, `)
      expect(r.stdout).not.toContain('s3cret')
      if (url) expect(line(r.stdout, 'database')).toContain('postgres:***@127.0.0.1')
      expect(line(r.stdout, 'job workers')).toContain('2 live: ')
      for (const w of c.workers) expect(line(r.stdout, 'job workers')).toContain(`pid ${w.pid} on `)
      expect(line(r.stdout, 'storage')).toStartWith(`ok       storage        s3 bucket ${c.s3.bucket}`)
      const disk = await c.cli(['doctor'], { env: { NOTESVC_STORAGE: 'disk' } })
      if (backEnd === 'postgres') {
        expect(line(disk.stdout, 'storage')).toStartWith('warn')
        expect(line(disk.stdout, 'storage')).toContain('several machines need shared media')
        expect(line(disk.stdout, 'storage')).toContain('fix: set NOTESVC_STORAGE=s3')
      } else {
        expect(line(disk.stdout, 'storage')).toStartWith('ok')
      }
      console.log(`doctor: ${line(r.stdout, 'database').trim()}\ndoctor: ${line(r.stdout, 'job workers').trim()}${backEnd === 'postgres' ? `\ndoctor (NOTESVC_STORAGE=disk): ${line(disk.stdout, 'storage').trim()}` : ''}`)
    }, 30_000)

    test('12 uploads created and completed alternately through the nodes all reach Done, each charged exactly once; the usage rows sum to the balance change', async () => {
      const before = (await usage(mainKey)).balance.totalRemaining
      const started = performance.now()
      const uploads: Awaited<ReturnType<typeof upload>>[] = []
      for (let i = 0; i < 12; i++) uploads.push(await upload(i, 3 + (i % 2)))
      for (const u of uploads) await finished(u.noteId)
      const seconds = (performance.now() - started) / 1000
      const owners: string[] = []
      for (const u of uploads) {
        const job = (await jobOf(u.noteId))!
        expect(job).toMatchObject({ status: 'done', attempts: 1 })
        owners.push(job.lease_owner!)
        expect(await transcriptWrites(u.noteId)).toBe(1)
        expect((await api(1, mainKey)('GET', `/v1/notes/${u.noteId}`)).body.originalTranscription.split(' ').length).toBeGreaterThan(3)
      }
      const after = await usage(mainKey)
      const rows = after.recent.filter(r => uploads.some(u => u.noteId === r.noteId))
      expect(rows.map(r => r.operation)).toEqual(uploads.map(() => 'completeUpload'))
      expect(rows.map(r => r.noteId).sort()).toEqual(uploads.map(u => u.noteId).sort())
      for (const u of uploads) expect(rows.find(r => r.noteId === u.noteId)!.credits).toBe(u.credits)
      const charged = rows.reduce((sum, r) => sum + r.credits, 0)
      expect(charged).toBeGreaterThanOrEqual(12)
      expect(before - after.balance.totalRemaining).toBe(charged)
      // both worker processes took part
      expect(new Set(owners).size).toBe(2)
      const perNode = c.nodes.map(n => `${n.name}: ${uploads.filter(u => u.createdOn === n.name).length} created, ${uploads.filter(u => u.completedOn === n.name).length} completed`)
      console.log(`12 uploads Done in ${seconds.toFixed(1)} s (${perNode.join('; ')}); jobs per worker ${[...new Set(owners)].map(o => owners.filter(x => x === o).length).join(' + ')}; ${rows.length} completeUpload rows, ${charged} credits = balance ${before} -> ${after.balance.totalRemaining}`)
    }, 90_000)

    test('kill -9 of the worker holding a job while it transcribes: the other takes it over after the lease, it reaches Done, charged once, transcript written once', async () => {
      const before = (await usage(mainKey)).balance.totalRemaining
      const long = await upload(12, 16)
      const holder = await until('a worker holds the job', async () => (await jobOf(long.noteId))?.lease_owner, 20_000)
      await until('transcribing', async () => (await api(1, mainKey)('GET', `/v1/notes/${long.noteId}/status`)).body.processingStage === 'transcribing', 20_000)
      const holderPid = await pidOf(holder)
      const victim = c.workers.find(w => w.pid === holderPid)!
      expect(victim).toBeDefined()
      const killedAt = performance.now()
      victim.proc.kill('SIGKILL')
      await victim.proc.exited
      const survivor = c.workers.find(w => w !== victim && w.proc.exitCode === null && w.proc.signalCode === null)!
      const taken = await until('the other worker takes the job over', async () => {
        const j = (await jobOf(long.noteId))!
        return j.lease_owner !== holder && j.attempts === 2 ? j : null
      }, 30_000)
      const takeoverSeconds = (performance.now() - killedAt) / 1000
      expect(await pidOf(taken.lease_owner!)).toBe(survivor.pid)
      await finished(long.noteId)
      const doneSeconds = (performance.now() - killedAt) / 1000
      expect(await jobOf(long.noteId)).toMatchObject({ status: 'done', attempts: 2, lease_owner: taken.lease_owner })
      expect(await transcriptWrites(long.noteId)).toBe(1)
      expect((await api(1, mainKey)('GET', `/v1/notes/${long.noteId}`)).body.originalTranscription.split(' ').length).toBeGreaterThan(15)
      const after = await usage(mainKey)
      const rows = after.recent.filter(r => r.noteId === long.noteId)
      expect(rows.map(r => [r.operation, r.credits])).toEqual([['completeUpload', long.credits]])
      expect(before - after.balance.totalRemaining).toBe(long.credits)
      // a lease is what it waited for, not a restart or a local check
      expect(takeoverSeconds).toBeGreaterThanOrEqual(LEASE_SECONDS - 1)
      console.log(`kill -9 of ${victim.name} (pid ${victim.pid}) while transcribing: taken over by ${survivor.name} (pid ${survivor.pid}) after ${takeoverSeconds.toFixed(1)} s (lease ${LEASE_SECONDS} s), Done ${doneSeconds.toFixed(1)} s after the kill; attempts 2, transcript writes 1, charged once (${long.credits} credit${long.credits === 1 ? '' : 's'})`)
    }, 90_000)

    test('a key revoked through the settings page of the first node is refused by the last node within 1 s', async () => {
      const victim = await createKey('main@cluster.test', 'pro')
      await c.cli(['accounts', 'password', '--email', 'main@cluster.test', '--password-stdin'], { stdin: PASSWORD })
      const a = c.nodes[0]!
      const b = c.nodes.at(-1)!
      const onB = apiClient(b.base, victim.key)
      // the key is known (and cached, where a node caches) on both nodes
      for (let i = 0; i < 5; i++) {
        expect((await onB('GET', '/v1/notes?limit=1')).status).toBe(200)
        expect((await apiClient(a.base, victim.key)('GET', '/v1/notes?limit=1')).status).toBe(200)
      }
      const browser = cookieBrowser(a.base, request => fetch(request))
      expect((await browser.signIn('main@cluster.test', PASSWORD)).status).toBe(303)
      const settings = await browser.get('/settings')
      expect(settings.status).toBe(200)
      expect(settings.text).toContain(victim.id)
      const revoked = await browser.post(`/settings/keys/${encodeURIComponent(victim.id)}/revoke`, { csrf: field(settings.text, 'csrf')! })
      expect(revoked.status).toBe(303)
      const revokedAt = performance.now()
      let polls = 0
      const refused = await until(`${b.name} refuses the revoked key`, async () => {
        polls++
        const r = await onB('GET', '/v1/notes?limit=1')
        return r.status === 401 ? r : null
      }, 5_000, 50)
      const delayMs = performance.now() - revokedAt
      expect(refused.body.error.code).toBe('invalid_token')
      expect((await apiClient(a.base, victim.key)('GET', '/v1/notes?limit=1')).status).toBe(401)
      // the other key of the same account still works there
      expect((await apiClient(b.base, mainKey)('GET', '/v1/notes?limit=1')).status).toBe(200)
      console.log(`key ${victim.id} revoked through ${a.name}'s settings page: refused by ${b.name} after ${delayMs.toFixed(0)} ms (${polls} polls every 50 ms)`)
      expect(delayMs).toBeLessThan(1000)
    }, 60_000)

    test(`11 processing requests spread over the nodes against processing=${PROCESSING_LIMIT}: exactly one 429`, async () => {
      const { key } = await createKey('rate@cluster.test', 'pro')
      const note = await api(0, key)('POST', '/v1/notes', { title: 'Rate limit', content: 'The meeting moved to Thursday at ten. Ana owns the budget review.' })
      expect(note.status).toBe(201)
      const results = await Promise.all(Array.from({ length: PROCESSING_LIMIT + 1 }, (_, i) =>
        api(i, key)('POST', `/v1/notes/${note.body.id}/questions`, { question: 'When is the meeting?' })))
      const statuses = results.map(r => r.status)
      expect(statuses.filter(s => s === 429)).toHaveLength(1)
      expect(statuses.filter(s => s === 200)).toHaveLength(PROCESSING_LIMIT)
      const limited = results.find(r => r.status === 429)!
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(limited.body.error.code).toBe('rate_limited')
      const answered = (await usage(key)).recent.filter(r => r.operation === 'askNoteQuestion')
      expect(answered).toHaveLength(PROCESSING_LIMIT)
      const byNode = c.nodes.map((n, k) => `${n.name} ${results.filter((_, i) => i % c.nodes.length === k).map(r => r.status).join(',')}`)
      console.log(`${PROCESSING_LIMIT + 1} askNoteQuestion requests at once against processing=${PROCESSING_LIMIT}: ${byNode.join('; ')} -> ${statuses.filter(s => s === 200).length} x 200, ${statuses.filter(s => s === 429).length} x 429 (Retry-After ${limited.headers.get('retry-after')} s)`)
    }, 60_000)

    test('50 concurrent one-credit charges through the nodes against 10 credits: exactly 10 succeed', async () => {
      const email = 'credits@cluster.test'
      // five keys of one account, ten requests each: no key reaches its processing limit, so credits alone decide
      const keys: string[] = []
      for (let i = 0; i < 5; i++) keys.push((await createKey(email, 'free')).key)
      // the month's grant used up (the ledger's own column), then 10 prepaid credits as an operator adds them
      expect(await c.store.run('UPDATE accounts SET grant_used = 60 WHERE email = ?', [email])).toBe(1)
      await c.cli(['accounts', 'credit', '--email', email, '--credits', '10'])
      expect((await usage(keys[0]!)).balance.totalRemaining).toBe(10)
      const note = await api(0, keys[0]!)('POST', '/v1/notes', { title: 'Credits', content: 'The launch is on March 3. Priya will send the press kit.' })
      expect(note.status).toBe(201)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
        api(i, keys[i % keys.length]!)('POST', `/v1/notes/${note.body.id}/questions`, { question: 'When is the launch?' })))
      const statuses = results.map(r => r.status)
      expect(statuses.filter(s => s === 200)).toHaveLength(10)
      expect(statuses.filter(s => s === 402)).toHaveLength(40)
      const after = await usage(keys[0]!)
      expect(after.balance.totalRemaining).toBe(0)
      const charges = after.recent.filter(r => r.operation === 'askNoteQuestion')
      expect(charges).toHaveLength(10)
      expect(charges.every(r => r.credits === 1)).toBe(true)
      const okByNode = c.nodes.map((n, k) => `${n.name} ${results.filter((r, i) => i % c.nodes.length === k && r.status === 200).length}`)
      console.log(`50 askNoteQuestion charges at once (5 keys, ${c.nodes.length} node${c.nodes.length > 1 ? 's' : ''}) against 10 credits: ${statuses.filter(s => s === 200).length} x 200 (${okByNode.join(', ')}), ${statuses.filter(s => s === 402).length} x 402; balance 10 -> ${after.balance.totalRemaining}, ${charges.length} usage rows`)
    }, 60_000)
  })
}
