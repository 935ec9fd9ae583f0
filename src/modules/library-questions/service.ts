import type { Static } from 'elysia'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/admission'
import type { TranscriptSegment } from '../../engines/asr/engine'
import { LlmUnavailableError, type LlmEngine, type Passage } from '../../engines/llm/engine'
import { cosine, type Embedder } from '../../engines/llm/ollama-embeddings'
import { clockTime } from '../../engines/llm/sentences'
import type { Logger } from '../../log'
import type { CreditsService } from '../credits/service'
import type { CandidateFilter, CandidateNote, FindCandidates } from '../notes/question-candidates'
import { nameKey } from '../tags/names'
import { createCharging, type Charged } from '../processing/charging'
import { asApiError } from '../processing/provider-errors'
import { SANDBOX_NOTICE, sandboxAnswer } from '../processing/sandbox'
import type { LibraryAnswer, LibraryQuestionRequest } from './model'
import { passagesOf, questionPrefixes, rankPassages, type RankedPassage } from './retrieval'

export type LibraryQuestionsService = ReturnType<typeof createLibraryQuestionsService>
type Answer = Static<typeof LibraryAnswer>

/** What answers when retrieval finds nothing relevant; never charged. */
const NOTHING_ANSWERS = 'Nothing in the library answers this.'
/** How many notes the index gives for a question, and how many passages of them are cited at most. */
const CANDIDATE_NOTES = 20
const PASSAGES_TO_ENGINE = 5
const MAX_CITATIONS = 5
/** With embeddings (NOTESVC_ASK_EMBED_MODEL): how many of BM25's best are re-ranked, and the cosine's share of the new score. */
const RERANK_POOL = 20
const EMBEDDING_WEIGHT = 0.5
/** A passage scoring under this share of the best one's is not cited. */
const CITED_SHARE = 0.5
/** The operation a question across the library is charged as, in usage. */
const OPERATION = 'askLibrary'

/** `from`/`to` as stored instants: a date alone as `to` reaches the end of that day. */
function createdRange(body: Pick<Static<typeof LibraryQuestionRequest>, 'from' | 'to'>): Pick<CandidateFilter, 'createdFrom' | 'createdBefore'> {
  const instant = (value: string, field: 'from' | 'to') => {
    const dateOnly = value.length === 10
    const ms = Date.parse(dateOnly ? `${value}T00:00:00Z` : value)
    // Date.parse rolls 2026-02-31 over to March: the day must be one the calendar has
    const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number]
    const day = new Date(Date.UTC(y, m - 1, d))
    if (Number.isNaN(ms) || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) throw new ApiError('invalid_request', `${field} is not a real date; send one such as 2026-03-01.`, { details: [{ field, issue: 'not a real date' }] })
    return new Date(dateOnly && field === 'to' ? ms + 86_400_000 : ms).toISOString()
  }
  const createdFrom = body.from === undefined ? undefined : instant(body.from, 'from')
  const createdBefore = body.to === undefined ? undefined : instant(body.to, 'to')
  if (createdFrom !== undefined && createdBefore !== undefined && createdFrom >= createdBefore) {
    throw new ApiError('invalid_request', 'from is not before to; send a from earlier than to, or only one of them.', { details: [{ field: 'from', issue: 'not before to' }] })
  }
  return { ...(createdFrom ? { createdFrom } : {}), ...(createdBefore ? { createdBefore } : {}) }
}

const rounded = (x: number) => Math.round(x * 100) / 100

function citationOf(p: RankedPassage): Answer['citations'][number] {
  const start = p.start === null ? null : rounded(p.start)
  return {
    noteId: p.noteId, title: p.title, start, end: p.end === null ? null : rounded(p.end), speaker: p.speaker, text: p.text,
    url: `/notes/${encodeURIComponent(p.noteId)}${start === null ? '' : `?t=${start}`}`,
  }
}

/** A passage as the engine reads it: which note, when and who, so a model can tell them apart. */
function enginePassage(p: RankedPassage, i: number, labelled: boolean): Passage {
  const when = p.start === null ? '' : ` ${clockTime(p.start)}–${clockTime(p.end ?? p.start)}`
  const who = p.speaker ? `${p.speaker}: ` : ''
  // distinct, far-apart offsets: the passages come from different notes and never overlap
  return { text: labelled ? `(${p.title}${when}) ${who}${p.text}` : p.text, offset: i * 1_000_000, score: p.score }
}

