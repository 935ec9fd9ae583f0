#!/usr/bin/env bun
/**
 * Throughput and latency of GET /v1/notes?limit=50 for libraries of different sizes, against a bare
 * Bun.serve returning the same body. See bench/README.md.
 *
 * The same file is also the baseline server: `bun run bench/list-notes.ts --baseline-server` serves the
 * file named by BENCH_BODY_FILE on PORT, so the script needs no second file.
 */
import { SqliteStore } from '../src/db/store'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { loadConfig } from '../src/config'
import { systemClock } from '../src/clock'
import { createIdGenerator } from '../src/ids'
import { openDatabase } from '../src/db/database'
import { createServices, notesRepoFor } from '../src/services'
import { seededRandom } from '../test/fixtures/random'
import { BenchFailure, CAN_PIN, WARMUP_SECONDS, describeLoad, measure, median, medianOf, parseLoads, type Load, type WrkResult } from './lib/wrk'

const HOST = '127.0.0.1'
const PAGE = 50
const LIST_PATH = `/v1/notes?limit=${PAGE}`
const TARGET_RATIO = 0.5
/** the issue's target (issue 30): the kept first page at the largest size, pinned, against the minimal server */
const TARGET_PINNED_RATIO = 0.8
const TARGET_FLATNESS = 1.5
const REPO_ROOT = resolve(import.meta.dir, '..')

interface Settings {
  /** `first`: the first page, as before; `varied`: a random page and filter on every request */
  modes: ('first' | 'varied')[]
  sizes: number[]
  seconds: number
  /** each server is measured this many times, in turn; the median run is reported */
  rounds: number
  /** how wrk is run (BENCH_LOADS): the first mode measures every one; the varied mode the first */
  loads: Load[]
}

interface SizeResult {
  size: number
  seedSeconds: number
  bodyBytes: number
  /** one result per load of the settings, in their order */
  byLoad: LoadResult[]
}

interface LoadResult {
  load: Load
  /** read cache on (the default): repeated identical requests are served from memory */
  notesvc: WrkResult
  /** read cache off: every request queries SQLite, so this is what shows the index at work */
  uncached: WrkResult
  baseline: WrkResult
  /** the floor: a bare Bun.serve doing only what notesvc's answer is made of (startFloor) */
  floor: WrkResult
  /** medians of the CPU time per request over the rounds, each figure on its own */
  cpu: { notesvcUs: number; baselineUs: number; floorUs: number; wrkAtBaselineCores: number }
}

interface VariedResult {
  size: number
  bodyBytes: number
  /** one run per filter, random offsets within it */
  filters: { name: string; matching: number; result: WrkResult }[]
  /** every filter and offset mixed, as shipped (read cache on) */
  mixed: WrkResult
  /** the same with the read cache off: what the queries cost */
  mixedUncached: WrkResult
  baseline: WrkResult
}

function readSettings(env = process.env): Settings {
  const sizes = (env.BENCH_SIZES ?? '1000,100000').split(',').map(s => Number(s.trim()))
  if (sizes.some(n => !Number.isInteger(n) || n < PAGE)) {
    throw new BenchFailure(`BENCH_SIZES=${env.BENCH_SIZES} must be a comma-separated list of whole numbers of at least ${PAGE}`)
  }
  const seconds = Number(env.BENCH_SECONDS ?? '8')
  if (!Number.isInteger(seconds) || seconds < 1) throw new BenchFailure(`BENCH_SECONDS=${env.BENCH_SECONDS} must be a whole number of at least 1`)
  const rounds = Number(env.BENCH_ROUNDS ?? '2')
  if (!Number.isInteger(rounds) || rounds < 1) throw new BenchFailure(`BENCH_ROUNDS=${env.BENCH_ROUNDS} must be a whole number of at least 1`)
  const modes = (env.BENCH_MODE ?? 'first,varied').split(',').map(m => m.trim())
  if (modes.length === 0 || modes.some(m => m !== 'first' && m !== 'varied')) throw new BenchFailure(`BENCH_MODE=${env.BENCH_MODE} must be first, varied, or both comma-separated`)
  return { modes: modes as Settings['modes'], sizes, seconds, rounds, loads: parseLoads(env.BENCH_LOADS ?? '2p,2u,1p') }
}

// ---------------------------------------------------------------------------------------------------
// Seeding

/** Deterministic pseudo-random numbers, so every run seeds the same library. */
const randomSource = seededRandom

const WORDS = ('meeting roadmap budget customer launch review design weekly interview notes quarterly hiring ' +
  'migration incident retro planning feedback pricing onboarding release sprint backlog metrics growth ' +
  'support contract partner workshop research strategy podcast lecture chapter summary decision action ' +
  'follow-up owner deadline risk scope estimate team product engineering marketing sales finance legal').split(' ')

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!
}

/** Words joined into sentences until the text reaches `length` characters. */
function prose(rand: () => number, length: number): string {
  let text = ''
  while (text.length < length) {
    const words = Array.from({ length: 6 + Math.floor(rand() * 10) }, () => pick(rand, WORDS))
    text += words.join(' ').replace(/^./, c => c.toUpperCase()) + '. '
  }
  return text.slice(0, length).trimEnd()
}

