import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { PostgresStore, SqliteStore, type Store } from '../../src/db/store'
import { databaseBackup } from '../../src/db/backup'
import { runBackup } from '../../src/backup/backup'
import { runRestore } from '../../src/backup/restore'
import { createTestApp } from '../helpers/app'
import { backEnds, freshPostgresUrl, sharedPostgres } from '../helpers/backends'
import { run, tempDir } from '../helpers/process'

/**
 * A restore killed outright (SIGKILL) midway through the recordings, on a real `notesvc restore`
 * process: the marker it leaves in the data folder makes `serve` refuse to start, and the same
 * restore run again removes what the killed one wrote and completes. And the audit events of backup
 * and restore, read back with `notesvc audit export`.
 */

const CLI = ['bun', 'run', 'src/cli.ts']
const MARKER = '.notesvc-restore.json'
const work = tempDir('notesvc-restore-')
afterAll(() => work.remove())
let folders = 0
const folder = (name: string) => join(work.path, `${name}-${++folders}`)

/**
 * A data folder with `recordings` uploaded recordings (each of its own bytes) and one note from text;
 * its database a SQLite file in it, or (`postgres`) a new database on the shared PostgreSQL cluster.
 */
async function dataFolder(recordings: number, size = 1000, backEnd: 'sqlite' | 'postgres' = 'sqlite') {
  const dataDir = folder('data')
  mkdirSync(dataDir, { recursive: true })
  const databaseUrl = backEnd === 'postgres' ? await freshPostgresUrl() : undefined
  const store: Store = databaseUrl ? new PostgresStore(databaseUrl, { max: 4 }) : new SqliteStore(openDatabase(join(dataDir, 'notesvc.db')))
  const t = createTestApp({ store, env: { NOTESVC_DATA_DIR: dataDir, NOTESVC_RATE_LIMITS: 'read=1000000,write=1000000,processing=1000000' } })
  const token = await t.key()
  expect((await t.call('POST', '/v1/notes', { token, body: { title: 'text', content: 'hello' } })).status).toBe(201)
  for (let i = 0; i < recordings; i++) {
    const bytes = new Uint8Array(size + i).fill((i % 250) + 1)
    const created = await t.call('POST', '/v1/uploads', { token, body: { fileName: `r${i}.wav`, contentType: 'audio/wav', fileSize: bytes.length } })
    if (created.status !== 201) throw new Error(`upload ${i}: ${created.status} ${JSON.stringify(created.body)}`)
    const up = created.body
    const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: bytes, headers: up.headers }))
    expect(put.status).toBe(200)
  }
  await store.close()
  return { dataDir, databasePath: join(dataDir, 'notesvc.db'), databaseUrl, storage: 'disk' as const }
}

/** Every file under `dir` (relative paths), none when it does not exist. */
const filesUnder = (dir: string) => existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter(f => statSync(join(dir, f)).isFile()).sort() : []

