import { describe, expect, test } from 'bun:test'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { freshPostgresUrl } from '../../helpers/backends'
import { systemClock } from '../../../src/clock'
import { PostgresStore, type Store } from '../../../src/db/store'
import type { ApiError } from '../../../src/http/errors'
import { createIdGenerator } from '../../../src/ids'
import { createFoldersRepo } from '../../../src/modules/folders/repo'
import { createFoldersService, folderExistsIn } from '../../../src/modules/folders/service'
import { notesRepoFor } from '../../../src/services'
import { createRevisionsRepo } from '../../../src/modules/notes/revisions-repo'
import { createNotesService } from '../../../src/modules/notes/service'

for (const b of backEnds) describe.skipIf(b.skip)(`folders on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const t = createTestApp({ clock, store: await open() })
    return { ...t, clock, token: await t.key() }
  }

  describe('folders', () => {
    test('create, get, update and list by name, case-insensitive', async () => {
      const t = await setup()
      const mk = async (name: string, color?: string) => (await t.call('POST', '/v1/folders', { token: t.token, body: { name, color } })).body
      const b = await mk('beta', '#00ff00')
      await mk('Alpha')
      await mk('gamma')
      expect(b).toMatchObject({ name: 'beta', color: '#00ff00', createdAt: '2026-11-01T10:00:00.000Z' })
      expect(b.id).toMatch(/^fld_/)
      expect((await t.call('GET', '/v1/folders', { token: t.token })).body.data.map((f: any) => f.name)).toEqual(['Alpha', 'beta', 'gamma'])
      expect((await t.call('GET', `/v1/folders/${b.id}`, { token: t.token })).body).toEqual(b)
      t.clock.advance(1000)
      const u = await t.call('PATCH', `/v1/folders/${b.id}`, { token: t.token, body: { name: 'Zeta' } })
      expect(u.status).toBe(200)
      expect(u.body).toMatchObject({ name: 'Zeta', color: '#00ff00', updatedAt: '2026-11-01T10:00:01.000Z' })
      expect((await t.call('GET', '/v1/folders', { token: t.token })).body.data.map((f: any) => f.name)).toEqual(['Alpha', 'gamma', 'Zeta'])
    })

    test('a folder without a color has color null', async () => {
      const t = await setup()
      const r = await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'plain' } })
      expect(r.status).toBe(201)
      expect(r.body.color).toBeNull()
    })

    test('deleting a folder keeps its notes and moves them to the top level', async () => {
      const t = await setup()
      const f = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'Doomed' } })).body
      const other = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'Kept' } })).body
      const inside = []
      for (const title of ['a', 'b', 'c']) inside.push((await t.call('POST', '/v1/notes', { token: t.token, body: { title, content: 'x', folderId: f.id } })).body)
      const elsewhere = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'd', content: 'x', folderId: other.id } })).body
      t.clock.advance(1000)
      const del = await t.call('DELETE', `/v1/folders/${f.id}`, { token: t.token })
      expect(del.status).toBe(204)
      expect(del.text).toBe('')
      expect((await t.call('GET', `/v1/folders/${f.id}`, { token: t.token })).status).toBe(404)
      for (const n of inside) {
        const got = (await t.call('GET', `/v1/notes/${n.id}`, { token: t.token })).body
        expect(got.folderId).toBeNull()
        // sync clients that list with updatedAfter see the move
        expect(got.updatedAt).toBe('2026-11-01T10:00:01.000Z')
      }
      expect((await t.call('GET', `/v1/notes/${elsewhere.id}`, { token: t.token })).body.folderId).toBe(other.id)
      expect((await t.call('GET', '/v1/notes', { token: t.token })).body.data).toHaveLength(4)
    })

    test('deletion is one transaction: when it fails, no note is moved', async () => {
      const t = await setup()
      const f = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'F' } })).body
      const n = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'n', content: 'x', folderId: f.id } })).body
      // The notes are unfiled first, then the folder row is deleted: make that second step fail.
      if (t.store.sql.name === 'sqlite') {
        await t.store.run(`CREATE TRIGGER refuse_folder_delete BEFORE DELETE ON folders BEGIN SELECT RAISE(ABORT, 'refused by test'); END`)
      } else {
        await t.store.run(`CREATE FUNCTION refuse_folder_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by test'; END $$`)
        await t.store.run('CREATE TRIGGER refuse_folder_delete BEFORE DELETE ON folders FOR EACH ROW EXECUTE FUNCTION refuse_folder_delete()')
      }
      const r = await t.call('DELETE', `/v1/folders/${f.id}`, { token: t.token })
      expect(r.status).toBe(500)
      expect(r.text).not.toContain('refused by test')
      expect((await t.call('GET', `/v1/notes/${n.id}`, { token: t.token })).body.folderId).toBe(f.id)
      expect((await t.call('GET', `/v1/folders/${f.id}`, { token: t.token })).status).toBe(200)
    })

    test('404 for unknown folders on get, update and delete', async () => {
      const t = await setup()
      expect((await t.call('GET', '/v1/folders/fld_x', { token: t.token })).status).toBe(404)
      expect((await t.call('PATCH', '/v1/folders/fld_x', { token: t.token, body: { name: 'n' } })).status).toBe(404)
      expect((await t.call('DELETE', '/v1/folders/fld_x', { token: t.token })).status).toBe(404)
    })
  })
})

