import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { apiClient, firstStartKey, freePort, run, startServer, tempDir } from '../helpers/process'
import { sessionCookie } from '../helpers/web'
import { sharedPostgres } from '../helpers/backends'
import { postgresUnavailable } from '../helpers/postgres'

/**
 * `notesvc backup` taken from a separate process while a real `serve` takes writes, then `notesvc
 * restore` into a new data folder (or database) and a new `serve` on it: every note acknowledged (201)
 * before the backup began is there, and the recordings play back byte for byte. A backup that copied
 * notesvc.db as a plain file (without the WAL), or read the media keys outside the snapshot, loses
 * acknowledged notes or recordings here.
 */

const CLI = ['bun', 'run', 'src/cli.ts']
const LIMITS = { NOTESVC_RATE_LIMITS: 'read=1000000,write=1000000,processing=1000000', NOTESVC_WORKERS: '0' }
const OWNER = 'owner@localhost'
const PASSWORD = 'backup test password'
const work = tempDir('notesvc-backup-')
afterAll(() => work.remove())

interface Acked { id: string; at: number }
interface AckedMedia extends Acked { bytes: Uint8Array<ArrayBuffer> }

async function startNode(env: Record<string, string>) {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const server = await startServer([...CLI, 'serve'], `${base}/v1/health`, { env: { ...LIMITS, ...env, PORT: String(port) }, timeoutMs: 30_000 })
  return { base, server }
}

/**
 * A client writing as fast as the server answers, `writers` requests in flight: notes from text, and
 * every `mediaEvery`-th write an upload of a small recording. Each acknowledgement is recorded with
 * the time it arrived, until `stop()`.
 */
function writeLoad(base: string, key: string, writers = 4, mediaEvery = 20) {
  const call = apiClient(base, key)
  const notes: Acked[] = []
  const media: AckedMedia[] = []
  let running = true
  let n = 0
  const write = async (i: number) => {
    if (i % mediaEvery === 0) {
      const bytes = crypto.getRandomValues(new Uint8Array(20_000 + i))
      const up = await call('POST', '/v1/uploads', { fileName: `memo-${i}.wav`, contentType: 'audio/wav', fileSize: bytes.length })
      if (up.status !== 201) throw new Error(`createUpload answered ${up.status}: ${JSON.stringify(up.body)}`)
      const put = await fetch(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: bytes })
      if (put.status === 200) media.push({ id: up.body.noteId, at: performance.now(), bytes })
      return
    }
    const r = await call('POST', '/v1/notes', { title: `note ${i}`, content: `written under load, number ${i}` })
    if (r.status === 201) notes.push({ id: r.body.id, at: performance.now() })
    else throw new Error(`createNote answered ${r.status}: ${JSON.stringify(r.body)}`)
  }
  const writer = async () => {
    while (running) await write(n++)
  }
  const load = {
    notes, media,
    /** the first failure of a writer (the load then stops), thrown by `stop` and `waitFor` */
    failure: null as Error | null,
    async waitFor(enough: () => boolean) {
      while (!enough()) {
        if (load.failure) throw load.failure
        await Bun.sleep(20)
      }
    },
    stop: async () => {
      running = false
      await done
      if (load.failure) throw load.failure
    },
  }
  const done = Promise.all(Array.from({ length: writers }, () => writer().catch(err => { load.failure ??= err; running = false })))
  return load
}

/** Which of `ids` the server at `base` has (GET /v1/notes/{id} answering 200). */
async function found(base: string, key: string, ids: string[]): Promise<Set<string>> {
  const call = apiClient(base, key)
  const present = new Set<string>()
  for (let i = 0; i < ids.length; i += 16) {
    await Promise.all(ids.slice(i, i + 16).map(async id => {
      const r = await call('GET', `/v1/notes/${id}`)
      if (r.status === 200) present.add(id)
      else if (r.status !== 404) throw new Error(`getNote ${id} answered ${r.status}`)
    }))
  }
  return present
}

async function setPassword(env: Record<string, string>): Promise<void> {
  const proc = Bun.spawn([...CLI, 'accounts', 'password', '--email', OWNER, '--password-stdin'], { env: { ...process.env, ...env }, stdin: new TextEncoder().encode(`${PASSWORD}\n`), stdout: 'pipe', stderr: 'pipe' })
  if ((await proc.exited) !== 0) throw new Error(`accounts password failed: ${await new Response(proc.stderr).text()}`)
}