/** `notesvc serve` on `dataDir`, which must refuse to start: killed (and the test failed) if it is still running after 30 s. */
async function refusedServe(dataDir: string) {
  const proc = Bun.spawn([...CLI, 'serve'], { env: { ...process.env, NOTESVC_DATA_DIR: dataDir, PORT: '0' }, stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000)
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { code, stderr }
}

/** The audit log of the data folder `dataDir`, every account's and none's, as `notesvc audit export` prints it. */
async function auditExport(dataDir: string) {
  const r = await run([...CLI, 'audit', 'export'], { env: { NOTESVC_DATA_DIR: dataDir } })
  expect(r.code).toBe(0)
  return r.stdout.trim().split('\n').map(l => JSON.parse(l))
}

describe('a restore killed with SIGKILL midway through the recordings', () => {
  test('leaves a marker serve refuses to start on; the same restore run again removes what it wrote and completes, byte for byte', async () => {
    // 400 recordings of 40 kB: the restore prints "media: 1/400 files" after the first and is still
    // copying (each file synced) when the kill lands; the test checks it was indeed midway
    const source = await dataFolder(400, 40_000)
    const backup = folder('backup')
    const { manifest } = await runBackup({ ...source, dest: backup })
    expect(manifest.counts.notes).toBe(401)

    const target = folder('target')
    mkdirSync(target)
    // the operator's own file in the data folder: not the restore's, it must survive the sweep
    writeFileSync(join(target, 'README.txt'), 'restore of the 26th')
    const env = { ...process.env, NOTESVC_DATA_DIR: target }
    const proc = Bun.spawn([...CLI, 'restore', backup], { env, stdout: 'pipe', stderr: 'pipe' })
    let said = ''
    const decoder = new TextDecoder()
    for await (const chunk of proc.stderr) {
      said += decoder.decode(chunk, { stream: true })
      if (/^media: \d+\/400 files/m.test(said)) {
        proc.kill('SIGKILL')
        break
      }
    }
    await proc.exited
    expect(proc.signalCode).toBe('SIGKILL')
    // midway: some recordings written, no database, the marker there naming the backup
    // recordings renamed into place (a copy killed midway is a .part file, swept without being counted)
    const left = filesUnder(join(target, 'media')).filter(f => !f.endsWith('.part'))
    expect(left.length).toBeGreaterThan(0)
    expect(left.length).toBeLessThan(400)
    expect(existsSync(join(target, 'notesvc.db'))).toBe(false)
    const marker = JSON.parse(readFileSync(join(target, MARKER), 'utf8'))
    expect(marker).toMatchObject({ format: 'notesvc-restore/1', backup: { createdAt: manifest.createdAt } })
    expect(marker.files).toHaveLength(400)

    // serve (and any command on the folder) refuses, in one line saying to run restore again
    const serve = await refusedServe(target)
    expect(serve.code).toBe(2)
    expect(serve.stderr.trim().split('\n')).toEqual([expect.stringContaining(`a restore into ${target} did not finish`)])
    expect(serve.stderr).toContain(`restore ${backup} again`)
    // it created nothing: no database, so the retry is not refused as "holds a database"
    expect(existsSync(join(target, 'notesvc.db'))).toBe(false)
    const keys = await run([...CLI, 'keys', 'list', '--email', 'owner@localhost'], { env: { NOTESVC_DATA_DIR: target } })
    expect(keys.code).toBe(2)
    expect(keys.stderr).toContain('did not finish')

    // the same restore again: it says what it removed, then completes
    const again = await run([...CLI, 'restore', backup], { env: { NOTESVC_DATA_DIR: target } })
    expect(again.stderr).toContain(`found an unfinished restore in ${target} (the backup of ${manifest.createdAt}`)
    expect(again.stderr).toContain(`removed the ${left.length} recording${left.length === 1 ? '' : 's'} it had written (400 named in ${MARKER}, nothing else)`)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('401 notes')
    expect(existsSync(join(target, MARKER))).toBe(false)
    expect(readFileSync(join(target, 'README.txt'), 'utf8')).toBe('restore of the 26th')
    // every recording byte for byte, and nothing else (no temporary .part file of the killed copy)
    expect(filesUnder(join(target, 'media'))).toEqual(filesUnder(join(source.dataDir, 'media')))
    for (const f of filesUnder(join(source.dataDir, 'media'))) {
      expect(readFileSync(join(target, 'media', f)).equals(readFileSync(join(source.dataDir, 'media', f)))).toBe(true)
    }
    expect(readdirSync(target).filter(f => f.endsWith('.part'))).toEqual([])
    const db = new Database(join(target, 'notesvc.db'), { readonly: true })
    expect(db.query('SELECT count(*) AS n FROM notes').get()).toEqual({ n: 401 })
    db.close()
  }, 120_000)
})

for (const b of backEnds) {
  describe.skipIf(b.skip)(`a restore stopped for good at its database step, on ${b.name}`, () => {
    // Fails if the marker were written after the recordings or removed before the database step: the
    // retry is then refused as "holds media files", on either back end.
    test('leaves its recordings and marker; the next restore removes them and completes', async () => {
      const source = await dataFolder(3, 1000, b.name)
      const backup = folder('backup')
      await runBackup({ ...source, dest: backup })
      const dataDir = folder('target')
      const databaseUrl = b.name === 'postgres' ? await (await sharedPostgres()).pg.createDatabase(`restore_marker_${process.pid}_${folders}`) : undefined
      const target = { dataDir, databasePath: join(dataDir, 'notesvc.db'), databaseUrl, storage: 'disk' as const }
      // as a kill there leaves it: the recordings written, the database step never ending
      const real = databaseBackup(target)
      let reached = false
      void runRestore({ ...target, src: backup, database: { ...real, restore: () => { reached = true; return new Promise<void>(() => {}) } } })
      while (!reached) await Bun.sleep(5)
      expect(filesUnder(join(dataDir, 'media'))).toHaveLength(3)
      expect(existsSync(join(dataDir, MARKER))).toBe(true)

      const said: string[] = []
      const r = await runRestore({ ...target, src: backup, say: l => said.push(l) })
      expect(said[0]).toContain('removed the 3 recordings it had written')
      expect(r.manifest.counts.notes).toBe(4)
      expect(existsSync(join(dataDir, MARKER))).toBe(false)
      expect(filesUnder(join(dataDir, 'media'))).toEqual(filesUnder(join(source.dataDir, 'media')))
      const store: Store = databaseUrl ? new PostgresStore(databaseUrl, { max: 1 }) : new SqliteStore(openDatabase(target.databasePath))
      try {
        expect(Number((await store.get<{ n: number | string }>('SELECT count(*) AS n FROM notes'))!.n)).toBe(4)
      } finally {
        await store.close()
      }
    }, 60_000)
  })
}

describe('the marker left by a restore', () => {
  test('with the database in place (killed just before removing the marker): restore removes the marker and refuses, the restored recordings kept', async () => {
    // Fails if a marker with a database beside it swept the recordings of a complete restore.
    const source = await dataFolder(2)
    const backup = folder('backup')
    await runBackup({ ...source, dest: backup })
    const target = folder('target')
    await runRestore({ src: backup, dataDir: target, databasePath: join(target, 'notesvc.db'), storage: 'disk' })
    const media = filesUnder(join(target, 'media'))
    expect(media).toHaveLength(2)
    writeFileSync(join(target, MARKER), JSON.stringify({ format: 'notesvc-restore/1', startedAt: '2026-11-26T10:00:00.000Z', src: backup, backup: { createdAt: '2026-11-26T09:00:00.000Z', manifestSha256: 'x' }, files: media.map(f => `media/${f}`) }))
    const r = await run([...CLI, 'restore', backup], { env: { NOTESVC_DATA_DIR: target } })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('had finished, its database in place')
    expect(existsSync(join(target, MARKER))).toBe(false)
    expect(filesUnder(join(target, 'media'))).toEqual(media)
  }, 60_000)

  test('a marker that is not JSON: commands refuse, saying to move the folder away', async () => {
    const target = folder('target')
    mkdirSync(target)
    writeFileSync(join(target, MARKER), '{ torn')
    const r = await refusedServe(target)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('is not valid JSON; move the data folder')
  }, 60_000)
})

describe('audit events of backup and restore', () => {
  test('backup.created in the live database, backup.restored in the restored one, by the operator, with no path or URL', async () => {
    const source = await dataFolder(2)
    const backup = folder('backup')
    const b = await run([...CLI, 'backup', backup], { env: { NOTESVC_DATA_DIR: source.dataDir } })
    expect(b.code).toBe(0)
    const manifest = JSON.parse(readFileSync(join(backup, 'manifest.json'), 'utf8'))
    const live = await auditExport(source.dataDir)
    const created = live.filter(e => e.action === 'backup.created')
    expect(created).toEqual([expect.objectContaining({
      accountId: null, actor: { type: 'operator', id: null }, target: null, ip: null,
      // 3 notes (one from text, two recordings); 3 files (the database and two recordings)
      details: { backEnd: 'sqlite', storage: 'disk', createdAt: manifest.createdAt, notes: 3, files: 3 },
    })])
    expect(JSON.stringify(created)).not.toContain(work.path)

    const target = folder('target')
    const r = await run([...CLI, 'restore', backup], { env: { NOTESVC_DATA_DIR: target } })
    expect(r.code).toBe(0)
    const restored = await auditExport(target)
    const version = (await run([...CLI, 'version'])).stdout.trim()
    expect(restored.filter(e => e.action === 'backup.restored')).toEqual([expect.objectContaining({
      accountId: null, actor: { type: 'operator', id: null },
      details: { createdAt: manifest.createdAt, backupVersion: version, notesvcVersion: version, notes: 3, files: 3 },
    })])
    // the backup holds the database as it was copied: its own backup.created is not in it
    expect(restored.filter(e => e.action === 'backup.created')).toEqual([])
  }, 60_000)
})
