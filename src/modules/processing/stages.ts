import { PermanentJobError, type JobStage } from '../../jobs/kinds'
import type { NotesService } from '../notes/service'

/** A note as the processing stages read it. */
export type ProcessedNote = NonNullable<Awaited<ReturnType<NotesService['getById']>>>

/** What a note says once its processing failed for good: its `errorCode` and a message for people. */
export interface NoteFailure {
  code: string
  message: string
}

/** A stage of the processing jobs: a job stage with its own failure rule. */
export interface ProcessingStage extends JobStage {
  /** what the note says when its job failed for good at this stage (`note` as it stood then) */
  failure(err: unknown, note: ProcessedNote): NoteFailure
}

/** A failure retrying cannot fix keeps its code and message; any other, after the retries, is `code` with the last error. */
export function failedAfterRetries(err: unknown, code: string): NoteFailure {
  if (err instanceof PermanentJobError) return { code: err.code, message: err.message }
  return { code, message: `Processing failed after several attempts (${err instanceof Error ? err.message : String(err)}).` }
}
