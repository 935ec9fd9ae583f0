import { listen, type Fetching } from '../http/listen'
import type { Config } from '../config'
import { systemClock } from '../clock'
import { createIdGenerator } from '../ids'
import type { Logger } from '../log'
import { openConfiguredStore } from '../db/open'
import { createServices, type Services } from '../services'
import { createMetricsApp } from '../app'
import { VERSION } from '../version'
import { UsageError } from './args'
import type { CommandContext } from './command'
import { announceDataDir } from './data-folder'
import { listenUrl, logSpeechEngine, onStopSignal } from './long-running'

/** `worker`: one job at a time unless NOTESVC_WORKERS says otherwise (shared/DECISIONS.md); serve's default is twice the slots. */
export async function workerCommand({ config, env, log }: CommandContext): Promise<number> {
  await worker(env.NOTESVC_WORKERS ? config : { ...config, workers: 1 }, log)
  return -1 // keep running
}

/**
 * `worker`: job workers only, on the data folder's database beside a `serve` (and other workers).
 * On SIGTERM or SIGINT the jobs under way are interrupted and go back to the queue at once.
 */
async function worker(config: Config, log: Logger) {
  if (config.workers === 0) throw new UsageError('NOTESVC_WORKERS=0 runs no job workers; `worker` needs 1 to 64 (for the API alone, run serve with NOTESVC_WORKERS=0)')
  announceDataDir(config)
  const store = await openConfiguredStore(config)
  const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator(), log })
  logSpeechEngine(services, log, 'upload jobs fail with engine_unavailable (and are refunded)')
  await services.workers.start()
  const metrics = serveWorkerMetrics(config, log, services)
  const fields = { workerId: services.workers.id, workers: config.workers, pid: process.pid, dataDir: config.dataDir, database: store.sql.name, leaseSeconds: config.jobLeaseSeconds, version: VERSION, ...(metrics ? { metrics: metrics.url } : {}) }
  log.info('notesvc worker started', fields)
  onStopSignal(log, async () => {
    await metrics?.server.stop()
    await services.workers.stop()
    await store.close()
    log.info('notesvc worker stopped', { workerId: fields.workerId })
  })
}

/**
 * A worker's own GET /metrics (its jobs, engine time and webhook deliveries), on HOST and
 * NOTESVC_METRICS_PORT when NOTESVC_METRICS_TOKEN is set too; a line saying how, when only the token is.
 */
function serveWorkerMetrics(config: Config, log: Logger, services: Services) {
  if (!config.metricsToken) return null
  if (config.metricsPort === undefined) {
    log.info('this worker\'s metrics are not served: set NOTESVC_METRICS_PORT to a free port to serve its GET /metrics (its jobs, engine time, webhook deliveries)')
    return null
  }
  const app = createMetricsApp({ config, log, services })
  const server = listen(app as unknown as Fetching, { port: config.metricsPort, hostname: config.host })
  return { server, url: `${listenUrl(config.host, server.port)}/metrics` }
}
