import { listen, type Fetching } from './http/listen'
import { engineRecognizers } from './modules/live/engine-recognizer'
import { chooseLiveEngine, type LiveEngines } from './engines/live/engines'
import type { Config } from './config'
import { systemClock } from './clock'
import { createIdGenerator } from './ids'
import type { Logger } from './log'
import { openConfiguredStore } from './db/open'
import type { Store } from './db/store'
import { createServices, type Services } from './services'
import { createApp } from './app'
import { VERSION } from './version'
import { startupMark, startupReport } from './startup-timing'
import { listenUrl, logSpeechEngine } from './commands/long-running'

/** how long after listening `serve`'s job workers start (see startServer) */
const WORKERS_AFTER_LISTEN_MS = 25

/** The two keys the first start on an empty database made, shown once. */
interface FirstStartKeys { live: string; sandbox: string }

export interface ServerStartOptions {
  log: Logger
  /** the database; by default the configuration's (openConfiguredStore: with its read thread) */
  store?: Store
  /** run when the server listens, before it logs that it does (`serve` prints the first start's keys here) */
  onListening?: (url: string, firstStart: FirstStartKeys | null) => void
  /** run just before listening: the test kit frees the port it reserved for its public URL */
  beforeListen?: () => void
  /** how long after listening the workers start (default 25 ms, see below) */
  workersAfterMs?: number
}

export interface StartedServer {
  /** where it listens, as a browser writes it */
  url: string
  port: number
  store: Store
  services: Services
  /** the keys of a first start (an empty database), else null */
  firstStartKeys: FirstStartKeys | null
  /** settles once the job workers run (or at once when stopped before), rejected if they could not start */
  workersStarted: Promise<void>
  /**
   * Stops everything this start started: the live sweep, the HTTP server (`closeConnections`: at
   * once, without waiting for open connections), the workers and the webhook sender, the pending
   * share openings, and closes the store. Once only; a second call waits for the first.
   */
  stop(options?: { closeConnections?: boolean }): Promise<void>
}

/**
 * The server of `serve`, started in this process: the store, the services, the first start's owner
 * and keys, the sweeps of what an interrupted process left, the application on Bun.serve, the live
 * sweep, then the job workers. No signal handlers and no printing of its own (only `log`): `serve`
 * adds those, and the test kit (src/testing) starts many of these in one process.
 */
export async function startServer(config: Config, options: ServerStartOptions): Promise<StartedServer> {
  const { log } = options
  const store = options.store ?? await openConfiguredStore(config)
  startupMark('database: read thread')
  const ids = createIdGenerator()
  const services = createServices({ config, store, clock: systemClock, ids, log })
  startupMark('services')
  const firstStart = await services.accounts.createFirstStartOwner(config.ownerEmail)
  if (firstStart) startupMark('first start: owner and keys')
  // Before serving, so that no upload of this process is under way.
  const reclaimed = await services.uploads.reclaimInterruptedUploads().catch((err: unknown) => {
    log.warn('could not remove the temporary files of interrupted uploads (check that this user may write the media folder); starting anyway', { error: err })
    return { files: 0, bytes: 0 }
  })
  if (reclaimed.files > 0) log.info('removed the temporary files of interrupted uploads', reclaimed)
  await services.openai.sweepTemporaryFiles().catch((err: unknown) => log.warn('could not remove the temporary files of interrupted OpenAI-compatible transcriptions; starting anyway', { error: err }))
  startupMark('sweep temporary files')
  logSpeechEngine(services, log, 'uploads and transcriptions are refused (502, nothing charged)')
  startupMark('speech engine check')
  const liveEngines: LiveEngines = { setting: config.live.engine, asr: services.asr, speech: config, slots: services.asrSlots }
  log.info('live transcription engine', { engine: chooseLiveEngine(liveEngines).detail })
  const app = createApp({ config, clock: systemClock, ids, log, services, liveRecognizers: engineRecognizers(liveEngines) })
  startupMark('app')
  options.beforeListen?.()
  const server = listen(app as unknown as Fetching, { port: config.port, hostname: config.host, maxRequestBodySize: 6 * 1024 ** 3 })
  startupMark('listen')
  const url = listenUrl(config.host, server.port)
  options.onListening?.(url, firstStart)
  log.info('notesvc listening', { url, publicUrl: config.publicUrl, dataDir: config.dataDir, database: store.sql.name, workers: config.workers, metering: config.metering ? 'on' : 'off', version: VERSION })
  if (services.sso) log.info('single sign-on', { provider: config.sso.providerName, issuer: config.oidcIssuer, redirectUri: services.sso.redirectUri, passwordSignIn: config.passwordSignIn ? 'on' : 'off' })
  // live streams nobody will continue (their client gone past the grace period, their server killed):
  // made into notes now and every few seconds, on every node (each stream is claimed by one)
  const sweepLive = () => services.live.sweep().catch((err: unknown) => log.warn('could not finish the live streams left behind; trying again in 5 s', { error: err }))
  void sweepLive()
  const liveSweep = setInterval(sweepLive, 5000)
  liveSweep.unref()

  let stopping = false
  // The queue's start (recovering jobs, the recurring tasks, the watchers: synchronous SQLite work that
  // holds the event loop for several milliseconds) and the summary engine's probe a moment after
  // listening, so that requests already waiting, such as an orchestrator's readiness probe or a client
  // retrying, are answered first (docs/decisions.md, "Cold start, again").
  const workersStarted = (async () => {
    const after = options.workersAfterMs ?? WORKERS_AFTER_LISTEN_MS
    if (after > 0) await new Promise(resolve => setTimeout(resolve, after))
    if (stopping) return
    startupMark('answering waiting requests first')
    await services.workers.start()
    startupMark('workers')
    startupReport()
    // Find out now which summary engine answers, so health can say so from the first requests on.
    void services.llmSelector.describe().catch(() => {})
  })()
  workersStarted.catch(() => {}) // told to whoever awaits it; not an unhandled rejection meanwhile

  let stopped: Promise<void> | null = null
  const stop = (o: { closeConnections?: boolean } = {}) => (stopped ??= (async () => {
    stopping = true
    clearInterval(liveSweep)
    await app.stop(o.closeConnections)
    // workers that are starting are stopped once started
    await workersStarted.catch(() => {})
    await services.workers.stop()
    // share pages' openings still waiting to be counted (modules/sharing/openings.ts)
    await services.sharing.flushOpenings().catch((err: unknown) => log.warn('could not write the last openings of share links', { error: err }))
    await store.close()
  })())
  return { url, port: server.port!, store, services, firstStartKeys: firstStart, workersStarted, stop }
}