/** The load, a backup from another process in its middle, the load stopped: what was acknowledged when. */
async function backupUnderLoad(base: string, key: string, dest: string, env: Record<string, string>) {
  const load = writeLoad(base, key)
  await load.waitFor(() => load.notes.length >= 300 && load.media.length >= 5)
  const began = performance.now()
  const backup = await run([...CLI, 'backup', dest], { env })
  const ended = performance.now()
  await load.waitFor(() => load.notes.filter(n => n.at > ended).length >= 20)
  await load.stop()
  return { load, backup, began, ended }
}

function figures(label: string, r: { load: ReturnType<typeof writeLoad>; began: number; ended: number }, present: Set<string>, dest: string) {
  const before = r.load.notes.filter(n => n.at < r.began)
  const during = r.load.notes.filter(n => n.at >= r.began && n.at <= r.ended)
  const manifest = JSON.parse(readFileSync(join(dest, 'manifest.json'), 'utf8'))
  const bytes = manifest.files.reduce((s: number, f: { size: number }) => s + f.size, 0)
  console.log(
    `${label}: acknowledged before the backup ${before.length}, during it ${during.length} (${during.filter(n => present.has(n.id)).length} of them in the backup), ` +
      `found after restore ${before.filter(n => present.has(n.id)).length}/${before.length}; backup ${manifest.files.length} files, ${bytes} bytes, ${((r.ended - r.began) / 1000).toFixed(2)} s; ` +
      `${r.load.media.filter(m => m.at < r.began).length} recordings acknowledged before it`,
  )
  return { before, during, manifest }
}

describe('backup and restore on SQLite with media on disk', () => {
  test('a backup taken under write load restores every note acknowledged before it began, with its recording, and restore refuses what it must', async () => {
    const data = join(work.path, 'data')
    const dest = join(work.path, 'backup')
    const env = { NOTESVC_DATA_DIR: data }
    const { base, server } = await startNode(env)
    let r: Awaited<ReturnType<typeof backupUnderLoad>>
    let key = ''
    try {
      key = await firstStartKey(server.proc.stdout)
      r = await backupUnderLoad(base, key, dest, env)
    } catch (err) {
      // a server that died under the backup (it once did: SIGBUS, see src/db/wal-index.ts) says why here
      server.proc.kill()
      console.log(`serve (exit ${server.proc.exitCode ?? server.proc.signalCode}):`, (await new Response(server.proc.stderr).text()).slice(-2000))
      throw err
    } finally {
      await server.stop()
    }
    expect(r.backup.code).toBe(0)
    expect(r.backup.stdout).toContain('backup written to')
    expect(r.backup.stderr).toMatch(/media: \d+\/\d+ files/)

    // a backup into a folder that is not empty is refused, saying what to do
    const again = await run([...CLI, 'backup', dest], { env })
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('is not empty')
    expect(again.stderr).toContain('Name a new folder')

    const restored = join(work.path, 'restored')
    const renv = { NOTESVC_DATA_DIR: restored }
    const restore = await run([...CLI, 'restore', dest], { env: renv })
    expect(restore.code).toBe(0)
    expect(restore.stdout).toContain('restored the backup of')
    // no temporary file left behind by the renames
    expect(readdirSync(restored, { recursive: true }).map(String).filter(f => f.endsWith('.part'))).toEqual([])
    const db = new Database(join(restored, 'notesvc.db'), { readonly: true })
    expect(db.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }])
    db.close()

    await setPassword(renv)
    const node = await startNode(renv)
    try {
      // the key the first server printed: the restored database holds its hash
      const ids = r!.load.notes.map(n => n.id)
      const present = await found(node.base, key, ids)
      const { before, manifest } = figures('sqlite', r!, present, dest)
      expect(before.length).toBeGreaterThanOrEqual(300)
      expect(before.filter(n => !present.has(n.id))).toEqual([])
      // the manifest counts what the restored library holds (the notes of the load, and the recordings' notes)
      expect(manifest).toMatchObject({ format: 'notesvc-backup/1', backEnd: 'sqlite', storage: 'disk', missingMedia: [] })
      // notes written after the backup ended are not in it (the restore is the backup's, not the live folder's)
      expect(r!.load.notes.filter(n => n.at > r!.ended + 1000).filter(n => present.has(n.id))).toEqual([])

      // every recording acknowledged before the backup plays back with identical bytes
      const cookie = await sessionCookie(node.base, request => fetch(request, { redirect: 'manual' }), OWNER, PASSWORD)
      const recordings = r!.load.media.filter(m => m.at < r!.began)
      expect(recordings.length).toBeGreaterThanOrEqual(5)
      for (const m of recordings) {
        const res = await fetch(`${node.base}/notes/${m.id}/media`, { headers: { cookie } })
        expect(res.status).toBe(200)
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(m.bytes)
      }
    } finally {
      await node.server.stop()
    }

    // restore refuses a data folder that is not empty: nothing there changes
    const into = await run([...CLI, 'restore', dest], { env: renv })
    expect(into.code).toBe(2)
    expect(into.stderr).toContain('holds a database')
    expect(into.stderr).toContain('set NOTESVC_DATA_DIR (or --data-dir) to a new folder')

    // a backup with one flipped byte in one recording is refused, naming the file, and writes nothing
    const damaged = join(work.path, 'damaged')
    cpSync(dest, damaged, { recursive: true })
    const victim = JSON.parse(readFileSync(join(damaged, 'manifest.json'), 'utf8')).files.find((f: { path: string }) => f.path.startsWith('media/')).path as string
    const bytes = new Uint8Array(readFileSync(join(damaged, victim)))
    bytes[100] = bytes[100]! ^ 0x01
    writeFileSync(join(damaged, victim), bytes)
    const empty = join(work.path, 'empty')
    const refused = await run([...CLI, 'restore', damaged], { env: { NOTESVC_DATA_DIR: empty } })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(`the SHA-256 of ${victim} is not the one in the manifest`)
    expect(existsSync(join(empty, 'notesvc.db'))).toBe(false)
    expect(existsSync(join(empty, 'media'))).toBe(false)

    // backup --verify says the same, and a backup without its manifest is refused as incomplete
    const verify = await run([...CLI, 'backup', '--verify', damaged])
    expect(verify.code).toBe(2)
    expect(verify.stderr).toContain(victim)
    expect((await run([...CLI, 'backup', '--verify', dest])).stdout).toContain('complete and intact')
    const unfinished = join(work.path, 'unfinished')
    cpSync(dest, unfinished, { recursive: true })
    Bun.spawnSync(['rm', join(unfinished, 'manifest.json')])
    const incomplete = await run([...CLI, 'restore', unfinished], { env: { NOTESVC_DATA_DIR: empty } })
    expect(incomplete.code).toBe(2)
    expect(incomplete.stderr).toContain('has no manifest.json')
  }, 240_000)
})

