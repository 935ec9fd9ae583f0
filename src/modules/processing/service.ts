import type { Static } from 'elysia'
import { ApiError } from '../../http/errors'
import { isErrorScenario, scenarioError, scenarioOfFileName } from '../../http/sandbox-scenarios'
import type { Principal } from '../../http/admission'
import type { NotesService } from '../notes/service'
import type { LlmEngine, StyleId } from '../../engines/llm/engine'
import { retrievePassages } from '../../engines/llm/retrieval'
import { sentencesText, timedSentences } from '../../engines/llm/sentences'
import { summarizeLong } from '../../engines/llm/summarize'
import type { Ytdlp } from '../../engines/media/ytdlp'
import type { SummaryRequest, TranscriptionRequest } from './model'
import { createCharging, type Charged } from './charging'
import { checkContentPolicy } from './content-policy'
import { asApiError } from './provider-errors'
import { createRecordingTranscription, type RecordingTranscriptionDeps } from './recording-transcription'
import { SANDBOX_NOTICE, sandboxAnswer, sandboxSummary } from './sandbox'
import { createYoutubeSummary } from './youtube-summary'

export type { Charged } from './charging'
export { UnreadableMediaError } from './provider-errors'
export type { Decoding, HeardRecording } from './recording-transcription'

export type ProcessingService = ReturnType<typeof createProcessingService>

const PASSAGES_FOR_A_QUESTION = 5

/**
 * The synchronous processing routes. Each checks the balance before the work (402 early), does the
 * work, and charges only on success, in one transaction that refuses (402) if the balance no longer
 * covers it: a provider failure charges nothing, and concurrent calls never overspend. Transcription
 * on request is recording-transcription.ts, a YouTube link's summary youtube-summary.ts.
 */
export function createProcessingService(deps: RecordingTranscriptionDeps & {
  notes: NotesService
  llm: () => Promise<LlmEngine>
  ytdlp: Ytdlp
  contentPolicy: RegExp[]
}) {
  const { notes, credits } = deps
  const charging = createCharging(credits)
  const { remaining, ensureBalance, charge } = charging
  const recordings = createRecordingTranscription(deps, charging)

  return {
    admitTranscription: recordings.admitTranscription,
    transcribeLocalFile: recordings.transcribeLocalFile,
    transcribeUrl: recordings.transcribeUrl,

    async createTranscription(p: Principal, body: Static<typeof TranscriptionRequest>): Promise<Charged<{ transcript: string; language: string; durationSeconds: number | null; creditsCharged: number; notice?: string }>> {
      // a sandbox scenario named by the URL's file name (http/sandbox-scenarios.ts); the others have no note here
      const scenario = p.sandbox ? scenarioOfFileName(body.audioUrl) : null
      if (isErrorScenario(scenario)) throw scenarioError(scenario)
      const { creditsRemaining, body: heard } = await recordings.transcribeUrl(p, body)
      return {
        creditsRemaining,
        body: { transcript: heard.transcript, language: heard.language ?? 'und', durationSeconds: heard.durationSeconds, creditsCharged: heard.creditsCharged, ...(heard.notice ? { notice: heard.notice } : {}) },
      }
    },

    async createSummary(p: Principal, body: Static<typeof SummaryRequest>) {
      const styleId: StyleId = body.styleId ?? 'note'
      checkContentPolicy(deps.contentPolicy, body.text)
      if (p.sandbox) return { creditsRemaining: await remaining(p), body: { ...sandboxSummary(styleId), styleId, creditsCharged: credits.quote(p, 'createSummary'), notice: SANDBOX_NOTICE } }
      const cost = credits.quote(p, 'createSummary')
      await ensureBalance(p, 'createSummary', cost)
      try {
        const engine = await deps.llm()
        const out = await summarizeLong(engine, { text: body.text, styleId })
        const left = await charge(p, 'createSummary', cost)
        return { creditsRemaining: left, body: { title: out.title, summary: out.summary, styleId, structuredContent: out.structuredContent, creditsCharged: cost } }
      } catch (err) {
        asApiError(err)
      }
    },

    createYoutubeSummary: createYoutubeSummary({ ...deps, transcribeFile: recordings.transcribeFile }, charging),

    async askNoteQuestion(p: Principal, id: string, question: string): Promise<Charged<{ noteId: string; question: string; answer: string; creditsCharged: number; notice?: string }>> {
      const note = await notes.requireNote(p, id)
      if (note.status === 'Summarizing') {
        throw new ApiError('conflict', `Note ${id} is still processing; ask again when GET /v1/notes/${id}/status shows isComplete true.`)
      }
      if (p.sandbox) return { creditsRemaining: await remaining(p), body: { noteId: id, question, answer: sandboxAnswer(question), creditsCharged: credits.quote(p, 'askNoteQuestion'), notice: SANDBOX_NOTICE } }
      if (!note.original_transcription.trim()) {
        throw new ApiError('conflict', `Note ${id} has no transcript to answer from${note.status === 'Error' ? ' (its processing failed)' : ''}.`)
      }
      const cost = credits.quote(p, 'askNoteQuestion')
      await ensureBalance(p, 'askNoteQuestion', cost)
      try {
        // A transcript without punctuation is asked as sentences cut from its word times, with their times.
        const sentences = timedSentences(note.original_transcription, await notes.namedSegmentsOf(note)) ?? undefined
        const text = sentences ? sentencesText(sentences) : note.original_transcription
        // Only the passages most relevant to the question go to the model, so a two-hour transcript works.
        const passages = retrievePassages(text, question, PASSAGES_FOR_A_QUESTION)
        const engine = await deps.llm()
        const out = await engine.answer({ question, passages, sentences, language: note.language })
        const left = await charge(p, 'askNoteQuestion', cost, id)
        return { creditsRemaining: left, body: { noteId: id, question, answer: out.answer, creditsCharged: cost } }
      } catch (err) {
        asApiError(err)
      }
    },
  }
}
