import type { SqliteStore } from '../../db/store'
import { candidateTerms, type CandidateNote, type FindCandidates } from './question-candidates'

/**
 * A question's notes on SQLite: FTS5, any of the words as a prefix (`"budget"* OR "review"*`), ranked by
 * bm25 with the title ten times and the summary twice as heavy as the transcript, as the list's
 * search ranks; the bodies read for the kept notes only. On the store's read thread, as a search is.
 */
export function sqliteQuestionCandidates(store: SqliteStore): FindCandidates {
  return async (lib, filter, prefixes, limit) => {
    if (!prefixes.length) return []
    const { where, params } = candidateTerms(lib, filter, 'n.')
    const match = prefixes.map(p => `"${p}"*`).join(' OR ')
    return store.allAside<CandidateNote>(`WITH found AS (
        SELECT n.rowid AS r, bm25(note_search, 10.0, 2.0, 1.0) AS score
        FROM note_search s JOIN notes n ON n.rowid = s.rowid
        WHERE note_search MATCH ? AND ${where}
        ORDER BY score LIMIT ?)
      SELECT n.id, n.title, n.date_created, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content, b.transcript_segments
      FROM found JOIN notes n ON n.rowid = found.r LEFT JOIN note_bodies b ON b.note_id = n.id
      ORDER BY found.score, n.date_created DESC, n.id DESC`, [match, ...params, limit])
  }
}