/** A pool of texts to draw from: generating 100,000 distinct 2,000-character transcripts would dominate seeding. */
function pool(rand: () => number, count: number, length: number): string[] {
  return Array.from({ length: count }, () => prose(rand, length))
}

/**
 * Creates the database in `dataDir` with one account, a live API key and `size` notes in its live
 * library, dated over the last three years, some in folders. Returns the key.
 */
/** What the varied benchmark needs to know of each seeded note, to choose filters and offsets. */
interface SeededNote {
  created: number
  updated: number
  folder: string | null
  status: string
  type: string
  /** the names of its tags */
  tags: string[]
}

interface SeededLibrary {
  key: string
  folders: string[]
  /** the library's tags by name */
  tags: string[]
  notes: SeededNote[]
}

/** The seeded library's tags: about 30% of notes carry one, a third of those a second (as folders: 30%). */
const TAG_NAMES = ['meeting', 'customer', 'idea', 'todo']

/** How long after creation a note changed, for the fifth of notes that were edited or processed later. */
const CHANGED_AFTER_MS = [20e3, 3 * 60e3, 45 * 60e3, 5 * 3600e3, 30 * 3600e3, 4 * 86400e3, 20 * 86400e3, 200 * 86400e3]

/**
 * A data folder's SQLite database opened for seeding, with the services over it and one account with a
 * live key (bench@example.com); `seed` fills it, then the WAL is folded into the file and the database
 * closed, whatever happened.
 */
type Services = ReturnType<typeof createServices>
type Account = Awaited<ReturnType<Services['accounts']['createKey']>>['account']

export async function seeding<T>(dataDir: string, seed: (s: { store: SqliteStore; services: Services; key: string; account: Account }) => Promise<T>): Promise<T> {
  const config = loadConfig({ NOTESVC_DATA_DIR: dataDir })
  const db = openDatabase(config.databasePath)
  try {
    const store = new SqliteStore(db)
    const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator() })
    const { key, account } = await services.accounts.createKey({ email: 'bench@example.com' })
    const result = await seed({ store, services, key, account })
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    return result
  } finally {
    db.close()
  }
}

export async function seedLibrary(dataDir: string, size: number): Promise<SeededLibrary> {
  return seeding(dataDir, async ({ store, services, key, account }) => {
    const library = { accountId: account.id, sandbox: false }
    const folders: string[] = []
    for (const name of ['Work', 'Personal', 'Lectures', 'Podcasts']) folders.push((await services.folders.create(library, { name })).id)
    const tagRows = new Map<string, { id: string; name: string; color: string }>()
    for (const name of TAG_NAMES) {
      const { id, color } = await services.tags.create(library, { name })
      tagRows.set(name, { id, name, color })
    }
    // a random source of their own: the notes are the same as before tags were seeded
    const tagRand = randomSource(size + 7)

    const rand = randomSource(size)
    const summaries = pool(rand, 200, 300)
    const transcripts = pool(rand, 50, 2000)
    let noteTime = 0
    const noteIds = createIdGenerator(() => noteTime)
    const end = Date.now()
    const step = (3 * 365 * 24 * 3600 * 1000) / size
    // The notes repository's own insert, so the benchmark follows the schema wherever it goes.
    const notes = notesRepoFor(store)
    const seeded: SeededNote[] = []

    await store.transaction(async () => {
      for (let i = 0; i < size; i++) {
        noteTime = Math.round(end - (size - i) * step + rand() * step)
        const created = new Date(noteTime).toISOString()
        const updatedTime = rand() < 0.2 ? Math.min(end, noteTime + pick(rand, CHANGED_AFTER_MS)) : noteTime
        const summary = pick(rand, summaries)
        const failed = rand() < 0.02
        const folder = rand() < 0.3 ? pick(rand, folders) : null
        const type = pick(rand, ['audio', 'audio', 'video', 'youtube', 'import'])
        const tags = tagRand() < 0.3 ? [pick(tagRand, TAG_NAMES)] : []
        if (tags.length && tagRand() < 0.33) tags.push(pick(tagRand, TAG_NAMES.filter(n => n !== tags[0])))
        tags.sort()
        seeded.push({ created: noteTime, updated: updatedTime, folder, status: failed ? 'Error' : 'Done', type, tags })
        const id = noteIds.next('note')
        await notes.insert({
          id,
          account_id: account.id,
          sandbox: 0,
          folder_id: folder,
          title: prose(rand, 40),
          summary: failed ? '' : summary,
          original_transcription: failed ? '' : pick(rand, transcripts),
          structured_content: failed ? null : JSON.stringify({ markdown: summary, actionItems: [prose(rand, 60), prose(rand, 60)], topics: [pick(rand, WORDS), pick(rand, WORDS)] }),
          status: failed ? 'Error' : 'Done',
          processing_stage: failed ? 'transcribing' : null,
          type,
          style_id: 'note',
          language: 'en',
          is_pinned: rand() < 0.05 ? 1 : 0,
          source: 'api',
          error_code: failed ? 'transcription_failed' : null,
          error_message: failed ? 'the recording could not be transcribed' : null,
          date_created: created,
          updated_at: new Date(updatedTime).toISOString(),
        })
        // the rows the tags module writes (its own note_tags and the note's tags column), without
        // moving updated_at as an add through the API would
        for (const name of tags) await store.run('INSERT INTO note_tags (note_id, tag_id, date_created) VALUES (?, ?, ?)', [id, tagRows.get(name)!.id, created])
        if (tags.length) await store.run('UPDATE notes SET tags = ? WHERE id = ?', [JSON.stringify(tags.map(n => tagRows.get(n)!)), id])
      }
    })
    // Leave no WAL behind: otherwise the server's first write can find the database locked.
    return { key, folders, tags: TAG_NAMES, notes: seeded }
  })
}

