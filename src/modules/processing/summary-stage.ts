import { STYLE_IDS, type LlmEngine, type StyleId } from '../../engines/llm/engine'
import { summarizeLong } from '../../engines/llm/summarize'
import { PermanentJobError } from '../../jobs/kinds'
import type { JobRow } from '../../jobs/repo'
import type { NotesService } from '../notes/service'
import { failedAfterRetries, type ProcessingStage } from './stages'

/** The stage's name, as a job's row remembers it. */
const SUMMARIZE = 'summarize'

export interface SummaryStageDeps {
  llm: () => Promise<LlmEngine>
  notes: Pick<NotesService, 'getById' | 'namedSegmentsOf' | 'finish'>
  /**
   * The note's recording, null when it has none (a text note): its length in seconds (null when
   * unknown; for the metrics) and the file name it was uploaded as (the builtin engine's title when no
   * sentence was heard clearly)
   */
  recordingOf: (noteId: string) => Promise<{ durationSeconds: number | null; fileName: string } | null>
  /** pause before the one further try of a failed summary */
  summaryRetryMs?: number
  log?: { warn(msg: string, fields?: Record<string, unknown>): void }
  /** told the wall-clock seconds of the summary, with its engine and the recording's length, for the metrics */
  onEngineTime?: (stage: 'summary', engine: string, seconds: number, audioSeconds: number | null) => void
}

/** What a job of the summary stage carries beyond its note: the style of a summary made again, and the charge for it. */
interface SummaryPayload {
  styleId: StyleId
  /** the usage row of the charge, given back when the summary fails for good; absent when nothing was charged */
  usageId?: string
}

/** The payload of a job that makes a note's summary again in `styleId`, charged by the usage row `usageId` (if any). */
export const summaryAgainPayload = (styleId: StyleId, usageId?: string): string => JSON.stringify({ styleId, ...(usageId ? { usageId } : {}) } satisfies SummaryPayload)

/** The charge a summary made again carries (its usage row), to refund when it fails for good; null when none. */
export function summaryAgainCharge(job: JobRow): string | null {
  if (job.payload === null) return null
  const { usageId } = JSON.parse(job.payload) as Partial<SummaryPayload>
  return typeof usageId === 'string' ? usageId : null
}

/** The style a job asks for (a summary made again), or null: the note's own (an upload's first summary). */
function requestedStyle(job: JobRow): StyleId | null {
  if (job.payload === null) return null
  const { styleId } = JSON.parse(job.payload) as Partial<SummaryPayload>
  if (!STYLE_IDS.includes(styleId as StyleId)) throw new PermanentJobError('internal', `The job asks for a summary style this version of notesvc does not know (${String(styleId)}).`)
  return styleId as StyleId
}

/**
 * The summary stage: the note's stored transcript, its speakers by the names shown (attendees,
 * owners), summarized in a style and stored, the note `Done`. Run after an upload's transcription (the
 * note's style), or alone for an existing note (a summary made again in the style the job names, its
 * transcript kept). Either way the summary's title becomes the note's unless a person gave the note its
 * title (finish keeps that one). A
 * summary that fails is tried once more 2 s later; failing again, the note ends `Error` with
 * `summarization_failed`, its transcript readable (and, made again, its earlier summary kept).
 */
export function summaryStage(deps: SummaryStageDeps): ProcessingStage {
  return {
    name: SUMMARIZE,
    failure: err => failedAfterRetries(err, 'summarization_failed'),
    run: async (job, run) => {
      const { signal } = run
      const again = requestedStyle(job)
      const note = await deps.notes.getById(job.note_id)
      // the job went with its note: nothing of this run can be written
      if (!note) throw new PermanentJobError('internal', 'The note no longer exists.')
      const styleId = again ?? (note.style_id as StyleId)
      const segments = await deps.notes.namedSegmentsOf(note)
      const recording = await deps.recordingOf(note.id)
      const input = { text: note.original_transcription, styleId, segments: segments ?? undefined, language: note.language, fileName: recording?.fileName }
      const audioSeconds = recording?.durationSeconds ?? null
      const since = performance.now()
      let summary: Awaited<ReturnType<typeof summarizeLong>>
      let llmName = 'unknown'
      try {
        try {
          const llm = await deps.llm()
          llmName = llm.name
          summary = await summarizeLong(llm, input, signal)
        } catch (err) {
          if (signal.aborted) throw err
          deps.log?.warn('summary failed, trying once more', { noteId: note.id, error: err instanceof Error ? err.message : String(err) })
          await Bun.sleep(deps.summaryRetryMs ?? 2000)
          signal.throwIfAborted()
          summary = await summarizeLong(await deps.llm(), input, signal)
        }
      } catch (err) {
        if (signal.aborted || err instanceof PermanentJobError) throw err
        const cause = err instanceof Error ? err.message : String(err)
        throw new PermanentJobError('summarization_failed', again
          ? `Summarizing the transcript again in the ${again} style failed: ${cause}. The note keeps its transcript and its earlier summary (GET /v1/notes/${note.id}); ask for the summary again once the summary engine answers.`
          : `The transcript is ready (GET /v1/notes/${note.id}/transcript), but summarizing it failed: ${cause}`)
      }
      deps.onEngineTime?.('summary', llmName, (performance.now() - since) / 1000, audioSeconds)
      // the transcript stays as the note has it; the title is the summary's unless a person gave one
      return () => deps.notes.finish(note.id, {
        title: summary.title, summary: summary.summary, structuredContent: summary.structuredContent, language: note.language, styleId,
      })
    },
  }
}
