/**
 * The grammar a forced alignment decodes against: exactly the text's spoken words in order. Silence
 * and fillers between words are optional: PocketSphinx's grammar search adds them itself
 * (`-fsgusefiller`, on by default), as it adds alternative pronunciations (`-fsgusealtpron`).
 *
 * A word the dictionary lacks becomes `<unknown>`: one or more of the model's phones, each added to
 * the dictionary as a word of its own (`_phone_aa` …), so the decoder finds where the unknown word's
 * sounds are between its neighbours. The library has no letter-to-sound rules to guess a
 * pronunciation, and this keeps a name or a number aligned by what was heard rather than by its
 * spelling. Only dictionary spellings (letters, digits, `'.-`) and these phone words reach the
 * grammar, so no text can change its syntax.
 */
import type { SpokenToken, SpokenUnit } from './spoken-words'

/** The en-us model's phones (CMUdict's 39), silence aside. */
export const MODEL_PHONES = [
  'AA', 'AE', 'AH', 'AO', 'AW', 'AY', 'B', 'CH', 'D', 'DH', 'EH', 'ER', 'EY', 'F', 'G', 'HH', 'IH', 'IY', 'JH',
  'K', 'L', 'M', 'N', 'NG', 'OW', 'OY', 'P', 'R', 'S', 'SH', 'T', 'TH', 'UH', 'UW', 'V', 'W', 'Y', 'Z', 'ZH',
] as const

/** The phone's word: `_` is in no dictionary word, so these cannot be confused with a real one. */
export const phoneWord = (phone: string): string => `_phone_${phone.toLowerCase()}`
export const isPhoneWord = (word: string): boolean => word.startsWith('_phone_')

/** The JSGF grammar of the tokens' spoken units, or null when nothing in them is spoken. */
export function alignmentGrammar(tokens: SpokenToken[], phones: readonly string[]): string | null {
  const units: SpokenUnit[] = tokens.flatMap(t => t.units)
  if (units.length === 0) return null
  const said: string[] = []
  for (const [i, u] of units.entries()) {
    if (u.kind === 'word') said.push(u.word)
    // a run of unknown units is one stretch of phones (split among them by characters afterwards)
    else if (units[i - 1]?.kind !== 'unknown') said.push('<unknown>')
  }
  const lines = ['#JSGF V1.0;', 'grammar alignment;']
  if (said.includes('<unknown>')) lines.push(`<unknown> = ( ${phones.map(phoneWord).join(' | ')} )+ ;`)
  lines.push(`public <said> = ${said.join(' ')} ;`)
  return `${lines.join('\n')}\n`
}
