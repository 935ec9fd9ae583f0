import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { SqliteStore } from '../../src/db/store'
import { databaseBackup } from '../../src/db/backup'
import { runBackup } from '../../src/backup/backup'
import { runRestore } from '../../src/backup/restore'
import { createTestApp } from '../helpers/app'
import { tempDir } from '../helpers/process'

/**
 * The backup and restore of src/backup/ in one process, on a real data folder (SQLite file, media on
 * disk): what happens between the steps, and what restore refuses before writing anything.
 */

const work = tempDir('notesvc-backup-unit-')
afterAll(() => work.remove())
let folders = 0
const folder = (name: string) => join(work.path, `${name}-${++folders}`)

/** A data folder with `recordings` uploaded recordings (and their notes) and one note from text. */
async function dataFolder(recordings: number) {
  const dataDir = folder('data')
  mkdirSync(dataDir, { recursive: true })
  const store = new SqliteStore(openDatabase(join(dataDir, 'notesvc.db')))
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
  const config = { dataDir, databasePath: join(dataDir, 'notesvc.db'), storage: 'disk' as const }
  return { config, ids, close: () => store.close() }
}

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
    const r = await runBackup({ ...d.config, storage: 's3', bucket: 'recordings', dest: folder('s3'), say: l => said.push(l) })
    await d.close()
    expect(r.manifest).toMatchObject({ storage: 's3', bucket: 'recordings', missingMedia: [] })
    expect(r.manifest.files.map(f => f.path)).toEqual(['notesvc.db'])
    expect(said.join('\n')).toContain("left in the S3 bucket recordings and not copied (1 files); protect them with the bucket's versioning or replication")
  })
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

  test.each([
    ['a file of the manifest missing', (b: { dest: string; mediaPath: string }) => rmSync(join(b.dest, b.mediaPath)), (b: { mediaPath: string }) => `${b.mediaPath} is missing`],
    ['a file of another size', (b: { dest: string; mediaPath: string }) => writeFileSync(join(b.dest, b.mediaPath), 'short'), (b: { mediaPath: string }) => `${b.mediaPath} is 5 bytes, the manifest says 1000`],
    ['a path outside the backup', (b: { dest: string }) => rewrite(b.dest, m => m.files.push({ path: '../../etc/passwd', size: 1, sha256: '0' })), () => 'names a file outside the backup folder (../../etc/passwd)'],
    ['a newer schema', (b: { dest: string }) => rewrite(b.dest, m => { m.schemaVersion = 999 }), () => 'schema version 999, newer than this build knows'],
  ])('%s', async (_what, damage, message) => {
    const b = await backup()
    damage(b)
    const target = into()
    await expect(runRestore({ ...target, src: b.dest })).rejects.toThrow(message(b))
    expect(existsSync(target.databasePath)).toBe(false)
    expect(existsSync(join(target.dataDir, 'media'))).toBe(false)
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
