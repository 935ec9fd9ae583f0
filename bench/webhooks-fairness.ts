/**
 * Webhook fairness: how long account B's event takes to reach B's receiver (from the note settling
 * to the request arriving at a receiver that answers at once), with the sender idle and with 24 and 96
 * receivers of account A that never answer, each with 2 events due (as a sandbox key makes them
 * with two uploads), older than B's.
 *
 * - `now`: the sender as it is: 256 slots, a slot that frees takes the next due event at once, one
 *   delivery per endpoint and 8 per account under way (events beyond those are skipped by the claim).
 *   96 endpoints are over the default cap of 25 per account: the bench raises it, as an operator may.
 * - `before`: the rule the sender followed until this change: the 8 oldest due events claimed, all of
 *   them waited for (each up to its 10 s timeout), then the next 8. Printed as computed from that rule
 *   for B's first event: ceil(A's events ahead / 8) rounds of the timeout. With BENCH_BEFORE=1 it is
 *   also measured (the same service with no in-flight caps, 8 slots, and its old loop), which takes
 *   as long as the rule says (a minute for 24 endpoints, four for 96).
 *
 * Run: bun run bench/webhooks-fairness.ts   (SAMPLES=30 B events per case; TIMEOUT_MS=10000, the
 * service's timeout; CASES=0,24,96). It prints figures and exits 0; it exits 1 only when a B event
 * never arrived.
 */
import { cpus } from 'node:os'
import { systemClock } from '../src/clock'
import { memoryStore } from '../src/db/open'
import type { Store } from '../src/db/store'
import { createIdGenerator } from '../src/ids'
import { silentLogger } from '../src/log'
import type { Library } from '../src/modules/library'
import { createWebhooksRepo, IN_FLIGHT_LIMITS, type InFlightLimits } from '../src/modules/webhooks/repo'
import { createWebhooksService, DELIVERY_TIMEOUT_MS, SENDER_SLOTS } from '../src/modules/webhooks/service'

const SAMPLES = Math.max(1, Number(process.env.SAMPLES ?? 30))
const TIMEOUT_MS = Math.max(100, Number(process.env.TIMEOUT_MS ?? DELIVERY_TIMEOUT_MS))
const CASES = (process.env.CASES ?? '0,24,96').split(',').map(Number)
const EVENTS_PER_HANGING_ENDPOINT = 2
const OLD_BATCH = 8
const POLL_MS = 1000

const servers: { stop(): void }[] = []

/** A receiver on loopback that never answers (until the bench ends), or answers 200 at once and reports each arrival. */
function receiver(hang: boolean, onArrival: () => void = () => {}): string {
  const held: (() => void)[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await req.text()
      onArrival()
      if (hang) await new Promise<void>(resolve => held.push(resolve))
      return new Response('ok')
    },
  })
  servers.push({ stop: () => { for (const r of held.splice(0)) r(); server.stop(true) } })
  return `http://127.0.0.1:${server.port}/hooks`
}