// ---------------------------------------------------------------------------------------------------
// Processes

interface Server {
  proc: Subprocess
  baseUrl: string
}

function freePort(): number {
  const probe = Bun.serve({ hostname: HOST, port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

function logTail(logPath: string): string {
  try {
    return readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n')
  } catch {
    return '(no log)'
  }
}

/** Starts `args` under bun with PORT set, output to `logPath`, and waits until `readyPath` answers 200. */
async function startServer(name: string, args: string[], env: Record<string, string>, readyPath: string, logPath: string): Promise<Server> {
  const port = freePort()
  const log = openSync(logPath, 'a')
  // placed on a core (or not) before each run, as the run's load says (lib/wrk.ts placeServer)
  const proc = Bun.spawn([process.execPath, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST },
    stdin: 'ignore',
    stdout: log,
    stderr: log,
  })
  closeSync(log)
  const server = { proc, baseUrl: `http://${HOST}:${port}` }
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new BenchFailure(`${name} exited with code ${proc.exitCode} before answering:\n${logTail(logPath)}`)
    try {
      if ((await fetch(server.baseUrl + readyPath)).ok) return server
    } catch {
      // not listening yet
    }
    await Bun.sleep(50)
  }
  await stopServer(server)
  throw new BenchFailure(`${name} did not answer ${readyPath} within 15 s:\n${logTail(logPath)}`)
}

async function stopServer(server: Server): Promise<void> {
  if (server.proc.exitCode !== null) return
  server.proc.kill('SIGTERM')
  const exited = await Promise.race([server.proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)])
  if (!exited) {
    server.proc.kill('SIGKILL')
    await server.proc.exited
  }
}

function startNotesvc(dataDir: string, readCache: 'on' | 'off'): Promise<Server> {
  return startServer('notesvc', ['run', 'src/cli.ts', 'serve'], {
    NOTESVC_DATA_DIR: dataDir,
    NOTESVC_RATE_LIMITS: 'read=1000000000,write=1000000000,processing=1000000000',
    NOTESVC_READ_CACHE: readCache,
  }, '/v1/health', join(dataDir, 'notesvc.log'))
}

function startBaseline(workDir: string, bodyPath: string, contentType: string): Promise<Server> {
  return startServer('baseline', ['run', import.meta.path, '--baseline-server'], { BENCH_BODY_FILE: bodyPath, BENCH_CONTENT_TYPE: contentType }, '/', join(workDir, 'baseline.log'))
}

/**
 * The baseline process: a bare Bun.serve answering every request with the captured bytes and
 * notesvc's content type (Content-Length and Date added by Bun, keep-alive as for notesvc, no
 * compression on either side). Sent from bytes, as notesvc sends a kept page; a string body costs
 * the same here (bench/README.md, "The first page against a minimal server").
 */
function serveBaseline(): void {
  const body = new Blob([readFileSync(process.env.BENCH_BODY_FILE!)])
  const headers = { 'content-type': process.env.BENCH_CONTENT_TYPE! }
  Bun.serve({
    hostname: HOST,
    port: Number(process.env.PORT),
    fetch: () => new Response(body, { headers }),
  })
}

/**
 * The floor: a bare Bun.serve that does what notesvc's kept first page cannot leave out, and nothing
 * else: it reads the request's Authorization header (401 without one), makes a request id, counts the
 * request, and answers the same bytes with every header notesvc's answer carries (the request id and
 * the remaining count set afresh, as notesvc does). Between it and the baseline is what Bun charges for
 * those steps; between notesvc and it, what notesvc itself adds (bench/README.md, "The floor").
 */
function startFloor(workDir: string, bodyPath: string, headers: [string, string][]): Promise<Server> {
  return startServer('floor', ['run', import.meta.path, '--floor-server'], { BENCH_BODY_FILE: bodyPath, BENCH_HEADERS: JSON.stringify(headers) }, '/', join(workDir, 'floor.log'))
}

function serveFloor(): void {
  const body = new Blob([readFileSync(process.env.BENCH_BODY_FILE!)])
  const headers = new Headers(JSON.parse(process.env.BENCH_HEADERS!) as [string, string][])
  let remaining = 1_000_000_000
  Bun.serve({
    hostname: HOST,
    port: Number(process.env.PORT),
    fetch: request => {
      if (request.url.endsWith('/')) return new Response('ready') // the readiness probe
      if (!request.headers.get('authorization')) return new Response(null, { status: 401 })
      headers.set('x-request-id', `req_${crypto.randomUUID()}`)
      headers.set('x-ratelimit-remaining', String(--remaining))
      return new Response(body, { headers })
    },
  })
}

