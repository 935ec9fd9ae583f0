/** NOTESVC_RETENTION_* and NOTESVC_AUDIT_RETENTION_DAYS: what is deleted, after how long, how often swept. */
import { ConfigError, integer, oneOf, type Env } from './environment'

export type RetentionMode = 'forever' | 'media' | 'notes'

export interface RetentionConfig {
  /** NOTESVC_RETENTION_MODE: what an account without a policy of its own keeps (default forever) */
  mode: RetentionMode
  /** NOTESVC_RETENTION_DAYS: after how many days, counted from a note's creation; null with `forever` */
  days: number | null
  /** NOTESVC_RETENTION_SWEEP_MINUTES: how often a process with workers runs the sweep (default 60) */
  sweepMinutes: number
  /** NOTESVC_AUDIT_RETENTION_DAYS: audit events older than this are pruned by the sweep; null keeps them forever (default) */
  auditDays: number | null
}

/** The longest retention period accepted, in days (100 years). */
export const MAX_RETENTION_DAYS = 36_500

export function retentionConfig(env: Env): RetentionConfig {
  const mode = oneOf('NOTESVC_RETENTION_MODE', env.NOTESVC_RETENTION_MODE, ['forever', 'media', 'notes'] as const, 'forever')
  const daysSet = env.NOTESVC_RETENTION_DAYS !== undefined && env.NOTESVC_RETENTION_DAYS !== ''
  if (mode !== 'forever' && !daysSet) throw new ConfigError(`NOTESVC_RETENTION_MODE=${mode} needs NOTESVC_RETENTION_DAYS: set it to the number of days (1 to ${MAX_RETENTION_DAYS}) after which ${mode === 'media' ? 'recordings are' : 'notes are'} deleted`)
  if (mode === 'forever' && daysSet) throw new ConfigError(`NOTESVC_RETENTION_DAYS is set but NOTESVC_RETENTION_MODE is forever (the default): set NOTESVC_RETENTION_MODE=media or notes, or unset NOTESVC_RETENTION_DAYS`)
  const auditSet = env.NOTESVC_AUDIT_RETENTION_DAYS !== undefined && env.NOTESVC_AUDIT_RETENTION_DAYS !== ''
  return {
    mode,
    days: mode === 'forever' ? null : integer('NOTESVC_RETENTION_DAYS', env.NOTESVC_RETENTION_DAYS, 0, 1, MAX_RETENTION_DAYS),
    sweepMinutes: integer('NOTESVC_RETENTION_SWEEP_MINUTES', env.NOTESVC_RETENTION_SWEEP_MINUTES, 60, 1, 7 * 24 * 60),
    auditDays: auditSet ? integer('NOTESVC_AUDIT_RETENTION_DAYS', env.NOTESVC_AUDIT_RETENTION_DAYS, 0, 1, MAX_RETENTION_DAYS) : null,
  }
}
