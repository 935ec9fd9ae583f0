#!/usr/bin/env bun
/**
 * What the web library's list costs at 100,000 notes (BENCH_NOTES to change it): the requests the page
 * makes for one page of the list, as the page makes them (session cookie and CSRF header), at the first,
 * a middle and the last page, with and without a filter. In process (app.handle), so it measures the
 * server's work, not the network. Prints p50 and p99 per request kind. See bench/README.md.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedLibrary } from './list-notes'
import { loadConfig } from '../src/config'
import { systemClock } from '../src/clock'
import { createIdGenerator } from '../src/ids'
import { openDatabase } from '../src/db/database'
import { SqliteStore } from '../src/db/store'
import { createServices } from '../src/services'
import { createApp } from '../src/app'
import { silentLogger } from '../src/log'

const SIZE = Number(process.env.BENCH_NOTES ?? 100_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40)
const PAGE = 50

const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-library-'))
try {
  const seedStarted = performance.now()
  const seeded = await seedLibrary(dir, SIZE)
  process.stderr.write(`seeded ${SIZE} notes in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`)
  const config = loadConfig({ NOTESVC_DATA_DIR: dir, NOTESVC_RATE_LIMITS: 'read=1000000,write=1000000,processing=1000000' })
  const db = openDatabase(config.databasePath)
  const services = createServices({ config, store: new SqliteStore(db), clock: systemClock, ids: createIdGenerator() })
  const app = createApp({ config, clock: systemClock, ids: createIdGenerator(), log: silentLogger, services })
  await services.web.setPassword('bench@example.com', 'bench passphrase')
  const signIn = await services.web.signIn('bench@example.com', 'bench passphrase', '127.0.0.1')
  if (!signIn.ok) throw new Error('sign-in failed')
  const cookie = signIn.setCookie.split(';')[0]!
  const shell = await (await app.handle(new Request('http://127.0.0.1/', { headers: { cookie } }))).text()
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(shell)![1]!
  const headers = { cookie, 'x-csrf-token': csrf, 'x-notesvc-library': 'live' }

  const get = async (path: string) => {
    const res = await app.handle(new Request(`http://127.0.0.1${path}`, { headers }))
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json() as Promise<any>
  }
  const lastOffset = Math.floor((SIZE - 1) / PAGE) * PAGE
  const folder = seeded.folders[0]!
  const cases: [string, string][] = [
    ['first page', `/v1/notes?limit=${PAGE}&offset=0`],
    ['middle page', `/v1/notes?limit=${PAGE}&offset=${Math.floor(SIZE / 2 / PAGE) * PAGE}`],
    ['last page', `/v1/notes?limit=${PAGE}&offset=${lastOffset}`],
    ['a folder, page 100', `/v1/notes?limit=${PAGE}&offset=${99 * PAGE}&folderId=${folder}`],
    ['type=video, page 100', `/v1/notes?limit=${PAGE}&offset=${99 * PAGE}&type=video`],
  ]
  const pct = (xs: number[], p: number) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
  console.log(`library page at ${SIZE} notes, ${ROUNDS} rounds each (list + recording lengths, as the page asks)`)
  for (const [name, path] of cases) {
    const list: number[] = []
    const lengths: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      let t = performance.now()
      const page = await get(path)
      list.push(performance.now() - t)
      t = performance.now()
      await get(`/web/durations?ids=${page.data.map((n: { id: string }) => n.id).join(',')}`)
      lengths.push(performance.now() - t)
      if (page.data.length === 0) throw new Error(`${name}: empty page`)
    }
    console.log(`${name.padEnd(22)} list p50 ${pct(list, 50).toFixed(2)} ms, p99 ${pct(list, 99).toFixed(2)} ms; lengths p50 ${pct(lengths, 50).toFixed(2)} ms, p99 ${pct(lengths, 99).toFixed(2)} ms`)
  }
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
