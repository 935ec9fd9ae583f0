import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { MIGRATIONS } from '../../src/db/migrations'
import { PostgresStore, SqliteStore, type Store } from '../../src/db/store'
import { databaseBackup } from '../../src/db/backup'
import { runBackup } from '../../src/backup/backup'
import { runRestore } from '../../src/backup/restore'
import { readManifest, verifyBackup } from '../../src/backup/manifest'
import { createTestApp } from '../helpers/app'
import { backEnds, freshPostgresUrl, sharedPostgres } from '../helpers/backends'
import { tempDir } from '../helpers/process'

/**
 * The backup and restore of src/backup/ in one process, on a real data folder (SQLite file, media on
 * disk): what happens between the steps, and what restore refuses before writing anything.
 */

const work = tempDir('notesvc-backup-unit-')
afterAll(() => work.remove())
let folders = 0
const folder = (name: string) => join(work.path, `${name}-${++folders}`)

/**
 * A data folder with `recordings` uploaded recordings (and their notes) and one note from text; its
 * database a SQLite file in it, or (`postgres`) a new database on the shared PostgreSQL cluster.
 */
async function dataFolder(recordings: number, backEnd: 'sqlite' | 'postgres' = 'sqlite') {
  const dataDir = folder('data')
  mkdirSync(dataDir, { recursive: true })
  const databaseUrl = backEnd === 'postgres' ? await freshPostgresUrl() : undefined
  const store: Store = databaseUrl ? new PostgresStore(databaseUrl, { max: 4 }) : new SqliteStore(openDatabase(join(dataDir, 'notesvc.db')))
  const t = createTestApp({ store, env: { NOTESVC_DATA_DIR: dataDir } })
  const token = await t.key()
  expect((await t.call('POST', '/v1/notes', { token, body: { title: 'text', content: 'hello' } })).status).toBe(201)
  const ids: string[] = []
  for (let i = 0; i < recordings; i++) {
    const bytes = new Uint8Array(1000 + i).fill(i + 1)
    const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: `r${i}.wav`, contentType: 'audio/wav', fileSize: bytes.length } })).body
    const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: bytes, headers: up.headers }))
    expect(put.status).toBe(200)
    ids.push(up.noteId)
  }
  const config = { dataDir, databasePath: join(dataDir, 'notesvc.db'), databaseUrl, storage: 'disk' as const }
  return { config, ids, store, close: () => store.close() }
}

/** An empty place to restore into: a new data folder, and on PostgreSQL a new empty database. */
async function emptyTarget(backEnd: 'sqlite' | 'postgres' = 'sqlite') {
  const dataDir = folder('target')
  const databaseUrl = backEnd === 'postgres' ? await (await sharedPostgres()).pg.createDatabase(`backup_target_${process.pid}_${folders}`) : undefined
  return { dataDir, databasePath: join(dataDir, 'notesvc.db'), databaseUrl, storage: 'disk' as const }
}

/** Every file under `dir` (relative paths), none when it does not exist. */
const filesUnder = (dir: string) => existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter(f => statSync(join(dir, f)).isFile()).sort() : []

describe('backup', () => {
  test('a recording deleted between the database copy and the media copy is reported and listed in the manifest; the backup completes', async () => {
    const d = await dataFolder(3)
    const real = databaseBackup(d.config)
    const said: string[] = []
    const dest = folder('backup')
    const r = await runBackup({
      ...d.config, dest, say: l => said.push(l),
      // its note deleted by its owner just after the snapshot
      database: { ...real, dump: async path => { const s = await real.dump(path); rmSync(join(d.config.dataDir, 'media', 'uploads', d.ids[1]!)); return s } },
    })
    await d.close()
    expect(r.manifest.missingMedia).toEqual([`uploads/${d.ids[1]}`])
    expect(r.manifest.files.map(f => f.path)).toEqual(['notesvc.db', `media/uploads/${d.ids[0]}`, `media/uploads/${d.ids[2]}`])
    expect(r.manifest.counts).toEqual({ notes: 4, accounts: 1 })
    expect(said.join('\n')).toContain(`uploads/${d.ids[1]} was deleted after the database was copied`)
    // the manifest on disk is the one returned, and the recordings' bytes are the uploaded ones
    expect(JSON.parse(readFileSync(join(dest, 'manifest.json'), 'utf8'))).toEqual(r.manifest)
    expect(readFileSync(join(dest, 'media', 'uploads', d.ids[2]!))).toEqual(Buffer.from(new Uint8Array(1002).fill(3)))
  })

  test('DEST that is a file is refused, saying what to name instead; a missing DEST is created', async () => {
    const d = await dataFolder(0)
    const file = folder('file')
    writeFileSync(file, 'x')
    await expect(runBackup({ ...d.config, dest: file })).rejects.toThrow('is a file, not a folder; name a new or empty folder')
    const nested = join(folder('new'), 'a', 'b')
    const r = await runBackup({ ...d.config, dest: nested })
    await d.close()
    expect(existsSync(join(nested, 'manifest.json'))).toBe(true)
    expect(r.manifest.files.map(f => f.path)).toEqual(['notesvc.db'])
  })

  test('with S3 storage only the database is copied, and the output says the media stay in the bucket', async () => {
    const d = await dataFolder(1)
    const said: string[] = []
    const r = await runBackup({ ...d.config, storage: 's3', storageSettings: { bucket: 'recordings' }, dest: folder('s3'), say: l => said.push(l) })
    await d.close()
    expect(r.manifest).toMatchObject({ storage: 's3', bucket: 'recordings', missingMedia: [] })
    expect(r.manifest.files.map(f => f.path)).toEqual(['notesvc.db'])
    expect(said.join('\n')).toContain("left in the S3 bucket recordings and not copied (1 files); protect them with the bucket's versioning or replication")
  })
})