async function account(store: Store, id: string): Promise<void> {
  await store.run('INSERT INTO accounts (id, email, plan, grant_period, grant_used, purchased_credits, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [id, `${id}@example.com`, 'free', '2026-11', 0, 0, new Date().toISOString()])
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`)

/** B's latencies with `hanging` receivers of A, on the sender as it is (`now`) or on the batch rule (`before`). */
async function measure(mode: 'now' | 'before', hanging: number, samples: number): Promise<number[]> {
  const store = memoryStore()
  await account(store, 'acct_a')
  await account(store, 'acct_b')
  const limits: InFlightLimits = mode === 'now' ? IN_FLIGHT_LIMITS : { perEndpoint: 1_000_000, perAccount: 1_000_000 }
  const sender = createWebhooksService({
    repo: createWebhooksRepo(store, limits), clock: systemClock, ids: createIdGenerator(), log: silentLogger, allowPrivateUrls: true,
    timeoutMs: TIMEOUT_MS, pollMs: POLL_MS, maxPerAccount: 1000, slots: mode === 'now' ? SENDER_SLOTS : OLD_BATCH,
  })
  const libA: Library = { accountId: 'acct_a', sandbox: true }
  const libB: Library = { accountId: 'acct_b', sandbox: false }
  for (let i = 0; i < hanging; i++) await sender.create(libA, { url: receiver(true), events: ['note.completed'] })
  for (let i = 0; i < EVENTS_PER_HANGING_ENDPOINT && hanging > 0; i++) {
    await sender.noteSettled({ noteId: `note_a${i}`, accountId: libA.accountId, sandbox: true, status: 'Done', errorCode: null })
  }
  await Bun.sleep(2)
  let arrived: (() => void) | null = null
  await sender.create(libB, { url: receiver(false, () => arrived?.()), events: ['note.completed'] })

  // the sender: as it is, or the old loop (claim into 8 slots, wait for all of them, look again at once if any were sent)
  let stopped = false
  let oldLoop: Promise<void> | null = null
  if (mode === 'now') sender.start('bench')
  else {
    oldLoop = (async () => {
      while (!stopped) if ((await sender.deliverDue('bench')) === 0) await Bun.sleep(POLL_MS)
    })()
  }

  const latencies: number[] = []
  try {
    for (let i = 0; i < samples; i++) {
      await Bun.sleep(Math.random() * POLL_MS) // at any phase of the sender's poll
      const got = new Promise<void>(resolve => { arrived = resolve })
      const t0 = performance.now()
      await sender.noteSettled({ noteId: `note_b${i}`, accountId: libB.accountId, sandbox: false, status: 'Done', errorCode: null })
      const limit = Bun.sleep(Math.max(600_000, 40 * TIMEOUT_MS)).then(() => 'late' as const)
      if ((await Promise.race([got.then(() => 'ok' as const), limit])) === 'late') throw new Error(`B's event ${i} did not arrive`)
      latencies.push(performance.now() - t0)
    }
  } finally {
    stopped = true
    for (const s of servers.splice(0)) s.stop() // the held requests are answered, so the sender stops at once
    await sender.stop()
    await oldLoop
    await store.close()
  }
  return latencies
}

/** The old rule for B's first event: every due event ahead of it goes in rounds of 8, each round as long as its slowest attempt. */
const beforeByRule = (hanging: number) => (hanging === 0 ? null : Math.ceil((hanging * EVENTS_PER_HANGING_ENDPOINT) / OLD_BATCH) * TIMEOUT_MS)

console.log(`webhook fairness: B's delivery latency, ${SAMPLES} events per case; receivers of A never answer (timeout ${fmt(TIMEOUT_MS)}), ${EVENTS_PER_HANGING_ENDPOINT} events due each; ` +
  `${cpus()[0]?.model ?? 'unknown cpu'}, ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`)
console.log(`now: ${SENDER_SLOTS} slots, ${IN_FLIGHT_LIMITS.perEndpoint} per endpoint, ${IN_FLIGHT_LIMITS.perAccount} per account; poll every ${fmt(POLL_MS)}`)
console.log('| hanging receivers of A | now p50 | now p99 | now max | before (rule: first B event) | before measured (first B event) |')
console.log('| --- | --- | --- | --- | --- | --- |')
let failed = false
for (const hanging of CASES) {
  try {
    const now = await measure('now', hanging, SAMPLES)
    const rule = beforeByRule(hanging)
    let measured = 'not run (BENCH_BEFORE=1)'
    if (process.env.BENCH_BEFORE === '1') measured = fmt((await measure('before', hanging, 1))[0]!)
    console.log(`| ${hanging} | ${fmt(percentile(now, 50))} | ${fmt(percentile(now, 99))} | ${fmt(Math.max(...now))} | ${rule === null ? 'as now (no batch waits)' : `${fmt(rule)} + poll (0 to 1 s)`} | ${measured} |`)
  } catch (err) {
    failed = true
    console.log(`| ${hanging} | failed: ${err instanceof Error ? err.message : String(err)} | | | | |`)
  }
}
process.exit(failed ? 1 : 0)
