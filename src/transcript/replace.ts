/**
 * Find and replace in a transcript, as pure functions: what a replacement would change (the preview)
 * and the texts it makes. Matching is Unicode-aware: the text and `find` are compared in NFC (a
 * composed "é" matches a decomposed one), case-insensitively by Unicode simple case folding unless
 * `matchCase`, and with `wholeWord` a match may not have a letter, digit or mark of a word on either
 * side ("in" does not match "within"). `replace` is inserted as written (no `$1` patterns). A match lies
 * within one segment (a timed transcript) or one paragraph (an untimed one), never across two.
 */
import { PARAGRAPH_BREAK } from './transcript'

export interface ReplaceOptions {
  find: string
  replace: string
  matchCase: boolean
  wholeWord: boolean
}

/** One segment (or paragraph) a replacement changes: its text before and after, and how many matches it holds. */
export interface SegmentReplacement {
  segment: number
  before: string
  after: string
  count: number
}

/** A character that continues a word: letters, combining marks, digits, and the connector (underscore). */
const WORD_CHAR = '[\\p{L}\\p{M}\\p{N}\\p{Pc}]'

function pattern(o: ReplaceOptions): RegExp {
  // the syntax characters only: with the u flag any other escaped character ("\\-") is an error
  const escaped = o.find.normalize('NFC').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const body = o.wholeWord ? `(?<!${WORD_CHAR})${escaped}(?!${WORD_CHAR})` : escaped
  return new RegExp(body, o.matchCase ? 'gu' : 'giu')
}

/** `text` (in NFC) with every match replaced, and how many there were. */
function replaced(text: string, re: RegExp, replacement: string): { text: string; count: number } {
  let count = 0
  const out = text.normalize('NFC').replace(re, () => {
    count++
    return replacement
  })
  return { text: out, count }
}

/**
 * What replacing in these segment texts changes, in order: each segment with at least one match, its
 * text after (spaces a removed word leaves collapsed to one, the ends trimmed). `only`: consider those
 * segments alone.
 */
export function segmentReplacements(texts: readonly string[], o: ReplaceOptions, only?: ReadonlySet<number>): SegmentReplacement[] {
  const re = pattern(o)
  const replacement = o.replace.normalize('NFC')
  const out: SegmentReplacement[] = []
  texts.forEach((before, segment) => {
    if (only && !only.has(segment)) return
    const r = replaced(before, re, replacement)
    if (r.count) out.push({ segment, before, after: r.text.replace(/\s+/g, ' ').trim(), count: r.count })
  })
  return out
}

/**
 * Replacing in an untimed transcript (a note created from text): its paragraphs numbered as
 * verbose_json numbers them (blocks between blank lines, empty ones skipped), each replaced where it
 * stands so the rest of the text (its blank lines, its markdown) is kept byte for byte. Returns the
 * new text and each paragraph changed (trimmed, as verbose_json shows it).
 */
export function paragraphReplacements(text: string, o: ReplaceOptions, only?: ReadonlySet<number>): { text: string; changes: SegmentReplacement[] } {
  const re = pattern(o)
  const replacement = o.replace.normalize('NFC')
  const parts = text.split(new RegExp(`(${PARAGRAPH_BREAK.source})`))
  const changes: SegmentReplacement[] = []
  let paragraph = 0
  // even places hold the paragraphs, odd ones the breaks between them (the split's captured group)
  for (let i = 0; i < parts.length; i += 2) {
    const part = parts[i]!
    if (part.trim() === '') continue
    const segment = paragraph++
    if (only && !only.has(segment)) continue
    const r = replaced(part, re, replacement)
    if (!r.count) continue
    changes.push({ segment, before: part.trim(), after: r.text.trim(), count: r.count })
    parts[i] = r.text
  }
  return { text: parts.join(''), changes }
}