for (const b of backEnds) {
  describe.skipIf(b.skip)(`recordings the retention policy removed, on ${b.name}`, () => {
    // Fails when the media query of src/db/backup.ts lists every upload whose file arrived, removed
    // by policy or not: each backup and restore then reports the removed recording as "deleted after
    // the database was copied" and lists it in missingMedia.
    test('are neither reported as deleted meanwhile nor listed in missingMedia, by backup or restore', async () => {
      const d = await dataFolder(2, b.name)
      // as the retention sweep does (src/modules/retention/sweep.ts): the file deleted, then the note marked
      rmSync(join(d.config.dataDir, 'media', 'uploads', d.ids[0]!))
      await d.store.run('UPDATE notes SET media_removed_at = ? WHERE id = ?', ['2026-11-01T00:00:00.000Z', d.ids[0]!])
      const said: string[] = []
      const dest = folder('backup')
      const r = await runBackup({ ...d.config, dest, say: l => said.push(l) })
      await d.close()
      expect(said.filter(l => l.includes('deleted'))).toEqual([])
      expect(r.manifest.missingMedia).toEqual([])
      expect(r.manifest.files.map(f => f.path)).toEqual([b.name === 'sqlite' ? 'notesvc.db' : 'notesvc.pgdump', `media/uploads/${d.ids[1]}`])

      const target = await emptyTarget(b.name)
      const restored: string[] = []
      await runRestore({ ...target, src: dest, say: l => restored.push(l) })
      expect(restored.filter(l => l.includes('deleted'))).toEqual([])
      expect(filesUnder(join(target.dataDir, 'media'))).toEqual([`uploads/${d.ids[1]}`])
    }, 60_000)
  })
}

test('a database at schema version 15, from before retention, is still backed up (the media query names no column it lacks)', async () => {
  const dataDir = folder('old')
  mkdirSync(dataDir, { recursive: true })
  openDatabase(join(dataDir, 'notesvc.db'), MIGRATIONS.filter(m => m.version <= 15)).close()
  const r = await runBackup({ dataDir, databasePath: join(dataDir, 'notesvc.db'), storage: 'disk', dest: folder('backup') })
  expect(r.manifest.schemaVersion).toBe(15)
  expect(r.manifest.counts).toEqual({ notes: 0, accounts: 0 })
})

describe('a restore whose database step fails removes the recordings it wrote, and can be run again', () => {
  // Fails when restore copies the media and lets the database step's failure through as is: the
  // recordings stay in media/, and the retry is refused as "it holds media files".
  test('SQLite (the step made to fail)', async () => {
    const d = await dataFolder(2)
    const dest = folder('backup')
    await runBackup({ ...d.config, dest })
    await d.close()
    const target = await emptyTarget()
    const real = databaseBackup(target)
    const said: string[] = []
    const failing = { ...real, restore: async () => { throw new Error('injected: no space left on device') } }
    await expect(runRestore({ ...target, src: dest, say: l => said.push(l), database: failing })).rejects.toThrow('injected: no space left on device')
    expect(filesUnder(target.dataDir)).toEqual([])
    expect(said.join('\n')).toContain('removed the 2 recordings this restore had written')

    const r = await runRestore({ ...target, src: dest })
    expect(r.files).toBe(3)
    expect(readFileSync(join(target.dataDir, 'media', 'uploads', d.ids[1]!))).toEqual(Buffer.from(new Uint8Array(1001).fill(2)))
    expect(existsSync(target.databasePath)).toBe(true)
  })

  test.skipIf(backEnds[1]!.skip)('PostgreSQL (pg_restore fails on a table left in the target database)', async () => {
    const d = await dataFolder(1, 'postgres')
    const dest = folder('backup')
    await runBackup({ ...d.config, dest })
    await d.close()
    const target = await emptyTarget('postgres')
    // a table the occupied check does not look for (it names schema_migrations, notes, accounts)
    const stray = new PostgresStore(target.databaseUrl!, { max: 1 })
    try {
      await stray.run('CREATE TABLE folders (x integer)')
      const said: string[] = []
      await expect(runRestore({ ...target, src: dest, say: l => said.push(l) })).rejects.toThrow('pg_restore into')
      expect(filesUnder(target.dataDir)).toEqual([])
      expect(said.join('\n')).toContain('removed the 1 recording this restore had written')
      await stray.run('DROP TABLE folders')
      await runRestore({ ...target, src: dest })
      expect(Number((await stray.get<{ n: string }>('SELECT count(*) AS n FROM notes'))!.n)).toBe(2)
      expect(filesUnder(join(target.dataDir, 'media'))).toEqual([`uploads/${d.ids[0]}`])
    } finally {
      await stray.close()
    }
  }, 60_000)
})