/** The notes and folders services of one node, on its own store (no accounts module needed). */
function libraryNode(store: Store) {
  const ids = createIdGenerator()
  const foldersRepo = createFoldersRepo(store)
  const notes = createNotesService({ repo: notesRepoFor(store), clock: systemClock, ids, store, folderExists: folderExistsIn(foldersRepo), revisions: createRevisionsRepo(store) })
  const folders = createFoldersService({ repo: foldersRepo, clock: systemClock, ids, store, unfileNotes: id => notes.unfileFolder(id) })
  return { notes, folders }
}

const postgres = backEnds.find(b => b.name === 'postgres')!
describe.skipIf(postgres.skip)('a folder deleted on one node while another files notes in it (PostgreSQL, two stores on one database)', () => {
  test('every note filed concurrently ends up in the folder before its deletion (then at the top level) or is refused with 400; never a 500', async () => {
    const url = await freshPostgresUrl()
    const [a, b] = [new PostgresStore(url, { max: 4 }), new PostgresStore(url, { max: 4 })]
    try {
      await a.run("INSERT INTO accounts (id, email, grant_period, created_at) VALUES ('acct_nodes', 'nodes@example.com', '2026-11', '2026-11-01T00:00:00.000Z')")
      const lib = { accountId: 'acct_nodes', sandbox: false }
      const [nodeA, nodeB] = [libraryNode(a), libraryNode(b)]
      const outcomes = { filed: 0, refused: 0 }
      for (let round = 0; round < 15; round++) {
        const folder = await nodeA.folders.create(lib, { name: `F${round}` })
        const moving = await nodeB.notes.create(lib, { title: `top ${round}`, content: 'x' })
        const results = await Promise.allSettled([
          nodeA.folders.delete(lib, folder.id, { actor: { type: 'key', id: 'key_nodes' }, origin: null }),
          nodeB.notes.create(lib, { title: `new ${round}`, content: 'x', folderId: folder.id }),
          nodeB.notes.update(lib, moving.id, { folderId: folder.id }),
          nodeB.notes.create(lib, { title: `another ${round}`, content: 'x', folderId: folder.id }),
        ])
        expect(results[0].status).toBe('fulfilled')
        for (const r of results.slice(1)) {
          if (r.status === 'fulfilled') outcomes.filed++
          else {
            expect([(r.reason as ApiError).code, (r.reason as ApiError).status]).toEqual(['invalid_request', 400])
            outcomes.refused++
          }
        }
        // whatever was filed before the deletion was moved to the top level with it
        expect(await a.all('SELECT id FROM notes WHERE folder_id = ?', [folder.id])).toEqual([])
        expect(await a.get('SELECT id FROM folders WHERE id = ?', [folder.id])).toBeNull()
      }
      expect(outcomes.filed + outcomes.refused).toBe(45)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  }, 60_000)
})
