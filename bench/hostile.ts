/**
 * Hostile load (issue 22): one account sends the worst it can while another account's GET /v1/health
 * and GET /v1/notes are timed, on a real `serve` process (and a worker) on each back end. Beside each
 * scenario, the same victim on the idle server; target: the victim's p99 under hostile load at most
 * 2x its idle p99.
 *
 * Scenarios: a search over a note repeating one word 10,000 / 100,000 / 1,000,000 times (the last is
 * the 2,000,000-character limit of a note), bodies declared at 10 / 100 / 500 MB (sent at up to
 * 100 MB/s), a NUL in every string field, and 24 / 96 webhook receivers that never answer (24 per
 * account, the cap being 25), with the victim's own delivery timed.
 *
 * Run: bun run bench/hostile.ts   (BENCH_BACKENDS=sqlite,postgres; BENCH_SECONDS=3 per scenario; BENCH_CONCURRENCY=4)
 */
import { startCluster } from '../test/helpers/cluster'
import { duringHostile, idle, latencies, rawRequest, sendNul, victimLoop, type Timed } from '../test/helpers/hostile'
import { postgresUnavailable } from '../test/helpers/postgres'

const BACKENDS = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',').map(s => s.trim())
const MS = Number(process.env.BENCH_SECONDS ?? 3) * 1000
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4)
const MB = 1024 * 1024

interface Row { backEnd: string; scenario: string; hostile: string; health: ReturnType<typeof latencies>; list: ReturnType<typeof latencies> }
const rows: Row[] = []
const deliveryRowsAll: { backEnd: string; rows: { scenario: string; ms: number[] }[] }[] = []
const byPath = (timed: Timed[], path: string) => latencies(timed.filter(t => t.path.startsWith(path)))

