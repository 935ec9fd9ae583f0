import type { Config } from '../config'
import type { Logger } from '../log'
import { commandLine } from '../command-name'
import { startupMark } from '../startup-timing'
import { startServer } from '../server-start'
import { out, type CommandContext } from './command'
import { announceDataDir } from './data-folder'
import { onStopSignal } from './long-running'
import { writeStderr } from '../std-streams'

/** `serve`: the HTTP server and NOTESVC_WORKERS job workers (src/server-start.ts), until SIGTERM or SIGINT. */
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
  const started = await startServer(config, {
    log,
    // PORT=0 (any free port): the public URL's port is not the one listened on
    onListening: (url, firstStart) => {
      if (firstStart) printFirstStart(config, firstStart, `${config.port === 0 ? url.replace('//0.0.0.0:', '//127.0.0.1:') : config.publicUrl}/`)
    },
  })
  onStopSignal(log, () => started.stop())
  await started.workersStarted
}
