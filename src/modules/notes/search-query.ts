import { ApiError } from '../../http/errors'

/**
 * What a user typed into `q`, made into words the full-text index can take (DECISIONS in
 * docs/decisions.md "Searching notes"). Nothing the user types is index syntax: the text is split into
 * words here (runs of letters and digits, with their combining marks), everything else (quotes, `*`,
 * `-`, `:`, `^`, parentheses, emoji, punctuation) only separates words, and each word goes to the
 * index as a quoted literal. Every word must occur; the last also matches as the start of a longer
 * word, so a search box can search as the user types.
 */
export interface SearchTerms {
  /** the words, as typed (the index folds case, and on SQLite accents) */
  words: string[]
}

/** More words than this in one search are refused: each is one more list the index intersects. */
const MAX_QUERY_WORDS = 32

/** A letter, digit or private-use character, each with the combining marks that follow it. */
const WORD = /(?:[\p{L}\p{N}\p{Co}]\p{M}*)+/gu

/**
 * The words of `q`. No words at all (only punctuation, symbols or emoji) is a valid search that
 * finds nothing: `words` is empty. Too many words is a 400 saying what to do.
 */
export function searchTerms(q: string): SearchTerms {
  const words = q.normalize('NFC').match(WORD) ?? []
  if (words.length > MAX_QUERY_WORDS) {
    throw new ApiError('invalid_request', `q has ${words.length} words; search for at most ${MAX_QUERY_WORDS} words at a time.`, {
      details: [{ field: 'q', issue: `more than ${MAX_QUERY_WORDS} words` }],
    })
  }
  return { words }
}

/**
 * An FTS5 MATCH expression: each word a quoted phrase (it holds no `"`, so nothing needs escaping, and
 * FTS5 reads nothing in it as an operator), the last also a prefix; side by side they are ANDed.
 */
export function fts5Match(terms: SearchTerms): string {
  return terms.words.map((w, i) => (i === terms.words.length - 1 ? `"${w}"*` : `"${w}"`)).join(' ')
}

/**
 * PostgreSQL: the parameters of `plainto_tsquery('simple', $all_but_last) && to_tsquery('simple',
 * $last)`. plainto_tsquery takes any text; the last word goes to to_tsquery as a quoted lexeme with
 * `:*` (prefix), which is safe because a word holds no quote, backslash or operator character.
 */
export function tsqueryParams(terms: SearchTerms): { rest: string; last: string } {
  const last = terms.words.at(-1)!
  return { rest: terms.words.slice(0, -1).join(' '), last: `'${last}':*` }
}

/**
 * PostgreSQL: the text of `to_tsquery('simple', …)` that ranks a search of several words, each word
 * on its own (`'w1' | 'w2' | 'last':*`), as bm25 weighs them on SQLite. Ranking the AND of the
 * words instead makes ts_rank measure how close together they stand, comparing every position of one
 * word with every position of the others in each match: a third of a two-word search's time over
 * 10,000 notes (bench/search.ts). What is found is still the AND (tsqueryParams).
 */
export function tsqueryRankText(terms: SearchTerms): string {
  return terms.words.map((w, i) => (i === terms.words.length - 1 ? `'${w}':*` : `'${w}'`)).join(' | ')
}


/**
 * What a speaker said, as note_speakers.said keeps it for search by speaker: the words (as `q` is cut
 * into words), lower case, one space between them.
 */
export function saidText(text: string): string {
  return (text.normalize('NFC').toLowerCase().match(WORD) ?? []).join(' ')
}

/**
 * LIKE patterns over `' ' || said || ' '` (saidText), one per word: each word whole, the last also as
 * the start of a longer word, as in the full-text search. A word holds no `%` or `_`.
 */
export function saidPatterns(words: readonly string[]): string[] {
  return words.map((w, i) => (i === words.length - 1 ? `% ${w.normalize('NFC').toLowerCase()}%` : `% ${w.normalize('NFC').toLowerCase()} %`))
}
