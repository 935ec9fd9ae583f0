/**
 * A segment's text as the words someone said: each whitespace-separated token of the text (kept as
 * typed, punctuation and case included, so the aligned words are the text's own), and what of it is
 * spoken, as the dictionary spells it: lower case, curly apostrophes straight, accents dropped;
 * "well-known" is one dictionary word, "twenty-three" two. A token with no letter or digit ("—", "&")
 * is not spoken. Which spelling the dictionary knows is asked through `known`, so this needs no engine.
 */

export type SpokenUnit =
  /** a word the dictionary knows, spelled as it does */
  | { kind: 'word'; word: string }
  /** something the dictionary does not know (a name, a number, another language); `chars` weighs it against its neighbours */
  | { kind: 'unknown'; chars: number }

export interface SpokenToken {
  /** the token as written in the text */
  text: string
  /** what is said, in order; empty for a token nobody says */
  units: SpokenUnit[]
}

/** Characters a grammar token may hold: the dictionary's own (letters, digits, apostrophe, dot, hyphen). */
const DICTIONARY_SPELLING = /^[a-z0-9'.-]+$/
/** A spoken piece of a token: letters and digits, joined by apostrophes, dots or hyphens. */
const SPOKEN_PIECE = /[\p{L}\p{N}]+(?:['.\-][\p{L}\p{N}]+)*\.?/gu

function normalized(token: string): string {
  return token
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u2010\u2011\u2012\u2013]/g, '-')
    .toLowerCase()
}

/**
 * The dictionary spellings to try for one piece: an abbreviation with its dots first ("u.s.", "a.m."),
 * else the word without the sentence's full stop ("end." is "end", not the letter "a." for "a.").
 */
function spellings(piece: string): string[] {
  const bare = piece.replace(/\.$/, '')
  const out = bare.includes('.') ? [piece, bare, bare.replace(/\./g, '')] : [bare]
  return out.filter(s => DICTIONARY_SPELLING.test(s) && /[a-z0-9]/.test(s))
}

function piecesUnits(piece: string, known: (word: string) => boolean): SpokenUnit[] {
  const found = spellings(piece).find(known)
  if (found) return [{ kind: 'word', word: found }]
  if (piece.includes('-')) {
    // a compound the dictionary lacks: its parts, each known or not
    return piece.split('-').filter(p => p !== '').flatMap(p => piecesUnits(p, known))
  }
  return [{ kind: 'unknown', chars: piece.replace(/[^\p{L}\p{N}]/gu, '').length }]
}

/** The text's tokens and what of each is spoken; `known` says whether the dictionary has a spelling. */
export function spokenTokens(text: string, known: (word: string) => boolean): SpokenToken[] {
  return text
    .split(/\s+/)
    .filter(t => t !== '')
    .map(t => ({ text: t, units: (normalized(t).match(SPOKEN_PIECE) ?? []).flatMap(p => piecesUnits(p, known)) }))
}
