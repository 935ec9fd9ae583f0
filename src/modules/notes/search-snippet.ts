import type { SearchTerms } from './search-query'

/**
 * The snippet of a search result on the embedded store, made by this file from a bounded window of
 * each column's text rather than by FTS5's snippet(). snippet() scores a passage at every phrase
 * instance of the column, and each score reads every instance of the column again: a note repeating
 * a word n times costs n² (10,000 repeats 2.5 s, 20,000 12 s, 100,000 over a minute, all on the
 * request thread; issue 22). FTS5's highlight() is no way out: it appends to its result once per
 * match, copying all of the result so far each time.
 *
 * The repository finds in SQL where the anchor word (`anchorSpellings`) first occurs in each column
 * and reads at most WINDOW characters around it (SCAN from the start where it does not occur). Here
 * those windows are cut into words as FTS5's tokenizer does (unicode61 with remove_diacritics 2,
 * migration 9: runs of letters, digits and private-use characters, case folded, the accents of Latin
 * letters removed), the words the search matches are marked (each word of `q` as a whole word, the
 * last also as the start of one), and the passage is chosen as snippet() chose it. The work is
 * bounded by the windows, whatever the note holds.
 */

/** Characters read around the anchor word of each column, and how many of them before it. */
export const WINDOW = 400
export const BEFORE = 150
/**
 * Characters read from the start of a column where no spelling of the anchor word occurs (a word the
 * note spells with accents the search left out, `ecole` for `ÉCOLE`; another word of the search):
 * every word of them is checked here.
 */
export const SCAN = 10_000
/** Words in a snippet, as `snippet(…, 16)` had. */
const SNIPPET_WORDS = 16

/**
 * The combining marks FTS5's unicode61 keeps inside a word (sqlite3Fts5UnicodeIsdiacritic, and
 * removes with remove_diacritics); any other mark ends the word.
 */
const DIACRITIC = '\\u0300-\\u0304\\u0306-\\u030c\\u030f\\u0311\\u031b\\u0323-\\u0328\\u032d\\u032e\\u0330\\u0331'
const TOKEN = new RegExp(`[\\p{L}\\p{N}\\p{Co}](?:[\\p{L}\\p{N}\\p{Co}${DIACRITIC}])*`, 'gu')
const IS_DIACRITIC = new RegExp(`^[${DIACRITIC}]$`, 'u')
const LATIN_WITH_MARKS = /^[a-z]\p{M}+$/u

/**
 * One character as unicode61 folds it: case folded (Unicode's simple folding, so `ς` is `σ` and `ſ` is
 * `s`, but `ß` stays; outside the Basic Multilingual Plane only Deseret, as FTS5's table), a Latin
 * letter with accents to its ASCII letter, a diacritic to nothing.
 */
function foldChar(c: string): string {
  const cp = c.codePointAt(0)!
  if (cp < 128) return c.toLowerCase()
  if (IS_DIACRITIC.test(c)) return ''
  if (cp > 0xffff) return cp >= 0x10400 && cp < 0x10428 ? String.fromCodePoint(cp + 40) : c
  // JavaScript has no case folding: the lower case of the upper case, where that is one character
  // (but the dotless ı, whose upper case is I, folds to itself)
  const upper = c === 'ı' ? c : c.toUpperCase()
  const lower = upper.length === 1 ? upper.toLowerCase() : c.toLowerCase()
  const parts = lower.normalize('NFD')
  return LATIN_WITH_MARKS.test(parts) ? parts[0]! : lower
}

const ASCII = /^[\x00-\x7f]*$/
const SURROGATE = /[\ud800-\udfff]/
/** Characters other than ASCII as folded, remembered (a text uses few of them). */
const foldedChars = new Map<string, string>()
const foldCached = (c: string): string => {
  let f = foldedChars.get(c)
  if (f === undefined) {
    f = foldChar(c)
    if (foldedChars.size < 10_000) foldedChars.set(c, f)
  }
  return f
}
const fold = (text: string) => (ASCII.test(text) ? text.toLowerCase() : Array.from(text, foldCached).join(''))

interface Word {
  /** where the word starts and ends in the text (UTF-16 offsets) */
  start: number
  end: number
}

/** Whether a UTF-16 code unit is an ASCII letter or digit. */
const isAsciiWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57)

/** Where the words of `text` are, as unicode61 cuts it. */
function wordsOf(text: string): Word[] {
  const words: Word[] = []
  if (!ASCII.test(text)) {
    TOKEN.lastIndex = 0
    for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) words.push({ start: m.index, end: TOKEN.lastIndex })
    return words
  }
  // in ASCII text (most windows) a word is a run of letters and digits: the same cuts, read off the
  // code units with no match object made per word (half a search page's snippet time with a regular expression)
  const n = text.length
  for (let i = 0; i < n; i++) {
    if (!isAsciiWordChar(text.charCodeAt(i))) continue
    const start = i
    while (i + 1 < n && isAsciiWordChar(text.charCodeAt(i + 1))) i++
    words.push({ start, end: i + 1 })
  }
  return words
}

