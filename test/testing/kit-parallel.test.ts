import { expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { startNotesvc } from '../../src/testing'
import { call, refuses, uploadRecording } from '../helpers/kit-calls'

const KITS = 20

/**
 * 20 kits in one test file at once (the target): each its own port, folder, database and
 * keys, so each sees only its own notes and webhooks, and all stop clean.
 */
test(`${KITS} kits started together do not see each other`, async () => {
  const kits = await Promise.all(Array.from({ length: KITS }, () => startNotesvc()))
  try {
    expect(new Set(kits.map(k => k.url)).size).toBe(KITS)
    expect(new Set(kits.map(k => k.dataDir)).size).toBe(KITS)
    const made = await Promise.all(kits.map(async (kit, i) => {
      const note = await call(kit.url, 'POST', '/v1/notes', kit.liveKey, { title: `Kit ${i}`, content: `note of kit ${i}` })
      const { created } = await uploadRecording(kit.url, kit.sandboxKey, `kit ${i}.wav`)
      return { live: note.body.id as string, sandbox: created.body.noteId as string }
    }))
    await Promise.all(kits.map(async (kit, i) => {
      const live = await call(kit.url, 'GET', '/v1/notes', kit.liveKey)
      expect(live.body.data.map((n: { title: string }) => n.title)).toEqual([`Kit ${i}`])
      const sandbox = await call(kit.url, 'GET', '/v1/notes', kit.sandboxKey)
      expect(sandbox.body.data.map((n: { id: string }) => n.id)).toEqual([made[i]!.sandbox])
      // another kit's key is unknown here
      const foreign = await call(kit.url, 'GET', '/v1/notes', kits[(i + 1) % KITS]!.liveKey)
      expect(foreign.status).toBe(401)
      const event = await kit.webhooks.next('note.completed')
      expect(event.data.noteId).toBe(made[i]!.sandbox)
    }))
    for (const kit of kits) expect(kit.webhooks.all().map(d => d.data.noteId)).toEqual([made[kits.indexOf(kit)]!.sandbox])
  } finally {
    await Promise.all(kits.map(k => k.stop()))
  }
  for (const kit of kits) {
    expect(existsSync(kit.dataDir)).toBe(false)
    expect(await refuses(kit.url)).toBe(true)
  }
}, 60_000)
