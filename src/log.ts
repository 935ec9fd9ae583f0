import { writeStderr } from './std-streams'
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

function serialize(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v
  }
  return out
}

/** One JSON object per line on stderr, so stdout keeps only a command's result. */
export function createLogger(level: LogLevel = 'info', write: (line: string) => void = writeStderr): Logger {
  const min = ORDER[level]
  const emit = (lvl: LogLevel) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[lvl] < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...serialize(fields) }) + '\n')
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
