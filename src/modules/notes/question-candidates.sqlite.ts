import type { SqliteStore } from '../../db/store'
import { candidateTerms, type CandidateNote, type FindCandidates } from './question-candidates'

/**
 * A question's notes on SQLite: FTS5, any of the words as a prefix (`"budget"* OR "review"*`), those
 * holding the most of the question's words first, then by bm25 with the title ten times and the
 * summary twice as heavy as the transcript, as the list's search ranks (bm25 alone puts a note with
 * "review" in its title and "Karin" in its summary before the one note whose transcript also names the
 * "kilns" asked about). Each word's notes are read once off the index; the bodies for the kept notes
 * only. On the store's read thread, as a search is.
 */
export function sqliteQuestionCandidates(store: SqliteStore): FindCandidates {
  return async (lib, filter, prefixes, limit) => {
    if (!prefixes.length) return []
    const { where, params } = candidateTerms(lib, filter, 'n.')
    const phrase = (p: string) => `"${p}"*`
    const held = prefixes.map(() => '(s.rowid IN (SELECT rowid FROM note_search WHERE note_search MATCH ?))').join(' + ')
    return store.allAside<CandidateNote>(`WITH found AS (
        SELECT n.rowid AS r, ${held} AS words, bm25(note_search, 10.0, 2.0, 1.0) AS score
        FROM note_search s JOIN notes n ON n.rowid = s.rowid
        WHERE note_search MATCH ? AND ${where}
        ORDER BY words DESC, score LIMIT ?)
      SELECT n.id, n.title, n.date_created, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content, b.transcript_segments
      FROM found JOIN notes n ON n.rowid = found.r LEFT JOIN note_bodies b ON b.note_id = n.id
      ORDER BY found.words DESC, found.score, n.date_created DESC, n.id DESC`, [...prefixes.map(phrase), prefixes.map(phrase).join(' OR '), ...params, limit])
  }
}