/** The words of `text` as unicode61 cuts and folds them. */
export function tokenize(text: string): (Word & { folded: string })[] {
  return wordsOf(text).map(w => ({ ...w, folded: fold(text.slice(w.start, w.end)) }))
}

/** SQLite's lower(): ASCII letters only. */
const lowerAscii = (s: string) => s.replace(/[A-Z]+/g, m => m.toLowerCase())

/**
 * The spellings of the anchor word (the longest word of the search, the likeliest to be rare) that
 * the repository looks for in SQLite's lower() of each column, which folds only ASCII letters: as
 * typed, in lower case, without accents, capitalized, in capitals, and decomposed. The first place
 * any of them occurs centres the column's window; where none occurs, the window is the column's
 * first SCAN characters. A place the index would not match (a word inside a longer one) gives a
 * window whose words are still marked only where they match, as this file checks every word of it.
 */
export function anchorSpellings(terms: SearchTerms): string[] {
  const word = terms.words.reduce((a, w) => (w.length > a.length ? w : a), '')
  const lower = word.toLowerCase()
  const [head = '', ...rest] = Array.from(lower)
  const capitalized = head.toUpperCase() + rest.join('')
  return [...new Set([word, lower, fold(word), capitalized, word.toUpperCase(), lower.normalize('NFD')].map(lowerAscii))]
}

/** A column's window as the repository read it. */
export interface SnippetWindow {
  /** at most `size` + 1 characters (code points) of the column, from `from`: one more when the column goes on */
  text: string
  /** where the window starts in the column, 1-based, in characters */
  from: number
  /** WINDOW around the anchor word, or SCAN from the start */
  size: number
}

interface Instance {
  phrase: number
  first: number
  last: number
}

interface Column {
  text: string
  tokens: Word[]
  instances: Instance[]
  /** whether the column has text before the window, and after it */
  cutStart: boolean
  cutEnd: boolean
}

/**
 * The window as whole words: a window that starts or ends inside the column loses the word it cuts
 * (perhaps only part of one), and a window one character longer than its size tells that the column
 * goes on after it.
 */
function columnOf(w: SnippetWindow, phrases: string[][], prefix: number): Column {
  // counted in characters (code points), as SQLite's substr() counts them
  const cutEnd = w.text.length > w.size && (!SURROGATE.test(w.text) || Array.from(w.text).length > w.size)
  const text = !cutEnd ? w.text : SURROGATE.test(w.text) ? Array.from(w.text).slice(0, w.size).join('') : w.text.slice(0, w.size)
  const cutStart = w.from > 1
  let tokens = wordsOf(text)
  if (cutStart && tokens[0]?.start === 0) tokens = tokens.slice(1)
  if (cutEnd && tokens.at(-1)?.end === text.length) tokens = tokens.slice(0, -1)
  return { text, tokens, instances: instancesOf(text, tokens, phrases, prefix), cutStart, cutEnd }
}

/**
 * Where each phrase matches, in word order: its words one after the other, the last word of the
 * phrase `prefix` (the search's last) also as the start of a word. Words are folded only when
 * compared, and in ASCII text (most windows) compared in place, with no folded copy made.
 */
function instancesOf(text: string, tokens: Word[], phrases: string[][], prefix: number): Instance[] {
  const ascii = ASCII.test(text)
  const folded: (string | undefined)[] = []
  const foldedAt = (i: number) => (folded[i] ??= fold(text.slice(tokens[i]!.start, tokens[i]!.end)))
  /** Whether word `i` is `word` (or starts with it): in ASCII text compared in place, letter by letter. */
  const matches = (i: number, word: string, isPrefix: boolean): boolean => {
    if (!ascii) return isPrefix ? foldedAt(i).startsWith(word) : foldedAt(i) === word
    const { start, end } = tokens[i]!
    if (isPrefix ? end - start < word.length : end - start !== word.length) return false
    for (let k = 0; k < word.length; k++) {
      const c = text.charCodeAt(start + k)
      if ((c >= 65 && c <= 90 ? c + 32 : c) !== word.charCodeAt(k)) return false
    }
    return true
  }
  const out: Instance[] = []
  for (let i = 0; i < tokens.length; i++) {
    for (let phrase = 0; phrase < phrases.length; phrase++) {
      const p = phrases[phrase]!
      if (p.length === 0 || i + p.length > tokens.length) continue
      let ok = true
      for (let j = 0; ok && j < p.length; j++) ok = matches(i + j, p[j]!, j === p.length - 1 && phrase === prefix)
      if (ok) out.push({ phrase, first: i, last: i + p.length - 1 })
    }
  }
  return out
}

