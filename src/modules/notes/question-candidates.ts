import type { Library } from '../library'
import { taggedTerm } from './repo'

/**
 * The notes a question across the library is answered from (askLibrary, modules/library-questions):
 * found through the full-text index of title, summary and transcript, any word of the question
 * matching (each as the start of a word, so "budget" finds "budgets"), best first by the index's own
 * rank, at most `limit`. One query per back end (`question-candidates.sqlite.ts`,
 * `question-candidates.postgres.ts`), chosen in the composition root; separate from the list's
 * search (`repo.*.ts`), which needs every word.
 */
export interface CandidateFilter {
  /** a folder id, or null for the top level */
  folderId?: string | null
  /** notes created at or after this instant (ISO, as date_created is stored) */
  createdFrom?: string
  /** notes created before this instant */
  createdBefore?: string
  /** the name key (tags/names.ts nameKey) of a tag the notes carry */
  tagKey?: string
}

/** A note found for a question: what its passages and citations are made from. */
export interface CandidateNote {
  id: string
  title: string
  date_created: string
  original_transcription: string
  structured_content: string | null
  transcript_segments: string | null
}

export type FindCandidates = (lib: Library, filter: CandidateFilter, prefixes: readonly string[], limit: number) => Promise<CandidateNote[]>

/** Notes still processing have no transcript to answer from yet (askNoteQuestion answers 409 for one). */
const SETTLED = "status <> 'Summarizing'"

/** The filter as SQL terms over columns named `prefix.column`, and their values. */
export function candidateTerms(lib: Library, filter: CandidateFilter, prefix: string, idColumn = `${prefix}id`): { where: string; params: (string | number)[] } {
  const terms = [`${prefix}account_id = ?`, `${prefix}sandbox = ?`, `${prefix}${SETTLED}`]
  const params: (string | number)[] = [lib.accountId, lib.sandbox ? 1 : 0]
  if (filter.folderId === null) terms.push(`${prefix}folder_id IS NULL`)
  else if (filter.folderId !== undefined) {
    terms.push(`${prefix}folder_id = ?`)
    params.push(filter.folderId)
  }
  if (filter.createdFrom !== undefined) {
    terms.push(`${prefix}date_created >= ?`)
    params.push(filter.createdFrom)
  }
  if (filter.createdBefore !== undefined) {
    terms.push(`${prefix}date_created < ?`)
    params.push(filter.createdBefore)
  }
  if (filter.tagKey !== undefined) {
    terms.push(taggedTerm(idColumn, '?', '?', '?'))
    params.push(lib.accountId, lib.sandbox ? 1 : 0, filter.tagKey)
  }
  return { where: terms.join(' AND '), params }
}
