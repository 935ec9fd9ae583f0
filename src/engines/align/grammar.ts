/**
 * The grammar a forced alignment decodes against: exactly the text's spoken words in order. Silence
 * and fillers between words are optional: PocketSphinx's grammar search adds them itself
 * (`-fsgusefiller`, on by default), as it adds alternative pronunciations (`-fsgusealtpron`).
 *
 * Words the dictionary lacks (a run of them counts as one) become `_unknown`, a word added to the
 * dictionary whose one phone is the model's spoken noise (`+SPN+`): it keeps a place in the grammar
 * between the known neighbours, which are aligned as usual; the unknown words then take the sound
 * between those neighbours (pocketsphinx-aligner.ts). The library has no letter-to-sound rules to
 * guess a pronunciation, and a free phone loop in that place (tried first) cost 0.2–0.3× real time
 * and lost the grammar's end in its beam. Only dictionary spellings (letters, digits, `'.-`) and
 * `_unknown` reach the grammar, so no text can change its syntax.
 */
import type { SpokenToken, SpokenUnit } from './spoken-words'

/** The stand-in for unknown words: `_` is in no dictionary word, so it cannot be confused with a real one. */
export const UNKNOWN_WORD = '_unknown'
/** Its phone: the model's spoken noise, else silence for a model without one. */
export const UNKNOWN_PHONES = ['+SPN+', 'SIL'] as const

/** The JSGF grammar of the tokens' spoken units, or null when nothing in them is spoken. */
export function alignmentGrammar(tokens: SpokenToken[]): string | null {
  const units: SpokenUnit[] = tokens.flatMap(t => t.units)
  if (units.length === 0) return null
  const said: string[] = []
  for (const [i, u] of units.entries()) {
    if (u.kind === 'word') said.push(u.word)
    else if (units[i - 1]?.kind !== 'unknown') said.push(UNKNOWN_WORD)
  }
  return `#JSGF V1.0;\ngrammar alignment;\npublic <said> = ${said.join(' ')} ;\n`
}
