/**
 * Hostile load (issue 22): one account sends the worst it can while another account's GET /v1/health
 * and GET /v1/notes are timed, on a real `serve` process (and a worker) on each back end. Beside each
 * scenario, the same victim on the idle server; target: the victim's p99 under hostile load at most
 * 2x its idle p99.
 *
 * Scenarios: a search over a note repeating one word 10,000 / 100,000 / 1,000,000 times (the last is
 * the 2,000,000-character limit of a note), bodies declared at 10 / 100 / 500 MB (sent at up to
 * 100 MB/s), a NUL in every string field, and (when the webhook sender runs) hanging receivers.
 *
 * Run: bun run bench/hostile.ts   (BENCH_BACKENDS=sqlite,postgres; BENCH_SECONDS=3 per scenario; BENCH_CONCURRENCY=4)
 */
import { startCluster } from '../test/helpers/cluster'
import { duringHostile, idle, latencies, rawRequest, sendNul, type Timed } from '../test/helpers/hostile'
import { postgresUnavailable } from '../test/helpers/postgres'

const BACKENDS = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',').map(s => s.trim())
const MS = Number(process.env.BENCH_SECONDS ?? 3) * 1000
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4)
const MB = 1024 * 1024

interface Row { backEnd: string; scenario: string; hostile: string; health: ReturnType<typeof latencies>; list: ReturnType<typeof latencies> }
const rows: Row[] = []
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
