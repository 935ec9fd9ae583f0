import type { Logger } from '../log'
import type { Services } from '../services'

/** Says which speech engine jobs will use, or warns that there is none and what that means here. */
export function logSpeechEngine(services: Services, log: Logger, withoutOne: string) {
  const speech = services.asrSelector.describe()
  if (speech.engine === 'none') log.warn(`no speech engine: ${withoutOne} until one is installed`, { detail: speech.detail })
  else log.info('speech engine', { engine: speech.engine, detail: speech.detail })
}

/** Runs `stop` once on SIGINT or SIGTERM, then exits 0. */
export function onStopSignal(log: Logger, stop: () => Promise<void>) {
  let stopping = false
  const handle = (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    void stop().then(() => process.exit(0))
  }
  process.on('SIGINT', () => handle('SIGINT'))
  process.on('SIGTERM', () => handle('SIGTERM'))
}

/** The URL a server listens on, as a browser would write it (an IPv6 host in brackets). */
export function listenUrl(host: string, port: number | undefined): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}