describe('restore refuses before writing anything', () => {
  async function backup() {
    const d = await dataFolder(1)
    const dest = folder('backup')
    const r = await runBackup({ ...d.config, dest })
    await d.close()
    return { dest, manifest: r.manifest, mediaPath: r.manifest.files[1]!.path }
  }
  const into = () => {
    const dataDir = folder('target')
    return { dataDir, databasePath: join(dataDir, 'notesvc.db'), storage: 'disk' as const }
  }
  const rewrite = (dest: string, change: (m: any) => void) => {
    const m = JSON.parse(readFileSync(join(dest, 'manifest.json'), 'utf8'))
    change(m)
    writeFileSync(join(dest, 'manifest.json'), JSON.stringify(m))
  }
  /** A file put in the backup folder at `path` and listed in the manifest with its true size and SHA-256. */
  const smuggle = (dest: string, path: string) => {
    const bytes = new TextEncoder().encode('not a model')
    mkdirSync(join(dest, path, '..'), { recursive: true })
    writeFileSync(join(dest, path), bytes)
    rewrite(dest, m => m.files.push({ path, size: bytes.length, sha256: new Bun.CryptoHasher('sha256').update(bytes).digest('hex') }))
  }

  test.each([
    ['a file of the manifest missing', (b: { dest: string; mediaPath: string }) => rmSync(join(b.dest, b.mediaPath)), (b: { mediaPath: string }) => `${b.mediaPath} is missing`],
    ['a file of another size', (b: { dest: string; mediaPath: string }) => writeFileSync(join(b.dest, b.mediaPath), 'short'), (b: { mediaPath: string }) => `${b.mediaPath} is 5 bytes, the manifest says 1000`],
    ['a path outside the backup', (b: { dest: string }) => rewrite(b.dest, m => m.files.push({ path: '../../etc/passwd', size: 1, sha256: '0' })), () => 'names a file outside the backup folder (../../etc/passwd)'],
    ['a newer schema', (b: { dest: string }) => rewrite(b.dest, m => { m.schemaVersion = 999 }), () => 'schema version 999, newer than this build knows'],
    // the checksums match: only the path check stops it (it once checked media/ before normalising,
    // and the file landed in the data folder's models/)
    ['a media path that leaves media/ once normalised', (b: { dest: string }) => smuggle(b.dest, 'media/../models/x.bin'), () => 'names a file that is neither the database nor under media/ (media/../models/x.bin)'],
    ['a path beside the database', (b: { dest: string }) => smuggle(b.dest, 'models/x.bin'), () => 'names a file that is neither the database nor under media/ (models/x.bin)'],
    ['a database named outside the top of the folder', (b: { dest: string }) => rewrite(b.dest, m => { m.database = '../notesvc.db' }), () => 'names its database "../notesvc.db", not a file at the top of the backup folder'],
    ['a database of another name than the back end\'s', (b: { dest: string }) => rewrite(b.dest, m => { m.database = 'notesvc.pgdump' }), () => "the manifest names its database notesvc.pgdump, and a sqlite backup's is notesvc.db"],
  ])('%s', async (_what, damage, message) => {
    const b = await backup()
    damage(b)
    const target = into()
    await expect(runRestore({ ...target, src: b.dest })).rejects.toThrow(message(b))
    expect(filesUnder(target.dataDir)).toEqual([])
  })

  test('backup --verify refuses the same smuggled path (it shares the check)', async () => {
    const b = await backup()
    smuggle(b.dest, 'media/../models/x.bin')
    await expect(verifyBackup(b.dest, await readManifest(b.dest))).rejects.toThrow('neither the database nor under media/ (media/../models/x.bin)')
  })

  test('a SQLite backup where NOTESVC_DATABASE_URL names PostgreSQL: restore into a data folder, then db copy', async () => {
    const b = await backup()
    await expect(runRestore({ ...into(), databaseUrl: 'postgres://notesvc@127.0.0.1:1/notesvc', src: b.dest })).rejects.toThrow('then move it with notesvc db copy --to postgres://')
  })

  test('a data folder holding only media is not empty', async () => {
    const b = await backup()
    const target = into()
    mkdirSync(join(target.dataDir, 'media', 'uploads'), { recursive: true })
    writeFileSync(join(target.dataDir, 'media', 'uploads', 'note_x'), 'x')
    await expect(runRestore({ ...target, src: b.dest })).rejects.toThrow(`it holds media files (${join(target.dataDir, 'media')})`)
    expect(existsSync(target.databasePath)).toBe(false)
  })
})
