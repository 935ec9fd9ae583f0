#!/usr/bin/env bun
/**
 * What counting requests for GET /metrics costs a request (issue 25): CPU time per request of one
 * app with NOTESVC_METRICS_TOKEN set, its responses counted (`observe`, as `serve` runs it) or not
 * (`observe` taken away: as with the token unset), in alternating rounds, so that a busy shared
 * machine slows both alike (req/s from wrk moved by 3x
 * between runs while five builds shared two cores; CPU time per request moves far less). See
 * bench/README.md, "Metrics on the first page".
 *
 *   bun run bench/metrics-overhead.ts
 *   BENCH_REQUESTS=200000 BENCH_ROUNDS=15 bun run bench/metrics-overhead.ts
 *
 * Two paths through the handler `serve` gives Bun.serve (`serverFetch` of http/listen.ts, which
 * times each response), each on an in-memory SQLite library of 60 notes with one live key:
 * - the kept first page (`GET /v1/notes`, answered before routing), what a polling client sends most;
 * - a request through Elysia (`GET /v1/notes/{id}` of a note that does not exist: 404).
 * Each round makes BENCH_REQUESTS requests (default 100,000; a tenth through Elysia) on each app in
 * turn and reads `process.cpuUsage()` around them; the median of BENCH_ROUNDS rounds (default 9)
 * is printed with the difference. Bodies are read as a server would send them (bytes), not parsed.
 */
import { loadConfig } from '../src/config'
import { memoryStore } from '../src/db/open'
import { createServices } from '../src/services'
import { createApp } from '../src/app'
import { systemClock } from '../src/clock'
import { createIdGenerator } from '../src/ids'
import { silentLogger } from '../src/log'
import { serverFetch, type Fetching } from '../src/http/listen'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? '100000')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '9')
const dirs: string[] = []

async function build(token: string | undefined) {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-metrics-bench-'))
  dirs.push(dataDir)
  const config = loadConfig({ NOTESVC_DATA_DIR: dataDir, NOTESVC_LLM: 'builtin', NOTESVC_WORKERS: '0', NOTESVC_RATE_LIMITS: 'read=100000000,write=100000,processing=10', ...(token ? { NOTESVC_METRICS_TOKEN: token } : {}) })
  const services = createServices({ config, store: memoryStore(), clock: systemClock, ids: createIdGenerator(), log: silentLogger })
  const app = createApp({ config, clock: systemClock, ids: createIdGenerator(), log: silentLogger, services })
  const key = (await services.accounts.createKey({ email: 'bench@example.com' })).key
  const auth = { authorization: `Bearer ${key}` }
  for (let i = 0; i < 60; i++) {
    const res = await app.handle(new Request('http://localhost/v1/notes', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: `Note ${i}`, content: 'word '.repeat(60) }) }))
    if (res.status !== 201) throw new Error(`seeding answered ${res.status}`)
  }
  const first = () => new Request('http://localhost/v1/notes', { headers: auth })
  // the first request keeps the page; from the second on, it is answered before routing
  await app.handle(first())
  if (!app.answerAtOnce(first())) throw new Error('the first page was not kept: nothing to measure')
  const missing = () => new Request('http://localhost/v1/notes/note_00000000000000000000000000', { headers: auth })
  if ((await app.handle(missing())).status !== 404) throw new Error('the missing note did not answer 404')
  // the handler Bun.serve runs in `serve` (http/listen.ts), which times each response for the metrics
  return { app, handle: serverFetch(app as unknown as Fetching), first, missing }
}

type Built = Awaited<ReturnType<typeof build>>

function cpuMicros(): number {
  const u = process.cpuUsage()
  return u.user + u.system
}

async function kept(b: Built, n: number): Promise<number> {
  const start = cpuMicros()
  for (let i = 0; i < n; i++) {
    const res = b.handle(b.first()) as Response
    await res.arrayBuffer()
  }
  return (cpuMicros() - start) / n
}

async function routed(b: Built, n: number): Promise<number> {
  const start = cpuMicros()
  for (let i = 0; i < n; i++) {
    const res = await b.handle(b.missing())
    await res.arrayBuffer()
  }
  return (cpuMicros() - start) / n
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

// One app (with the token set); its `observe` taken away for the rounds without metrics, so both sides
// run the same instance (two instances differed by up to 30% with nothing switched: an A/A run).
const built = await build('bench-metrics-token-0123456789')
const observe = built.app.observe
const control = process.env.BENCH_CONTROL === '1'
const withMetrics = (on: boolean): Built => {
  built.app.observe = on && !control ? observe : undefined
  return built
}
const results = { kept: { off: [] as number[], on: [] as number[] }, routed: { off: [] as number[], on: [] as number[] } }
// warm-up
await kept(withMetrics(false), REQUESTS / 10); await kept(withMetrics(true), REQUESTS / 10); await routed(withMetrics(false), REQUESTS / 100); await routed(withMetrics(true), REQUESTS / 100)
for (let r = 0; r < ROUNDS; r++) {
  // alternate which goes first
  const order = r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)
  for (const name of order) results.kept[name].push(await kept(withMetrics(name === 'on'), REQUESTS))
  for (const name of order) results.routed[name].push(await routed(withMetrics(name === 'on'), REQUESTS / 10))
  Bun.gc(true)
}
for (const d of dirs) rmSync(d, { recursive: true, force: true })
console.log(`metrics overhead: CPU µs per request, median of ${ROUNDS} alternating rounds (bun ${Bun.version}, load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')})`)
console.log(`path                                   not counted     counted   difference${control ? '   (BENCH_CONTROL=1: neither counted)' : ''}`)
for (const [path, label] of [['kept', 'kept first page (GET /v1/notes)'], ['routed', 'through Elysia (GET /v1/notes/{id}, 404)']] as const) {
  const a = median(results[path].off)
  const b = median(results[path].on)
  console.log(`${label.padEnd(38)} ${a.toFixed(2).padStart(11)} ${b.toFixed(2).padStart(11)}   ${(b - a >= 0 ? '+' : '') + (b - a).toFixed(2)} (${((b / a - 1) * 100).toFixed(1)}%)`)
}