/** The answer's bytes and the headers a client's reading depends on, to compare notesvc's and the baseline's. */
async function answerOf(url: string, key: string): Promise<{ bytes: Buffer; framing: string }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip, br' }, decompress: false } as RequestInit)
  const bytes = Buffer.from(await res.arrayBuffer())
  const framing = ['content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'connection'].map(h => `${h}: ${res.headers.get(h) ?? '-'}`).join(', ')
  return { bytes, framing }
}

// ---------------------------------------------------------------------------------------------------
// Measuring

/** Fetches the first page once, fails unless it is a 200 with a full page, and returns the body. */
async function firstPage(server: Server, key: string): Promise<string> {
  return (await firstPageAnswer(server, key)).body
}

async function firstPageAnswer(server: Server, key: string): Promise<{ body: string; contentType: string; headers: [string, string][] }> {
  const res = await fetch(server.baseUrl + LIST_PATH, { headers: { authorization: `Bearer ${key}` } })
  const body = await res.text()
  if (res.status !== 200) throw new BenchFailure(`GET ${LIST_PATH} answered ${res.status}: ${body.slice(0, 500)}`)
  const items = (JSON.parse(body) as { data?: unknown[] }).data?.length
  if (items !== PAGE) throw new BenchFailure(`GET ${LIST_PATH} returned ${items} items, expected ${PAGE}`)
  // every header but those Bun.serve writes itself
  const headers = [...res.headers].filter(([name]) => !['date', 'content-length', 'connection', 'keep-alive'].includes(name))
  return { body, contentType: res.headers.get('content-type') ?? '', headers }
}

/** Fails unless the baseline sends notesvc's bytes with the same framing (type, length, no compression). */
async function sameAnswer(notesvc: Server, baseline: Server, key: string): Promise<void> {
  const [a, b] = await Promise.all([answerOf(notesvc.baseUrl + LIST_PATH, key), answerOf(baseline.baseUrl + LIST_PATH, key)])
  if (!a.bytes.equals(b.bytes)) throw new BenchFailure('the baseline does not send the bytes notesvc sends')
  if (a.framing !== b.framing) throw new BenchFailure(`the baseline's framing differs: notesvc ${a.framing}; baseline ${b.framing}`)
  baselineCheck = `the same ${fmtInt(a.bytes.length)} bytes, ${a.framing}`
}

/** what sameAnswer found, for the report */
let baselineCheck = ''
/** the headers the floor server sends, for the report */
let floorCheck = ''

async function benchSize(size: number, settings: Settings): Promise<SizeResult> {
  const workDir = mkdtempSync(join(tmpdir(), `notesvc-bench-${size}-`))
  const servers: Server[] = []
  try {
    const seedStart = performance.now()
    const { key } = await seedLibrary(workDir, size)
    const seedSeconds = (performance.now() - seedStart) / 1000
    process.stderr.write(`N=${size}: seeded in ${seedSeconds.toFixed(1)} s\n`)

    const headers = [`Authorization: Bearer ${key}`]
    const notesvc = await startNotesvc(workDir, 'on')
    servers.push(notesvc)
    const { body, contentType, headers: answerHeaders } = await firstPageAnswer(notesvc, key)
    const uncached = await startNotesvc(workDir, 'off')
    servers.push(uncached)
    if ((await firstPage(uncached, key)) !== body) throw new BenchFailure('the uncached server answered a different first page')
    const bodyPath = join(workDir, 'body.json')
    writeFileSync(bodyPath, body)
    const baseline = await startBaseline(workDir, bodyPath, contentType)
    servers.push(baseline)
    await sameAnswer(notesvc, baseline, key)
    const floor = await startFloor(workDir, bodyPath, answerHeaders)
    servers.push(floor)
    floorCheck = `${answerHeaders.length} headers: ${answerHeaders.map(([n]) => n).join(', ')}`

    const byLoad: LoadResult[] = []
    for (const load of settings.loads) {
      // The three take turns, round after round, so a slow moment of the machine hits them alike.
      const runs: Record<'notesvc' | 'uncached' | 'baseline' | 'floor', WrkResult[]> = { notesvc: [], uncached: [], baseline: [], floor: [] }
      for (let round = 1; round <= settings.rounds; round++) {
        for (const [name, server] of [['notesvc', notesvc], ['uncached', uncached], ['baseline', baseline], ['floor', floor]] as const) {
          process.stderr.write(`N=${size}: ${describeLoad(load)}, round ${round}/${settings.rounds}, ${name}\n`)
          runs[name].push(await measure(server, server.baseUrl + LIST_PATH, settings.seconds, load, headers))
        }
      }
      const cpu = {
        notesvcUs: medianOf(runs.notesvc, r => r.serverUs),
        baselineUs: medianOf(runs.baseline, r => r.serverUs),
        floorUs: medianOf(runs.floor, r => r.serverUs),
        wrkAtBaselineCores: medianOf(runs.baseline, r => r.wrkCores),
      }
      byLoad.push({ load, notesvc: median(runs.notesvc), uncached: median(runs.uncached), baseline: median(runs.baseline), floor: median(runs.floor), cpu })
    }
    return { size, seedSeconds, bodyBytes: Buffer.byteLength(body), byLoad }
  } finally {
    await Promise.all(servers.map(stopServer))
    rmSync(workDir, { recursive: true, force: true })
  }
}