for (const backEnd of BACKENDS) {
  if (backEnd === 'postgres' && postgresUnavailable()) {
    console.error(`postgres skipped: ${postgresUnavailable()}`)
    continue
  }
  console.error(`${backEnd}: starting serve and a worker…`)
  const c = await startCluster({ backEnd: backEnd as 'sqlite' | 'postgres', nodes: 1, workers: 1, env: { NOTESVC_RATE_LIMITS: 'read=100000000,write=100000000,processing=100000000' } })
  try {
    const base = c.nodes[0]!.base
    const port = c.nodes[0]!.port
    const hostileKey = (await c.cli(['keys', 'create', '--email', 'hostile@example.com', '--sandbox'])).stdout.trim()
    const victimKey = (await c.cli(['keys', 'create', '--email', 'victim@example.com'])).stdout.trim()
    const post = async (key: string, body: unknown) => {
      const res = await fetch(`${base}/v1/notes`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      if (res.status !== 201) throw new Error(`createNote: ${res.status} ${await res.text()}`)
    }
    for (let i = 0; i < 20; i++) await post(victimKey, { title: `victim ${i}`, content: 'an ordinary note about the weekly meeting' })
    const record = (scenario: string, r: { victims: Timed[]; hostile: { summary(): Record<string, number> } }) => {
      const hostile = Object.entries(r.hostile.summary()).map(([s, n]) => `${n}x${s}`).join(' ')
      rows.push({ backEnd, scenario, hostile, health: byPath(r.victims, '/v1/health'), list: byPath(r.victims, '/v1/notes') })
      console.error(`${backEnd}: ${scenario} done (${hostile})`)
    }

    const idleTimed = await idle(base, victimKey, MS)
    rows.push({ backEnd, scenario: 'idle', hostile: '-', health: byPath(idleTimed, '/v1/health'), list: byPath(idleTimed, '/v1/notes') })

    for (const [repeats, word] of [[10_000, 'za'], [100_000, 'zb'], [1_000_000, 'z']] as const) {
      // `z ` a million times is 2,000,000 characters, a note's limit
      await post(hostileKey, { title: 'r', content: `${word} `.repeat(repeats).slice(0, 2_000_000) })
      record(`search, word x ${repeats.toLocaleString('en-US')}`, await duringHostile({
        base, victimKey, ms: MS, concurrency: CONCURRENCY,
        one: async () => {
          const res = await fetch(`${base}/v1/notes?q=${word}`, { headers: { authorization: `Bearer ${hostileKey}` } })
          await res.arrayBuffer()
          return res.status
        },
      }))
    }
    for (const size of [10, 100, 500]) {
      record(`body ${size} MB`, await duringHostile({
        base, victimKey, ms: MS, concurrency: CONCURRENCY,
        one: async () => (await rawRequest(port, `POST /v1/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${hostileKey}\r\nContent-Type: application/json\r\nContent-Length: ${size * MB}\r\n\r\n`, { total: size * MB, bytesPerMs: 100_000 })).status,
      }))
    }
    let n = 0
    record('NUL in every field', await duringHostile({ base, victimKey, ms: MS, concurrency: CONCURRENCY, one: () => sendNul(base, hostileKey, n++) }))

    // Hanging webhook receivers: 24 per hostile account (the cap is 25), each account's sandbox notes
    // completing; the victim's own endpoint gets an event per sandbox note it completes, timed from
    // the completion to the arrival, while its health and list are timed too.
    const victimSandbox = (await c.cli(['keys', 'create', '--email', 'victim@example.com', '--sandbox'])).stdout.trim()
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: res.status, body: await res.json().catch(() => null) as any }
    }
    const sandboxNoteDone = async (key: string) => {
      const up = await call(key, 'POST', '/v1/uploads', { fileName: 'memo.wav', contentType: 'audio/wav' })
      await call(key, 'POST', `/v1/uploads/${up.body.noteId}/complete`)
    }
    let arrivedAt: (() => void) | null = null
    const held: (() => void)[] = []
    const servers = [Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: async req => { await req.text(); arrivedAt?.(); return new Response('ok') } })]
    const hang = () => {
      const s = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: async req => { await req.text(); await new Promise<void>(r => held.push(r)); return new Response('ok') } })
      servers.push(s)
      return `http://127.0.0.1:${s.port}/hook`
    }
    await call(victimSandbox, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${servers[0]!.port}/hook`, events: ['note.completed'] })
    const deliveries = async (count: number) => {
      const ms: number[] = []
      for (let i = 0; i < count; i++) {
        const arrived = new Promise<void>(r => { arrivedAt = r })
        const t0 = performance.now()
        await sandboxNoteDone(victimSandbox)
        await arrived
        ms.push(performance.now() - t0)
      }
      return ms
    }
    const deliveryRows: { scenario: string; ms: number[] }[] = []
    deliveryRowsAll.push({ backEnd, rows: deliveryRows })
    deliveryRows.push({ scenario: 'idle', ms: await deliveries(10) })
    let accounts = 0
    for (const total of [24, 96]) {
      while (accounts * 24 < total) {
        const key = (await c.cli(['keys', 'create', '--email', `hostile${++accounts}@example.com`, '--sandbox'])).stdout.trim()
        for (let i = 0; i < 24; i++) await call(key, 'POST', '/v1/webhooks', { url: hang(), events: ['note.completed'] })
        await sandboxNoteDone(key)
        await sandboxNoteDone(key)
      }
      let stop = false
      const victims = victimLoop(base, victimKey, () => stop, null)
      deliveryRows.push({ scenario: `${total} hanging receivers`, ms: await deliveries(10) })
      stop = true
      const timed = await victims
      rows.push({ backEnd, scenario: `${total} hanging receivers`, hostile: `${accounts} accounts`, health: byPath(timed, '/v1/health'), list: byPath(timed, '/v1/notes') })
      console.error(`${backEnd}: ${total} hanging receivers done`)
    }
    for (const release of held.splice(0)) release()
    for (const s of servers) s.stop(true)
  } finally {
    await c.stop()
  }
}

const f = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-')
console.log(`hostile load: ${CONCURRENCY} hostile connections, the victim one request at a time, ${MS / 1000} s per scenario; bun ${Bun.version}, ${navigator.hardwareConcurrency} cores`)
console.log('back end  scenario                    hostile answers          health p50 / p99 ms   list p50 / p99 ms    worst p99 / idle p99')
for (const r of rows) {
  const idleRow = rows.find(x => x.backEnd === r.backEnd && x.scenario === 'idle')!
  const ratio = Math.max(r.health.p99 / idleRow.health.p99, r.list.p99 / idleRow.list.p99)
  console.log(`${r.backEnd.padEnd(9)} ${r.scenario.padEnd(27)} ${r.hostile.padEnd(24)} ${`${f(r.health.p50)} / ${f(r.health.p99)}`.padEnd(21)} ${`${f(r.list.p50)} / ${f(r.list.p99)}`.padEnd(20)} ${r.scenario === 'idle' ? '-' : `${ratio.toFixed(2)}x ${ratio <= 2 ? 'PASS' : 'MISS'}`}`)
}
console.log('')
console.log("the victim's own webhook delivery, from its sandbox note's completion to the arrival (10 each)")
for (const { backEnd, rows: d } of deliveryRowsAll) {
  const idleRow = latencies(d[0]!.ms.map(ms => ({ path: '', sentAt: 0, doneAt: ms, status: 200, hostileInFlight: 0, hostileAnsweredMeanwhile: 0 })))
  for (const r of d) {
    const l = latencies(r.ms.map(ms => ({ path: '', sentAt: 0, doneAt: ms, status: 200, hostileInFlight: 0, hostileAnsweredMeanwhile: 0 })))
    console.log(`${backEnd.padEnd(9)} ${r.scenario.padEnd(24)} p50 ${f(l.p50)} ms, max ${f(l.max)} ms${r.scenario === 'idle' ? '' : `, max / idle max ${(l.max / idleRow.max).toFixed(2)}x`}`)
  }
}
