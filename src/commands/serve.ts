import { listen, type Fetching } from '../http/listen'
import { engineRecognizers } from '../modules/live/engine-recognizer'
import { chooseLiveEngine, type LiveEngines } from '../engines/live/engines'
import type { Config } from '../config'
import { systemClock } from '../clock'
import { createIdGenerator } from '../ids'
import type { Logger } from '../log'
import { openConfiguredStore } from '../db/open'
import { createServices } from '../services'
import { createApp } from '../app'
import { VERSION } from '../version'
import { commandLine } from '../command-name'
import { startupMark, startupReport } from '../startup-timing'
import { out, type CommandContext } from './command'
import { announceDataDir } from './data-folder'
import { listenUrl, logSpeechEngine, onStopSignal } from './long-running'
import { writeStderr } from '../std-streams'

/** `serve`: the HTTP server and NOTESVC_WORKERS job workers, until SIGTERM or SIGINT. */
/** how long after listening the job workers start (see serveCommand) */
const WORKERS_AFTER_LISTEN_MS = 25

export async function serveCommand({ config, log }: CommandContext): Promise<number> {
  await serve(config, log)
  return -1 // keep running
}

/**
 * What `metering` in force means, the rate limits of this start (NOTESVC_RATE_LIMITS; without
 * metering the processing class has none), and how to change them: one line of the first start.
 */
function describeMetering(config: Config): string {
  const { read, write, processing } = config.rateLimits
  const limits = `requests a minute per key: ${read} reads, ${write} writes`
  return config.metering
    ? `metering: on (credits per minute of media); ${limits}, ${processing} processing calls (NOTESVC_RATE_LIMITS); for a single-user install start with NOTESVC_METERING=off`
    : `metering: off (NOTESVC_METERING=off): nothing is charged and processing calls are not rate-limited; ${limits} (NOTESVC_RATE_LIMITS); unset NOTESVC_METERING to meter again`
}

/**
 * The first start's message: the keys alone on stdout (shown this once), then on stderr where the
 * browser is, how to set the owner's password and whether metering is on (serve has already said
 * which data folder it uses).
 */
function printFirstStart(config: Config, keys: { live: string; sandbox: string }, browser: string) {
  writeStderr(`\nFirst start: created the owner account ${config.ownerEmail} (plan pro) and two API keys.\n` +
    'They are shown this once and stored only as hashes; copy them now (stdout carries them alone).\n\n')
  out(`live key:    ${keys.live}`)
  out(`sandbox key: ${keys.sandbox}`)
  // with password sign-in off, the owner signs in through the provider (with the owner's email there)
  const how = config.passwordSignIn
    ? `(sign in as ${config.ownerEmail} once it has a password:\n             ${commandLine(`accounts password --email ${config.ownerEmail}`)})`
    : `(sign in with ${config.sso.providerName} as ${config.ownerEmail}; password sign-in is off)`
  writeStderr(`browser:     ${browser} ${how}\n${describeMetering(config)}\n\n`)
}

async function serve(config: Config, log: Logger) {
  announceDataDir(config)
  startupMark('config')
  const store = await openConfiguredStore(config)
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
  const server = listen(app as unknown as Fetching, { port: config.port, hostname: config.host, maxRequestBodySize: 6 * 1024 ** 3 })
  startupMark('listen')
  const url = listenUrl(config.host, server.port)
  // PORT=0 (any free port): the public URL's port is not the one listened on
  if (firstStart) printFirstStart(config, firstStart, `${config.port === 0 ? url.replace('//0.0.0.0:', '//127.0.0.1:') : config.publicUrl}/`)
  log.info('notesvc listening', { url, publicUrl: config.publicUrl, dataDir: config.dataDir, database: store.sql.name, workers: config.workers, metering: config.metering ? 'on' : 'off', version: VERSION })
  if (services.sso) log.info('single sign-on', { provider: config.sso.providerName, issuer: config.oidcIssuer, redirectUri: services.sso.redirectUri, passwordSignIn: config.passwordSignIn ? 'on' : 'off' })
  // live streams nobody will continue (their client gone past the grace period, their server killed):
  // made into notes now and every few seconds, on every node (each stream is claimed by one)
  const sweepLive = () => services.live.sweep().catch((err: unknown) => log.warn('could not finish the live streams left behind; trying again in 5 s', { error: err }))
  void sweepLive()
  const liveSweep = setInterval(sweepLive, 5000)
  liveSweep.unref()
  let stopping = false
  onStopSignal(log, async () => {
    stopping = true
    clearInterval(liveSweep)
    await app.stop()
    await services.workers.stop()
    // share pages' openings still waiting to be counted (modules/sharing/openings.ts)
    await services.sharing.flushOpenings().catch((err: unknown) => log.warn('could not write the last openings of share links', { error: err }))
    await store.close()
  })
  // The queue's start (recovering jobs, the recurring tasks, the watchers: synchronous SQLite work that
  // holds the event loop for several milliseconds) and the summary engine's probe a moment after
  // listening, so that requests already waiting, such as an orchestrator's readiness probe or a client
  // retrying, are answered first (docs/decisions.md, "Cold start, again").
  await new Promise(resolve => setTimeout(resolve, WORKERS_AFTER_LISTEN_MS))
  if (stopping) return
  startupMark('answering waiting requests first')
  await services.workers.start()
  startupMark('workers')
  startupReport()
  // Find out now which summary engine answers, so health can say so from the first requests on.
  void services.llmSelector.describe().catch(() => {})
}
