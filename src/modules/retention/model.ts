import { t, type Static } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'
import { MAX_RETENTION_DAYS, type RetentionMode } from '../../config'

export { MAX_RETENTION_DAYS, type RetentionMode }

/** An account's own choice: one of the modes, or `default` (follow the instance's NOTESVC_RETENTION_MODE). */
export type RetentionChoice = RetentionMode | 'default'

const Mode = t.Union([t.Literal('forever'), t.Literal('media'), t.Literal('notes')], {
  description: '`forever`: keep everything; `media`: delete a note\'s recording `days` after the note was created (transcript, summary and note kept); `notes`: delete whole notes `days` after they were created',
})
const Days = Nullable(Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS, description: 'days counted from the note\'s `dateCreated`; null with `forever`' }))

const RetentionPolicyEffect = t.Object({ mode: Mode, days: Days }, { title: 'RetentionPolicyEffect', description: 'A retention mode and its number of days.' })

export const RetentionPolicy = t.Object(
  {
    mode: t.Union([t.Literal('default'), t.Literal('forever'), t.Literal('media'), t.Literal('notes')], { description: 'the account\'s own setting; `default` follows the instance\'s default (`instanceDefault`)' }),
    days: Days,
    effective: RetentionPolicyEffect,
    instanceDefault: RetentionPolicyEffect,
    updatedAt: Nullable({ ...DateTime, description: 'when the account\'s setting was last changed; null when never' }),
  },
  {
    title: 'RetentionPolicy',
    description: 'What the retention sweep deletes in this account (both its live and sandbox libraries): finished and failed notes older than `days` are swept; notes still processing never are.',
  },
)
export type RetentionPolicy = Static<typeof RetentionPolicy>

export const UpdateRetentionPolicyRequest = t.Object(
  {
    // Checked by the service (RetentionService.update), whose 400 says what to give instead
    mode: t.String({ maxLength: 20, examples: ['media'], description: 'one of `default`, `forever`, `media`, `notes`' }),
    days: t.Optional(Nullable(t.Number({ examples: [90], description: `a whole number of days from 1 to ${MAX_RETENTION_DAYS}: required with \`media\` and \`notes\`; omit or null with \`default\` and \`forever\`` }))),
  },
  { title: 'UpdateRetentionPolicyRequest', description: 'The account\'s new retention policy.' },
)
export type UpdateRetentionPolicyRequest = Static<typeof UpdateRetentionPolicyRequest>

export const RETENTION_CHOICES = ['default', 'forever', 'media', 'notes'] as const

/** What one sweep did, across every account. */
export interface SweepSummary {
  /** whole notes deleted (mode `notes`) */
  notesDeleted: number
  /**
   * recording files deleted from storage, in either mode: with their notes (`notes`) or alone, the
   * notes kept (`media`). A note whose file was already gone (no file ever uploaded, or a killed sweep
   * deleted it) adds nothing here.
   */
  recordingsRemoved: number
  /** notes old enough but still processing (queued, converting, transcribing, summarizing): left for a later sweep */
  skippedProcessing: number
  /** notes old enough whose stored recording the storage refused to delete: left whole, logged, tried again by the next sweep */
  failed: number
  /** audit events older than NOTESVC_AUDIT_RETENTION_DAYS removed */
  auditEventsPruned: number
}
