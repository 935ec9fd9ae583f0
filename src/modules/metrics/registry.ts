import type { Registry } from 'prom-client'

/** The leased queues whose depth and age are read from the database at scrape time. */
type QueueName = 'upload_jobs' | 'webhook_outbox'

/** One queue as the database holds it now: rows waiting and running, and when the oldest waiting one was queued. */
export interface QueueDepth {
  queue: QueueName
  queued: number
  running: number
  /** when the oldest queued row that is due became due (its run_after, ISO 8601), or null when none is */
  oldestDueAt: string | null
}

/** What the database connection(s) of this process are doing now (Store.activity). */
export interface DatabaseActivity {
  maxConnections: number
  openTransactions: number
  queriesInFlight: number
}

/** How a run of an upload job ended, as this process saw it. */
export type JobOutcome = 'done' | 'failed' | 'retried' | 'taken_over'

/** The stages of the pipeline whose engine time is measured against the recording's length. */
export type EngineStage = 'asr' | 'diarization' | 'summary'

/**
 * Seconds of a request's latency histogram: from 1 ms (a kept first page) to 10 s (a synchronous
 * transcription of a short file); the slow processing routes land in +Inf beyond that.
 */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The requests of one (operation, status): their number, total seconds, and how many fell in each bucket (not cumulative). */
interface RequestTally {
  count: number
  sum: number
  buckets: Float64Array
}

/**
 * The two request families, `notesvc_http_requests_total` and `notesvc_http_request_duration_seconds`,
 * counted by hand and handed to prom-client's registry as metrics of its own shape (`name`, `get()`),
 * which formats them like its own. Why not prom-client's Counter and Histogram: an increment and an
 * observation through their labelled children cost about 1 µs a request (they hash the labels on
 * every call), a tenth of a kept first page's CPU on this machine; here a request is two map look-ups,
 * two additions and a scan of 13 bounds.
 */
function requestSeries() {
  const tallies = new Map<string, Map<number, RequestTally>>()
  const each = function* () {
    for (const [operation, byStatus] of tallies) for (const [status, t] of byStatus) yield { labels: { operation, status: String(status) }, t }
  }
  const total = {
    name: 'notesvc_http_requests_total',
    help: 'HTTP requests answered, by operation (the operation id, or the route template outside the API; "unmatched" when no route matched) and status.',
    type: 'counter',
    get: async () => ({
      name: 'notesvc_http_requests_total', help: 'HTTP requests answered, by operation (the operation id, or the route template outside the API; "unmatched" when no route matched) and status.', type: 'counter', aggregator: 'sum',
      values: [...each()].map(({ labels, t }) => ({ labels, value: t.count })),
    }),
  }
  const name = 'notesvc_http_request_duration_seconds'
  const help = 'Seconds from the request handed to the server\'s handler to its response ready, by operation and status.'
  const duration = {
    name, help, type: 'histogram',
    get: async () => {
      const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = []
      for (const { labels, t } of each()) {
        let cumulative = 0
        LATENCY_BUCKETS.forEach((le, i) => {
          cumulative += t.buckets[i]!
          values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative })
        })
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: t.count })
        values.push({ metricName: `${name}_sum`, labels, value: t.sum })
        values.push({ metricName: `${name}_count`, labels, value: t.count })
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values }
    },
  }
  return {
    metrics: [total, duration],
    observe(operation: string, status: number, seconds: number): void {
      let byStatus = tallies.get(operation)
      if (byStatus === undefined) tallies.set(operation, (byStatus = new Map()))
      let t = byStatus.get(status)
      if (t === undefined) byStatus.set(status, (t = { count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length) }))
      t.count++
      t.sum += seconds
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
        if (seconds <= LATENCY_BUCKETS[i]!) {
          t.buckets[i]!++
          break
        }
      }
    },
  }
}

/**
 * A counter of this process by labels, counted by hand and shown as a metric of prom-client's shape
 * (`name`, `get()`), like the request series: prom-client itself is loaded at the first scrape.
 */
function tally<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  const values = new Map<string, { labels: Record<L, string>; value: number }>()
  return {
    inc(labels: Record<L, string>, by = 1): void {
      const key = labelNames.map(l => labels[l]).join('\u0000')
      let v = values.get(key)
      if (v === undefined) values.set(key, (v = { labels: { ...labels }, value: 0 }))
      v.value += by
    },
    metric: {
      name, help, type: 'counter',
      get: async () => ({ name, help, type: 'counter', aggregator: 'sum', values: [...values.values()].map(v => ({ labels: v.labels, value: v.value })) }),
    },
  }
}

/**
 * The metrics of one process (its own prom-client registry: several apps in one test process do not
 * share counters). Counters and histograms count what this process did, so every node is scraped;
 * the queue gauges are read from the database at scrape time and are the same on every node.
 *
 * Everything is counted by hand from the start; prom-client (its registry, the queue and database
 * gauges and its default process metrics) is loaded and set up at the first scrape, not at start:
 * loading it, with the Node modules it brings (http, https, zlib, cluster), and probing the heap for
 * its defaults took about 10 ms of a 133 ms cold start (docs/decisions.md, "Cold start, again").
 * What that changes: the event-loop lag it samples covers the time since the first scrape.
 */