/**
 * Questions across an account's notes (askLibrary): the notes the full-text index finds
 * (`candidates`, the notes module's query), their passages ranked together, then the answer from the
 * best of them by the summary engine (builtin: extractive; Ollama: the passages as context), with the
 * passages cited. Charged like a question about one note, only when something answered.
 */
export function createLibraryQuestionsService(deps: {
  candidates: FindCandidates
  /** a note's segments with speakers' names shown (the notes service's namedSegmentsOf) */
  segmentsOf: (note: CandidateNote) => Promise<TranscriptSegment[] | null>
  llm: () => Promise<LlmEngine>
  credits: CreditsService
  /** Ollama's embeddings, to re-rank BM25's best passages; null: off (the default) */
  embed?: Embedder | null
  log?: Logger
}) {
  const { credits } = deps
  const { remaining, ensureBalance, charge } = createCharging(credits)

  /** The passages that answer, best first; empty when nothing relevant was found. */
  async function retrieve(p: Principal, question: string, filter: CandidateFilter): Promise<RankedPassage[]> {
    const notes = await deps.candidates(p, filter, questionPrefixes(question), CANDIDATE_NOTES)
    const passages = (await Promise.all(notes.map(async n => passagesOf({ id: n.id, title: n.title, text: n.original_transcription }, await deps.segmentsOf(n))))).flat()
    const { ranked, relevant } = rankPassages(passages, question, deps.embed ? RERANK_POOL : PASSAGES_TO_ENGINE)
    if (!relevant) return []
    return (deps.embed ? await reranked(deps.embed, question, ranked) : ranked).slice(0, PASSAGES_TO_ENGINE)
  }

  /**
   * BM25's best passages ordered again by a score half theirs (as a share of the best one's) and half
   * the cosine of their embedding and the question's; whether anything answers stays BM25's to say.
   * When Ollama cannot embed, BM25's order stands and the question is answered all the same.
   */
  async function reranked(embed: Embedder, question: string, ranked: RankedPassage[]): Promise<RankedPassage[]> {
    if (ranked.length < 2) return ranked
    let vectors: number[][]
    try {
      vectors = await embed([question, ...ranked.map(p => p.text)])
    } catch (err) {
      if (!(err instanceof LlmUnavailableError)) throw err
      deps.log?.warn('askLibrary: passages not re-ranked by embeddings', { reason: err.message })
      return ranked
    }
    const best = ranked[0]!.score
    return ranked
      .map((p, i) => ({ ...p, score: (1 - EMBEDDING_WEIGHT) * (p.score / best) + EMBEDDING_WEIGHT * Math.max(0, cosine(vectors[0]!, vectors[i + 1] ?? [])) }))
      .sort((a, b) => b.score - a.score)
  }

  return {
    async ask(p: Principal, body: Static<typeof LibraryQuestionRequest>): Promise<Charged<Answer>> {
      const { question } = body
      const filter: CandidateFilter = { ...(body.folderId !== undefined ? { folderId: body.folderId } : {}), ...(body.tag !== undefined ? { tagKey: nameKey(body.tag) } : {}), ...createdRange(body) }
      if (p.sandbox) return { creditsRemaining: await remaining(p), body: { question, answer: sandboxAnswer(question), citations: [], creditsCharged: 0, notice: SANDBOX_NOTICE } }
      const cost = credits.quote(p, OPERATION)
      await ensureBalance(p, OPERATION, cost)
      const passages = await retrieve(p, question, filter)
      if (!passages.length) return { creditsRemaining: await remaining(p), body: { question, answer: NOTHING_ANSWERS, citations: [], creditsCharged: 0 } }
      try {
        const engine = await deps.llm()
        // a model is told where each passage comes from; the builtin engine quotes the passages' own
        // sentences, and a label would be cut into them (a title's full stop ends a sentence)
        const labelled = engine.name !== 'builtin'
        const out = await engine.answer({ question, passages: passages.map((x, i) => enginePassage(x, i, labelled)) })
        const left = await charge(p, OPERATION, cost)
        const cited = passages.filter(x => x.score >= CITED_SHARE * passages[0]!.score).slice(0, MAX_CITATIONS)
        return { creditsRemaining: left, body: { question, answer: out.answer, citations: cited.map(citationOf), creditsCharged: cost } }
      } catch (err) {
        asApiError(err)
      }
    },
  }
}