// ---------------------------------------------------------------------------------------------------
// Varied: a random page of a random filter on every request

const DAY_MS = 86_400_000

interface VariedFilter {
  name: string
  /** a repeated parameter (tag) as a list */
  query: Record<string, string | string[]>
  matches: (n: SeededNote) => boolean
}

/** The filters of the varied run: each list filter alone, combined, and updatedAfter at several depths. */
export function variedFilters(lib: SeededLibrary, end: number): VariedFilter[] {
  const work = lib.folders[0]!
  const since = (days: number) => new Date(end - days * DAY_MS).toISOString()
  const after = (days: number) => (n: SeededNote) => n.updated > end - days * DAY_MS
  return [
    { name: 'none', query: {}, matches: () => true },
    { name: 'status=Done', query: { status: 'Done' }, matches: n => n.status === 'Done' },
    { name: 'status=Error', query: { status: 'Error' }, matches: n => n.status === 'Error' },
    { name: 'type=video', query: { type: 'video' }, matches: n => n.type === 'video' },
    { name: 'folderId=<folder>', query: { folderId: work }, matches: n => n.folder === work },
    { name: 'folderId=null', query: { folderId: 'null' }, matches: n => n.folder === null },
    { name: 'tag=<tag>', query: { tag: [lib.tags[0]!] }, matches: n => n.tags.includes(lib.tags[0]!) },
    { name: 'tag=<tag>&tag=<tag>', query: { tag: [lib.tags[0]!, lib.tags[1]!] }, matches: n => n.tags.includes(lib.tags[0]!) && n.tags.includes(lib.tags[1]!) },
    { name: 'folder+status+type', query: { folderId: work, status: 'Done', type: 'audio' }, matches: n => n.folder === work && n.status === 'Done' && n.type === 'audio' },
    { name: 'updatedAfter=-1000d', query: { updatedAfter: since(1000) }, matches: after(1000) },
    { name: 'updatedAfter=-180d', query: { updatedAfter: since(180) }, matches: after(180) },
    { name: 'updatedAfter=-3d', query: { updatedAfter: since(3) }, matches: after(3) },
    { name: 'updatedAfter=-180d&status=Done', query: { updatedAfter: since(180), status: 'Done' }, matches: n => after(180)(n) && n.status === 'Done' },
  ]
}

/** `count` request paths of a filter, each at a random offset within its notes (seeded: the same every run). */
export function variedPaths(f: VariedFilter, matching: number, count: number, rand: () => number): string[] {
  const lastPage = Math.max(0, matching - PAGE)
  const query = Object.entries(f.query).flatMap(([k, v]) => (Array.isArray(v) ? v.map(x => [k, x]) : [[k, v]]))
  return Array.from({ length: count }, () => `/v1/notes?${new URLSearchParams([...query, ['limit', String(PAGE)], ['offset', String(Math.floor(rand() * (lastPage + 1)))]])}`)
}

/** A wrk script that sends one of `paths`, chosen at random, on every request. */
function writeWrkScript(path: string, paths: string[]): string {
  const lua = `local paths = {\n${paths.map(p => `  ${JSON.stringify(p)},`).join('\n')}\n}\nlocal n = #paths\nmath.randomseed(7)\nrequest = function()\n  return wrk.format(nil, paths[math.random(n)])\nend\n`
  writeFileSync(path, lua)
  return path
}

