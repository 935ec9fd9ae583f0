import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { SqliteStore } from '../../src/db/store'
import { runBackup } from '../../src/backup/backup'
import { runRestore } from '../../src/backup/restore'
import { createTestApp } from '../helpers/app'
import { tempDir } from '../helpers/process'

/**
 * The marker a killed restore leaves (src/backup/marker.ts) is read from disk: the next restore
 * removes the recordings it names, and nothing outside the data folder's media/ whatever it names.
 * The kill itself, and the marker's other outcomes: restore.test.ts.
 */
const work = tempDir('notesvc-marker-')
afterAll(() => work.remove())

// Fails if the sweep removed every file the marker names (the media/ check dropped): the operator's
// files beside media/, beside the data folder and elsewhere would be deleted by a restore.
test('a marker naming files outside media/ (relative, climbing, absolute): restore removes only the recording under media/', async () => {
  // a backup of a data folder with one note
  const source = join(work.path, 'source')
  mkdirSync(source)
  const store = new SqliteStore(openDatabase(join(source, 'notesvc.db')))
  const t = createTestApp({ store, env: { NOTESVC_DATA_DIR: source } })
  expect((await t.call('POST', '/v1/notes', { token: await t.key(), body: { title: 'kept', content: 'hello' } })).status).toBe(201)
  await store.close()
  const backup = join(work.path, 'backup')
  await runBackup({ dataDir: source, databasePath: join(source, 'notesvc.db'), storage: 'disk', dest: backup })

  // a data folder a restore was killed in: one recording written, the marker left; and files that are not the restore's
  const target = join(work.path, 'target')
  const elsewhere = join(work.path, 'elsewhere')
  mkdirSync(join(target, 'media', 'ab'), { recursive: true })
  mkdirSync(elsewhere)
  const own: Record<string, string> = {
    [join(target, 'README.txt')]: 'restore of the 26th',
    [join(target, 'settings.json')]: '{"theme":"dark"}',
    [join(work.path, 'beside-the-data-folder.txt')]: 'beside',
    [join(elsewhere, 'keep.txt')]: 'elsewhere',
  }
  for (const [path, text] of Object.entries(own)) writeFileSync(path, text)
  writeFileSync(join(target, 'media', 'ab', 'rec.wav'), 'written by the killed restore')
  const named = ['media/ab/rec.wav', 'README.txt', 'media/../settings.json', '../beside-the-data-folder.txt', join(elsewhere, 'keep.txt')]
  writeFileSync(join(target, '.notesvc-restore.json'), JSON.stringify({
    format: 'notesvc-restore/1', startedAt: '2026-11-26T10:00:00.000Z', src: backup,
    backup: { createdAt: '2026-11-26T09:00:00.000Z', manifestSha256: 'x' }, files: named,
  }))

  const said: string[] = []
  await runRestore({ src: backup, dataDir: target, databasePath: join(target, 'notesvc.db'), storage: 'disk', say: l => said.push(l) })
  const left = Object.fromEntries(Object.keys(own).map(path => [path, existsSync(path) ? readFileSync(path, 'utf8') : 'deleted']))
  expect(left).toEqual(own)
  expect(said[0]).toContain('removed the 1 recording it had written (5 named in .notesvc-restore.json, nothing else)')
  expect(existsSync(join(target, 'media', 'ab', 'rec.wav'))).toBe(false)
  // and the restore completed
  expect(existsSync(join(target, '.notesvc-restore.json'))).toBe(false)
  const db = new Database(join(target, 'notesvc.db'), { readonly: true })
  expect(db.query('SELECT title FROM notes').all()).toEqual([{ title: 'kept' }])
  db.close()
})
