import type { PostgresStore } from '../../db/store'
import { candidateTerms, type CandidateNote, type FindCandidates } from './question-candidates'

/**
 * A question's notes on PostgreSQL: the tsvector rows (migration 9, with the filters copied in by
 * migration 12), any of the words as a prefix (`'budget':* | 'review':*`), those holding the most of
 * the question's words first, then by ts_rank (title and summary weighed as the list's search weighs
 * them). ts_rank alone knows no word's rarity: a note saying "review" and "Karin" ten times would come
 * before the one note that also names the "kilns" asked about. The bodies are read for the kept notes only.
 */
export function postgresQuestionCandidates(store: PostgresStore): FindCandidates {
  return async (lib, filter, prefixes, limit) => {
    if (!prefixes.length) return []
    const { where, params } = candidateTerms(lib, filter, 's.', 's.note_id')
    const lexeme = (p: string) => `'${p}':*`
    const held = prefixes.map(() => "(s.doc @@ to_tsquery('simple', ?))::int").join(' + ')
    return store.all<CandidateNote>(`WITH found AS (
        SELECT s.note_id, ${held} AS words, ts_rank('{0.1, 0.1, 0.2, 1.0}', s.doc, q) AS score
        FROM note_search s, to_tsquery('simple', ?) q
        WHERE s.doc @@ q AND ${where}
        ORDER BY words DESC, score DESC LIMIT ?)
      SELECT n.id, n.title, n.date_created, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content, b.transcript_segments
      FROM found JOIN notes n ON n.id = found.note_id LEFT JOIN note_bodies b ON b.note_id = n.id
      ORDER BY found.words DESC, found.score DESC, n.date_created DESC, n.id DESC`, [...prefixes.map(lexeme), prefixes.map(lexeme).join(' | '), ...params, limit])
  }
}