async function benchVaried(size: number, settings: Settings): Promise<VariedResult> {
  const workDir = mkdtempSync(join(tmpdir(), `notesvc-bench-varied-${size}-`))
  const servers: Server[] = []
  try {
    const end = Date.now()
    const lib = await seedLibrary(workDir, size)
    const headers = [`Authorization: Bearer ${lib.key}`]
    const notesvc = await startNotesvc(workDir, 'on')
    servers.push(notesvc)
    const { body, contentType } = await firstPageAnswer(notesvc, lib.key)
    const uncached = await startNotesvc(workDir, 'off')
    servers.push(uncached)
    const bodyPath = join(workDir, 'body.json')
    writeFileSync(bodyPath, body)
    const baseline = await startBaseline(workDir, bodyPath, contentType)
    servers.push(baseline)

    const rand = randomSource(size + 1)
    const filters = variedFilters(lib, end).map(f => ({ f, matching: lib.notes.filter(f.matches).length }))
    const all: string[] = []
    const perFilter: VariedResult['filters'] = []
    for (const { f, matching } of filters) {
      const paths = variedPaths(f, matching, 2000, rand)
      all.push(...paths.slice(0, 500))
      // every path of the run must answer 200: checked once here, and by wrk (non-2xx fails the run)
      const sample = await fetch(notesvc.baseUrl + paths[0], { headers: { authorization: `Bearer ${lib.key}` } })
      if (sample.status !== 200) throw new BenchFailure(`GET ${paths[0]} answered ${sample.status}: ${(await sample.text()).slice(0, 300)}`)
      await sample.arrayBuffer()
      process.stderr.write(`N=${size}: varied, ${f.name} (${matching} notes)\n`)
      const script = writeWrkScript(join(workDir, `filter-${perFilter.length}.lua`), paths)
      const runs: WrkResult[] = []
      for (let round = 1; round <= settings.rounds; round++) runs.push(await measure(notesvc, notesvc.baseUrl, settings.seconds, settings.loads[0]!, headers, script))
      perFilter.push({ name: f.name, matching, result: median(runs) })
    }
    const mixedScript = writeWrkScript(join(workDir, 'mixed.lua'), all)
    const mixedRuns: WrkResult[] = []
    const uncachedRuns: WrkResult[] = []
    const baselineRuns: WrkResult[] = []
    for (let round = 1; round <= settings.rounds; round++) {
      process.stderr.write(`N=${size}: varied, round ${round}/${settings.rounds}, mixed (cached and uncached) and baseline\n`)
      mixedRuns.push(await measure(notesvc, notesvc.baseUrl, settings.seconds, settings.loads[0]!, headers, mixedScript))
      uncachedRuns.push(await measure(uncached, uncached.baseUrl, settings.seconds, settings.loads[0]!, headers, mixedScript))
      baselineRuns.push(await measure(baseline, baseline.baseUrl + LIST_PATH, settings.seconds, settings.loads[0]!, headers))
    }
    return { size, bodyBytes: Buffer.byteLength(body), filters: perFilter, mixed: median(mixedRuns), mixedUncached: median(uncachedRuns), baseline: median(baselineRuns) }
  } finally {
    await Promise.all(servers.map(stopServer))
    rmSync(workDir, { recursive: true, force: true })
  }
}

const VARIED_P99_MS = 5
const VARIED_RATIO = 0.3