/** The index of the first instance at or after word `token` (instances are in word order). */
function firstInstanceFrom(instances: Instance[], token: number): number {
  let lo = 0
  let hi = instances.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (instances[mid]!.first < token) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * snippet()'s score of the SNIPPET_WORDS words from `from`: 1000 for each phrase found, 1 for each
 * repeat. Only the instances among those words are read (snippet() read them all, for each one).
 */
function score(col: Column, from: number, phrases: number): { score: number; start: number } {
  const seen = new Array<boolean>(phrases).fill(false)
  let total = 0
  let first = -1
  let last = 0
  for (let i = firstInstanceFrom(col.instances, from); i < col.instances.length; i++) {
    const inst = col.instances[i]!
    if (inst.first >= from + SNIPPET_WORDS) break
    total += seen[inst.phrase] ? 1 : 1000
    seen[inst.phrase] = true
    if (first < 0) first = inst.first
    last = inst.last + 1
  }
  // centred on the matches, within the window's words
  let start = first - Math.trunc((SNIPPET_WORDS - (last - first)) / 2)
  if (start + SNIPPET_WORDS > col.tokens.length) start = col.tokens.length - SNIPPET_WORDS
  return { score: total, start: Math.max(0, start) }
}

/** What snippet() skips between a word and the `.` or `:` before it. */
const WHITESPACE = new Set([' ', '\t', '\n', '\r'].map(c => c.charCodeAt(0)))

/**
 * For each word, the last word at or before it that starts a sentence (the column's first, or one
 * after `.` or `:` and a space), or -1: snippet() prefers a passage from one.
 */
function sentenceStarts(col: Column): number[] {
  let last = -1
  return col.tokens.map((t, i) => {
    if (i === 0 && !col.cutStart) last = 0
    else {
      let k = t.start - 1
      while (k >= 0 && WHITESPACE.has(col.text.charCodeAt(k))) k--
      const c = k >= 0 ? col.text.charCodeAt(k) : 0
      if (k < t.start - 1 && (c === 46 || c === 58)) last = i // `.` or `:`
    }
    return last
  })
}

/** The text of words [start, end) of a column, each match between « and », with … where the column goes on. */
function render(col: Column, start: number, end: number): string {
  const { text, tokens } = col
  if (tokens.length === 0) return col.cutStart || col.cutEnd ? '…' : text
  const atStart = start === 0 && !col.cutStart
  let out = atStart ? '' : '…'
  let at = atStart ? 0 : tokens[start]!.start
  // matches that overlap are one marked passage, as FTS5 marks them
  const spans: [number, number][] = []
  for (const inst of col.instances) {
    if (inst.last < start || inst.first >= end) continue
    const first = Math.max(inst.first, start)
    const last = Math.min(inst.last, end - 1)
    const prev = spans.at(-1)
    if (prev && first <= prev[1]) prev[1] = Math.max(prev[1], last)
    else spans.push([first, last])
  }
  for (const [first, last] of spans) {
    out += `${text.slice(at, tokens[first]!.start)}«${text.slice(tokens[first]!.start, tokens[last]!.end)}»`
    at = tokens[last]!.end
  }
  out += text.slice(at, tokens[end - 1]!.end)
  return end === tokens.length && !col.cutEnd ? out + text.slice(tokens[end - 1]!.end) : `${out}…`
}

/**
 * The snippet of one result from the windows of its title, summary and transcript, in that order:
 * the passage of SNIPPET_WORDS words where the most different words of the search are, as FTS5's
 * snippet() scored it (1000 a word, 1 a repeat; a passage from the start of a sentence 100 more),
 * the earlier column and passage on a tie; every match between « and » (the note's own are ‹ and ›
 * in the index's copy of its text, which the windows are read from), … where the column goes on.
 * With no match in any window, the title's first words, as snippet() gave.
 */
export function snippetOf(windows: SnippetWindow[], terms: SearchTerms): string {
  const phrases = terms.words.map(w => tokenize(w).map(t => t.folded))
  const prefix = phrases.length - 1
  // a note made from text has the same summary and transcript: the second would only tie (and lose)
  const columns = windows.map((w, i) => (i > 0 && w.from === windows[i - 1]!.from && w.text === windows[i - 1]!.text ? null : columnOf(w, phrases, prefix)))
  let best = { score: 0, column: 0, start: 0 }
  columns.forEach((col, c) => {
    if (col === null) return
    const sentenceAt = col.instances.length > 0 && col.tokens.length > SNIPPET_WORDS ? sentenceStarts(col) : []
    for (const inst of col.instances) {
      const at = score(col, inst.first, phrases.length)
      if (at.score > best.score) best = { score: at.score, column: c, start: at.start }
      if (col.tokens.length > SNIPPET_WORDS) {
        const sentence = sentenceAt[inst.first]!
        if (sentence >= 0 && sentence < inst.first) {
          const bonus = sentence === 0 && !col.cutStart ? 120 : 100
          const from = score(col, sentence, phrases.length).score + bonus
          if (from > best.score) best = { score: from, column: c, start: sentence }
        }
      }
    }
  })
  const col = columns[best.column]!
  return render(col, best.start, Math.min(best.start + SNIPPET_WORDS, col.tokens.length))
}
