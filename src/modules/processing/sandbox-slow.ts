import { setTimeout as sleep } from 'node:timers/promises'
import type { StyleId } from '../../engines/llm/engine'
import { PermanentJobError, type JobRun } from '../../jobs/kinds'
import type { JobRow } from '../../jobs/repo'
import type { JobRegistry } from '../../jobs/runtime'
import type { NotesService } from '../notes/service'
import { SANDBOX_SEGMENTS, SANDBOX_TRANSCRIPT, sandboxSummary } from './sandbox'
import { failedAfterRetries } from './stages'

/** The job kind of the sandbox scenario `slow` (http/sandbox-scenarios.ts). */
const SANDBOX_SLOW = 'sandbox_slow'
/** How long each step of the slow sandbox note takes: three of them, about 3 s in all. */
const SANDBOX_SLOW_STEP_MS = 1000
/** The progress the note shows at stage `transcribing` when its completion answers, before the job's steps. */
export const SANDBOX_SLOW_FIRST_PROGRESS = 0.25

/**
 * The sandbox scenario `slow` as a job of its own kind, so it is durable and leased like real work (a
 * restart resumes it at the step its row reached): the note, at `transcribing` with progress 0.25 when
 * its upload is completed, moves to 0.5 then 0.75 a second apart, and a second later ends `Done` with
 * the fixed sample output (note.completed), as an ordinary sandbox upload does at once.
 */
export function registerSandboxSlow(deps: {
  jobs: JobRegistry
  notes: Pick<NotesService, 'getById' | 'setStage' | 'finish' | 'fail'>
}): { queue: (noteId: string) => Promise<void> } {
  const { jobs, notes } = deps
  const pause = (run: JobRun) => sleep(SANDBOX_SLOW_STEP_MS, undefined, { signal: run.signal })
  const progressStep = (name: string, progress: number) => ({
    name,
    run: async (job: JobRow, run: JobRun) => {
      await pause(run)
      return () => notes.setStage(job.note_id, 'transcribing', progress)
    },
  })

  jobs.register({
    kind: SANDBOX_SLOW,
    stages: [
      progressStep('half', 0.5),
      progressStep('three_quarters', 0.75),
      {
        name: 'finish',
        run: async (job: JobRow, run: JobRun) => {
          await pause(run)
          const note = await notes.getById(job.note_id)
          if (!note) throw new PermanentJobError('internal', 'The note no longer exists.')
          const fixed = sandboxSummary(note.style_id as StyleId)
          return () => notes.finish(job.note_id, { summary: fixed.summary, transcript: SANDBOX_TRANSCRIPT, structuredContent: fixed.structuredContent, language: 'en', segments: SANDBOX_SEGMENTS })
        },
      },
    ],
    onFailure: async (job, err) => {
      const { code, message } = failedAfterRetries(err, 'internal')
      if (await notes.getById(job.note_id)) await notes.fail(job.note_id, code, message)
    },
  })

  /** Queues the slow note's job, in the caller's transaction (`jobs.wake` after it commits). */
  return { queue: (noteId: string) => jobs.enqueue(SANDBOX_SLOW, noteId) }
}