export function createMetrics(sources: {
  /** the queues' depth, read at scrape time */
  queues: () => Promise<QueueDepth[]>
  /** the database connections' use now */
  database: () => DatabaseActivity
  /** now, in the clock queued rows are stamped in (the database's on PostgreSQL) */
  now: () => number
}) {
  const requests = requestSeries()
  const jobs = tally('notesvc_jobs_total', 'Runs of upload jobs in this process, by how they ended: done, failed (for good), retried (back to the queue after a transient failure or a shutdown), taken_over (started on a job whose earlier worker died under it).', ['outcome'])
  const engineSeconds = tally('notesvc_engine_seconds_total', 'Wall-clock seconds the upload pipeline spent in each stage (asr: transcription including decoding; diarization: waiting for speakers after transcription; summary), by engine.', ['stage', 'engine'])
  const audioSeconds = tally('notesvc_engine_audio_seconds_total', 'Seconds of recording the stage processed, by engine: engine_seconds / audio_seconds is its real-time factor.', ['stage', 'engine'])
  const deliveries = tally('notesvc_webhook_deliveries_total', 'Webhook delivery attempts of this process, by outcome: delivered (2xx), failed (error or non-2xx; retried on schedule), refused (the URL policy refused the address), disabled (410 Gone).', ['outcome'])

  // the known outcomes shown from the start at 0, so that a rate over them is defined before the first
  for (const outcome of ['done', 'failed', 'retried', 'taken_over']) jobs.inc({ outcome }, 0)
  for (const outcome of ['delivered', 'failed', 'refused', 'disabled']) deliveries.inc({ outcome }, 0)

  let registry: Promise<Registry> | null = null
  const counted = [...requests.metrics, jobs.metric, engineSeconds.metric, audioSeconds.metric, deliveries.metric]

  return {
    /** One answered request: its operation (id or route template), status and seconds taken. */
    request: requests.observe,
    job(outcome: JobOutcome): void {
      jobs.inc({ outcome })
    },
    /** `seconds` of `engine` in `stage` for `audio` seconds of recording (audio unknown: the time alone) */
    engine(stage: EngineStage, engine: string, seconds: number, audio: number | null): void {
      engineSeconds.inc({ stage, engine }, seconds)
      if (audio !== null && audio > 0) audioSeconds.inc({ stage, engine }, audio)
    },
    webhookDelivery(outcome: string): void {
      deliveries.inc({ outcome })
    },
    /** the exposition (Prometheus text format 0.0.4) and its content type */
    async exposition(): Promise<{ text: string; contentType: string }> {
      const r = await (registry ??= scrapedRegistry(counted, sources))
      return { text: await r.metrics(), contentType: r.contentType }
    },
  }
}

/** The registry of the first scrape: the counted series, then the gauges read at scrape time, then prom-client's defaults. */
async function scrapedRegistry(counted: object[], sources: Parameters<typeof createMetrics>[0]): Promise<Registry> {
  const { collectDefaultMetrics, Gauge, Registry } = await import('prom-client')
  const registry = new Registry()
  const registers = [registry]
  for (const m of counted) registry.registerMetric(m as never)

  // Both queue gauges show one read of the database per scrape (prom-client collects every metric at
  // once: the second collect joins the read the first started).
  let reading: Promise<{ depths: QueueDepth[]; now: number }> | null = null
  const readQueues = () => (reading ??= sources.queues().then(depths => ({ depths, now: sources.now() })).finally(() => { reading = null }))
  new Gauge({
    name: 'notesvc_queue_jobs', help: 'Rows of each leased queue by state, read from the database at scrape time (the same on every node).', labelNames: ['queue', 'state'], registers,
    async collect() {
      for (const d of (await readQueues()).depths) {
        this.set({ queue: d.queue, state: 'queued' }, d.queued)
        this.set({ queue: d.queue, state: 'running' }, d.running)
      }
    },
  })
  new Gauge({
    name: 'notesvc_queue_oldest_due_age_seconds', help: 'How long the oldest queued row that is due has waited since it became due (0 when none waits; rows waiting for a later retry are not counted), read from the database at scrape time.', labelNames: ['queue'], registers,
    async collect() {
      const { depths, now } = await readQueues()
      for (const d of depths) this.set({ queue: d.queue }, d.oldestDueAt ? Math.max(0, (now - Date.parse(d.oldestDueAt)) / 1000) : 0)
    },
  })

  const db = (name: string, help: string, read: (a: DatabaseActivity) => number) =>
    new Gauge({ name, help, registers, collect() { this.set(read(sources.database())) } })
  db('notesvc_db_connections_max', 'Database connections this process may hold: the PostgreSQL pool size; on SQLite the one connection, plus the read thread\'s once started.', a => a.maxConnections)
  db('notesvc_db_transactions_open', 'Transactions holding a connection now (SQLite: 0 or 1, the one writer).', a => a.openTransactions)
  db('notesvc_db_queries_in_flight', 'Statements sent and not yet answered: on PostgreSQL every query of the pool; on SQLite those on the read thread (the main connection answers within the call).', a => a.queriesInFlight)

  // After notesvc's own (the exposition lists them first): prom-client's defaults under Bun: CPU,
  // memory, open descriptors, event-loop lag, heap sizes. The garbage-collection histogram is absent
  // (Bun has no 'gc' performance entries), and the active handles and requests read 0 (Bun does not
  // implement process._getActiveHandles).
  collectDefaultMetrics({ register: registry })
  return registry
}

export type Metrics = ReturnType<typeof createMetrics>