function printVaried(results: VariedResult[]): void {
  const out = (s = '') => process.stdout.write(s + '\n')
  out('varied: every request a random page (limit 50, any offset) of one filter; mixed: all filters at random; read cache on')
  const names = results[0]!.filters.map(f => f.name)
  out(table(
    ['filter', ...results.flatMap(r => [`${fmtInt(r.size)}: notes`, 'req/s', 'p50', 'p99'])],
    [
      ...names.map(name => [name, ...results.flatMap(r => {
        const f = r.filters.find(x => x.name === name)!
        return [fmtInt(f.matching), fmtInt(f.result.requestsPerSec), fmtMs(f.result.p50Ms), fmtP99(f.result)]
      })]),
      ['mixed', ...results.flatMap(r => ['', fmtInt(r.mixed.requestsPerSec), fmtMs(r.mixed.p50Ms), fmtP99(r.mixed)])],
      ['mixed, read cache off', ...results.flatMap(r => ['', fmtInt(r.mixedUncached.requestsPerSec), fmtMs(r.mixedUncached.p50Ms), fmtP99(r.mixedUncached)])],
      ['baseline', ...results.flatMap(r => [`${fmtInt(r.bodyBytes)} B`, fmtInt(r.baseline.requestsPerSec), fmtMs(r.baseline.p50Ms), fmtMs(r.baseline.p99Ms)])],
    ],
  ))
  out()
  const largest = results.reduce((a, b) => (b.size > a.size ? b : a))
  const smallest = results.reduce((a, b) => (b.size < a.size ? b : a))
  const worstP99 = largest.filters.reduce((a, b) => (b.result.timeouts > a.result.timeouts || (b.result.timeouts === a.result.timeouts && b.result.p99Ms > a.result.p99Ms) ? b : a))
  out(`target: p99 under ${VARIED_P99_MS} ms for every filter at ${fmtInt(largest.size)} notes: worst ${worstP99.name} ${fmtP99(worstP99.result)} -> ${verdict(worstP99.result.p99Ms < VARIED_P99_MS && worstP99.result.timeouts === 0)}`)
  const ratio = largest.mixed.requestsPerSec / largest.baseline.requestsPerSec
  const uncachedRatio = largest.mixedUncached.requestsPerSec / largest.baseline.requestsPerSec
  out(`target: mixed throughput >= ${VARIED_RATIO} x baseline at ${fmtInt(largest.size)} notes: ${fmtRatio(ratio)} -> ${verdict(ratio >= VARIED_RATIO)} (read cache off: ${fmtRatio(uncachedRatio)})`)
  if (smallest !== largest) {
    // judged with the read cache off: a small library's pages all fit in the cache, a large one's do not
    const growth = smallest.mixedUncached.requestsPerSec / largest.mixedUncached.requestsPerSec
    out(`target: mixed throughput (read cache off) flat from ${fmtInt(smallest.size)} to ${fmtInt(largest.size)} notes (within ${TARGET_FLATNESS}x): ${fmtRatio(growth)} -> ${verdict(growth <= TARGET_FLATNESS && growth >= 1 / TARGET_FLATNESS)}`)
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

function commandOutput(args: string[]): string {
  const r = Bun.spawnSync(args, { stdout: 'pipe', stderr: 'pipe' })
  return (r.stdout.toString() + r.stderr.toString()).trim().split('\n')[0] ?? ''
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US')
const fmtMs = (ms: number) => `${ms.toFixed(2)} ms`
/** p99, with the requests that timed out said beside it */
const fmtP99 = (r: WrkResult) => `${fmtMs(r.p99Ms)}${r.timeouts ? ` +${fmtInt(r.timeouts)} timeouts` : ''}`
const fmtRatio = (r: number) => `${r.toFixed(2)}x`
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS')

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
  return [line(header), widths.map(w => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

const loadAverage = () => commandOutput(['cat', '/proc/loadavg']).split(' ').slice(0, 3).join(' ')
const loadAtStart = loadAverage()

function printLoadTable(results: SizeResult[], index: number, out: (s?: string) => void): void {
  const load = results[0]!.byLoad[index]!.load
  out(`${describeLoad(load)}:`)
  out(table(
    ['notes', 'seed', 'body', 'notesvc req/s', 'p50', 'p99', 'uncached req/s', 'p50', 'p99', 'baseline req/s', 'p50', 'p99', 'floor req/s', 'notesvc/base', 'uncached/base', 'floor/base', 'notesvc/floor', 'CPU µs/req notesvc', 'baseline', 'floor', 'base/notesvc', 'wrk cores (baseline)'],
    results.map(r => {
      const x = r.byLoad[index]!
      return [
        fmtInt(r.size), `${r.seedSeconds.toFixed(1)} s`, `${fmtInt(r.bodyBytes)} B`,
        fmtInt(x.notesvc.requestsPerSec), fmtMs(x.notesvc.p50Ms), fmtMs(x.notesvc.p99Ms),
        fmtInt(x.uncached.requestsPerSec), fmtMs(x.uncached.p50Ms), fmtMs(x.uncached.p99Ms),
        fmtInt(x.baseline.requestsPerSec), fmtMs(x.baseline.p50Ms), fmtMs(x.baseline.p99Ms),
        fmtInt(x.floor.requestsPerSec),
        fmtRatio(x.notesvc.requestsPerSec / x.baseline.requestsPerSec),
        fmtRatio(x.uncached.requestsPerSec / x.baseline.requestsPerSec),
        fmtRatio(x.floor.requestsPerSec / x.baseline.requestsPerSec),
        fmtRatio(x.notesvc.requestsPerSec / x.floor.requestsPerSec),
        x.cpu.notesvcUs.toFixed(1), x.cpu.baselineUs.toFixed(1), x.cpu.floorUs.toFixed(1), fmtRatio(x.cpu.baselineUs / x.cpu.notesvcUs), x.cpu.wrkAtBaselineCores.toFixed(2),
      ]
    }),
  ))
  out()
}

/**
 * One line on why a single pinned wrk thread (this script before issue 30) and two (the issue's hand
 * measurement) give different ratios, from this run's own figures; bench/README.md has the reasoning.
 */
function disagreement(r: SizeResult): string | undefined {
  const find = (threads: number, pinned: boolean) => r.byLoad.find(x => x.load.threads === threads && x.load.pinned === pinned)
  const one = find(1, true)
  const two = find(2, true)
  if (!one || !two) return undefined
  const at = (x: LoadResult) => `baseline ${fmtInt(x.baseline.requestsPerSec)} req/s with wrk at ${x.cpu.wrkAtBaselineCores.toFixed(2)} cores, notesvc ${fmtRatio(x.notesvc.requestsPerSec / x.baseline.requestsPerSec)}`
  return `why this script (1 wrk thread) and the issue (2) disagree, ${fmtInt(r.size)} notes, same bytes and framing: 1 pinned thread: ${at(one)}; 2: ${at(two)}; ` +
    `CPU per request, which no client caps: ${fmtRatio(two.cpu.baselineUs / two.cpu.notesvcUs)} (bench/README.md, "The first page against a minimal server")`
}

function printReport(results: SizeResult[], settings: Settings): void {
  const out = (s = '') => process.stdout.write(s + '\n')
  out(`notesvc list benchmark: GET ${LIST_PATH}`)
  out(`machine: nproc ${commandOutput(['nproc'])}, bun ${Bun.version}, ${commandOutput(['wrk', '-v']).split(' Copyright')[0]}; load average ${loadAtStart} at the start, ${loadAverage()} at the end`)
  out(`runs: -d${settings.seconds}s --latency after a ${WARMUP_SECONDS}s warm-up, ${settings.rounds} rounds, the four servers in turn, the median run (of two: the faster); BENCH_LOADS=${settings.loads.map(l => `${l.threads}${l.pinned ? 'p' : 'u'}`).join(',')}${CAN_PIN ? '' : ' (no taskset or one core: nothing pinned)'}`)
  out('notesvc: as shipped (read cache on); uncached: NOTESVC_READ_CACHE=off, every request queries SQLite; baseline: bare Bun.serve (lib in this file) sending')
  out(`  ${baselineCheck} (checked against notesvc's answer)`)
  out(`floor: bare Bun.serve that reads the Authorization header, makes a request id and sends the same bytes with notesvc's ${floorCheck}`)
  const busiest = Math.max(...[loadAtStart, loadAverage()].map(l => Number(l.split(' ')[0])))
  if (busiest > navigator.hardwareConcurrency / 2) {
    out(`BUSY MACHINE: load average up to ${busiest} on ${navigator.hardwareConcurrency} cores: req/s (and their targets) follow the neighbours and wrk's share of a core; read the CPU columns`)
  }
  out('CPU µs/req: each server process\'s CPU time (all threads) over the requests wrk counted, median of the rounds; wrk cores: wrk\'s CPU time over the run, 1.00 = a core kept busy (then wrk, not the server, set the pace)')
  out()
  results[0]!.byLoad.forEach((_, i) => printLoadTable(results, i, out))

  const largest = results.reduce((a, b) => (b.size > a.size ? b : a))
  const pinned = largest.byLoad.find(x => x.load.pinned && x.load.threads >= 2) ?? largest.byLoad.find(x => x.load.pinned)
  if (pinned) {
    const ratio = pinned.notesvc.requestsPerSec / pinned.baseline.requestsPerSec
    out(`target: notesvc >= ${TARGET_PINNED_RATIO} x baseline, ${describeLoad(pinned.load)}, at ${fmtInt(largest.size)} notes: ${fmtRatio(ratio)} -> ${verdict(ratio >= TARGET_PINNED_RATIO)} (CPU per request: ${fmtRatio(pinned.cpu.baselineUs / pinned.cpu.notesvcUs)})`)
    out(`  the floor (what the answer is made of, on a bare Bun.serve) reaches ${fmtRatio(pinned.floor.requestsPerSec / pinned.baseline.requestsPerSec)} of the baseline (CPU ${fmtRatio(pinned.cpu.baselineUs / pinned.cpu.floorUs)}); notesvc ${fmtRatio(pinned.notesvc.requestsPerSec / pinned.floor.requestsPerSec)} of the floor (CPU ${fmtRatio(pinned.cpu.floorUs / pinned.cpu.notesvcUs)})`)
  } else {
    out(`target: notesvc >= ${TARGET_PINNED_RATIO} x baseline pinned: not measured (no pinned load in BENCH_LOADS, or no taskset)`)
  }
  const all = results.flatMap(r => r.byLoad)
  const worstRatio = Math.min(...all.map(x => x.notesvc.requestsPerSec / x.baseline.requestsPerSec))
  const worstUncached = Math.min(...all.map(x => x.uncached.requestsPerSec / x.baseline.requestsPerSec))
  out(`target: notesvc throughput >= ${TARGET_RATIO} x baseline at every size and load: lowest ${fmtRatio(worstRatio)} -> ${verdict(worstRatio >= TARGET_RATIO)}`)
  out(`(with the read cache off, every request querying SQLite: lowest ${fmtRatio(worstUncached)} of the baseline)`)
  const why = disagreement(largest)
  if (why) out(why)

  const smallest = results.reduce((a, b) => (b.size < a.size ? b : a))
  if (smallest === largest) {
    out('target: listing flat across sizes: not checked (only one size)')
    return
  }
  // Flatness is judged on the uncached path (the cached one would be flat whatever the query did), under the first load.
  for (const [label, pick] of [['uncached (the query itself)', (r: SizeResult) => r.byLoad[0]!.uncached], ['cached', (r: SizeResult) => r.byLoad[0]!.notesvc]] as const) {
    const p50Growth = pick(largest).p50Ms / pick(smallest).p50Ms
    const rpsGrowth = pick(largest).requestsPerSec / pick(smallest).requestsPerSec
    const flat = p50Growth <= TARGET_FLATNESS && rpsGrowth >= 1 / TARGET_FLATNESS
    out(`flatness ${fmtInt(largest.size)} vs ${fmtInt(smallest.size)} notes, ${label}: p50 ${fmtRatio(p50Growth)}, req/s ${fmtRatio(rpsGrowth)}` +
      (label === 'cached' ? '' : ` -> target: flat within ${TARGET_FLATNESS}x: ${verdict(flat)}`))
  }
}

/** A missed target is still a report (exit 0); only a failure to measure exits non-zero. */
async function main(): Promise<void> {
  const settings = readSettings()
  if (settings.modes.includes('first')) {
    const results: SizeResult[] = []
    for (const size of settings.sizes) results.push(await benchSize(size, settings))
    printReport(results, settings)
  }
  if (settings.modes.includes('varied')) {
    const varied: VariedResult[] = []
    for (const size of settings.sizes) varied.push(await benchVaried(size, settings))
    process.stdout.write('\n')
    printVaried(varied)
  }
}

if (process.argv[2] === '--baseline-server') {
  serveBaseline()
} else if (process.argv[2] === '--floor-server') {
  serveFloor()
} else if (import.meta.main) {
  main().then(() => process.exit(0), err => {
    process.stderr.write(`bench failed: ${err instanceof BenchFailure ? err.message : (err as Error).stack ?? err}\n`)
    process.exit(1)
  })
}