const pgSkip = postgresUnavailable()
describe.skipIf(pgSkip !== null)('backup and restore on PostgreSQL (pg_dump, pg_restore)', () => {
  test('pg_dump under write load, pg_restore into an empty database: every note acknowledged before is there; a database with notesvc tables is refused', async () => {
    const { pg } = await sharedPostgres()
    const source = await pg.createDatabase(`backup_src_${process.pid}`)
    const target = await pg.createDatabase(`backup_dst_${process.pid}`)
    const env = { NOTESVC_DATABASE_URL: source, NOTESVC_DATA_DIR: join(work.path, 'pg-data') }
    const dest = join(work.path, 'pg-backup')
    const { base, server } = await startNode(env)
    let r: Awaited<ReturnType<typeof backupUnderLoad>>
    let key = ''
    try {
      key = await firstStartKey(server.proc.stdout)
      r = await backupUnderLoad(base, key, dest, env)
    } finally {
      await server.stop()
    }
    expect(r.backup.code).toBe(0)
    expect(readdirSync(dest).sort()).toEqual(['manifest.json', 'media', 'notesvc.pgdump'])

    const renv = { NOTESVC_DATABASE_URL: target, NOTESVC_DATA_DIR: join(work.path, 'pg-restored') }
    const restore = await run([...CLI, 'restore', dest], { env: renv })
    expect(restore.code).toBe(0)
    // the database that was backed up still has its tables: restore refuses it
    const intoSource = await run([...CLI, 'restore', dest], { env: { NOTESVC_DATABASE_URL: source, NOTESVC_DATA_DIR: join(work.path, 'pg-other') } })
    expect(intoSource.code).toBe(2)
    expect(intoSource.stderr).toContain("already has notesvc's tables")

    const node = await startNode(renv)
    try {
      const present = await found(node.base, key, r!.load.notes.map(n => n.id))
      const { before, manifest } = figures('postgres', r!, present, dest)
      expect(manifest).toMatchObject({ backEnd: 'postgres', database: 'notesvc.pgdump' })
      expect(before.filter(n => !present.has(n.id))).toEqual([])
    } finally {
      await node.server.stop()
    }
  }, 240_000)
})
