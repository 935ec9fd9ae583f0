import type { PostgresStore } from '../../db/store'
import { candidateTerms, type CandidateNote, type FindCandidates } from './question-candidates'

/**
 * A question's notes on PostgreSQL: the tsvector rows (migration 9, with the filters copied in by
 * migration 12), any of the words as a prefix (`'budget':* | 'review':*`), ranked by ts_rank with the
 * title and summary weighed as the list's search weighs them; the bodies read for the kept notes only.
 */
export function postgresQuestionCandidates(store: PostgresStore): FindCandidates {
  return async (lib, filter, prefixes, limit) => {
    if (!prefixes.length) return []
    const { where, params } = candidateTerms(lib, filter, 's.')
    const query = prefixes.map(p => `'${p}':*`).join(' | ')
    return store.all<CandidateNote>(`WITH found AS (
        SELECT s.note_id, ts_rank('{0.1, 0.1, 0.2, 1.0}', s.doc, q) AS score
        FROM note_search s, to_tsquery('simple', ?) q
        WHERE s.doc @@ q AND ${where}
        ORDER BY score DESC LIMIT ?)
      SELECT n.id, n.title, n.date_created, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content, b.transcript_segments
      FROM found JOIN notes n ON n.id = found.note_id LEFT JOIN note_bodies b ON b.note_id = n.id
      ORDER BY found.score DESC, n.date_created DESC, n.id DESC`, [query, ...params, limit])
  }
}
