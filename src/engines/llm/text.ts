/**
 * Sentence and word utilities shared by the builtin engine and passage retrieval: sentence splitting
 * with character offsets (and speaker labels such as "Maria:"), tokenizing into content terms
 * (lower-cased, punctuation stripped, English stop words dropped, lightly stemmed).
 *
 * Everything here is deterministic and linear in the length of the text.
 */

export interface Sentence {
  /** offsets of the sentence in the original text, label included: text.slice(start, end) */
  start: number
  end: number
  /** the sentence with runs of white space collapsed, speaker label included */
  text: string
  /** the sentence without a leading speaker label or timestamp */
  body: string
  /** the label of the speaker whose turn this sentence belongs to ("Maria", "Speaker 1"), or null */
  speaker: string | null
}

/** Abbreviations whose final period does not end a sentence (lower case, inner dots kept). */
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'etc', 'e.g', 'i.e', 'inc', 'ltd', 'co',
  'corp', 'no', 'nos', 'approx', 'dept', 'est', 'fig', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug',
  'sep', 'sept', 'oct', 'nov', 'dec', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'a.m', 'p.m',
  'u.s', 'u.k', 'gen', 'gov', 'rev', 'capt', 'col', 'lt', 'sgt', 'ave', 'blvd', 'rd', 'cf', 'al', 'ca',
])

/**
 * Capitalized words that are not names of people: pronouns, determiners, sentence openers, calendar
 * words, teams and meeting vocabulary. Used to tell speaker labels and names from ordinary words.
 */
const NOT_NAMES = new Set(
  (
    'I Im Ive Id Ill We You He She They It Its This That These Those There Here The A An And But So Or Nor Then Now ' +
    'Also Everyone Everybody Someone Somebody Nobody Noone Anyone Anybody All Both Each Either Neither None Nothing ' +
    'Something Anything Everything Well Yes Yeah Yep No Nope Okay OK Ok Oh Ah Um Uh Hmm Right Thanks Thank Sure ' +
    'Fine Great Good Cool Alright Hi Hello Hey Bye Morning Afternoon Evening Welcome Sorry Please Let Lets ' +
    'Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August ' +
    'September October November December Today Tomorrow Yesterday Tonight Next Last Our My Your His Her Their ' +
    'Who Whom Whose What When Where Why How Which If As At In On By For From With Without After Before During Into ' +
    'Of To Up Down Over Under About Above Below Since Until Unless Although Though Because While Whether Once ' +
    'Speaker Unknown Interviewer Interviewee Moderator Host Guest Audience Participant Narrator Chair Chairperson ' +
    'Team Teams Management Marketing Sales Engineering Finance Legal Support Product Design Operations Ops HR IT QA ' +
    'Security Procurement Logistics Research Accounting Facilities Leadership Board Committee Company Customer ' +
    'Customers Client Clients Staff Everyone Maybe Perhaps Actually Just Still Again Meanwhile However Finally First ' +
    'Second Third Fourth Fifth Another Other Others Some Many Much Most More Few Several Any Every Such Same ' +
    'Agenda Action Actions Decision Decisions Note Notes Item Items Todo TODO Update Updates Summary Question ' +
    'Questions Answer Answers Subject Re Topic Topics Attendees Present Apologies Absent Minutes Date Time Location ' +
    'Q1 Q2 Q3 Q4 Mr Mrs Ms Dr Prof Sir Madam God Lord Oops Wow Huh Anyway Basically Honestly Obviously Overall ' +
    'Otherwise Instead Besides Furthermore Moreover Therefore Thus Hence Yet Too Very Really Quite Only Even Not ' +
    'Do Does Did Is Are Was Were Be Been Have Has Had Can Could Will Would Shall Should May Might Must Need Needs ' +
    'Got Get Go Going Come Coming Make Take Keep Give Put Send Check Look See Say Said Tell Ask Think Know Want ' +
    'Follow Review Prepare Schedule Book Call Email Write Update Draft Plan Move Start Stop Finish Set Add Remove ' +
    'Fix Test Ship Launch Confirm Share Order Buy Pay Hire Run Meet Talk Discuss Decide Agree Agreed Decided ' +
    'Regarding Re Per Via Like Unlike Plus Minus Versus Whatever Whoever Whenever Wherever'
  ).split(/\s+/).map(w => w.toLowerCase()),
)

/** True when a capitalized word (or words) looks like a person's name rather than an ordinary word. */
export function looksLikeName(candidate: string): boolean {
  const parts = candidate.split(/\s+/)
  if (!parts.length || parts.length > 3) return false
  for (const p of parts) {
    if (!/^\p{Lu}[\p{Ll}\p{M}'’-]+$/u.test(p)) return false
    if (NOT_NAMES.has(p.toLowerCase().replace(/['’]/g, ''))) return false
  }
  return true
}

/** "[00:12:03] Maria Lopez: ..." / "Tom: ..." / "Speaker 1: ..." / "Speaker A: ..." at the start of a sentence or line. */
const LABEL_RE =
  /^(?:[[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?[\])]?\s*(?:-\s*)?)?(\p{Lu}[\p{L}\p{M}'’.-]*(?: \p{Lu}[\p{L}\p{M}'’.-]*){0,2}(?: \d{1,2})?|SPEAKER_?\d{1,2})\s?:\s+/u
const TIMESTAMP_RE = /^[[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?[\])]?\s*(?:-\s*)?/

/** A label diarization gives an unnamed speaker ("Speaker A", "Speaker 1", "SPEAKER_01"): a person, whose name is not known. */
export const GENERIC_SPEAKER_RE = /^(?:Speaker|SPEAKER)[ _]?(?:\d{1,2}|[A-Z]{1,2})$/

function labelOf(s: string): { speaker: string; length: number } | null {
  const m = LABEL_RE.exec(s)
  if (!m) return null
  const speaker = m[1]!
  if (GENERIC_SPEAKER_RE.test(speaker)) return { speaker: speaker.replace('_', ' '), length: m[0].length }
  if (!looksLikeName(speaker.replace(/ \d{1,2}$/, ''))) return null
  return { speaker, length: m[0].length }
}

/**
 * Where a sentence ends inside a line: a terminator (. ! ? …) followed by white space, or a CJK
 * full stop (。！？), which needs no space after it.
 */
const BOUNDARY_RE = /([.!?…]+|[。！？]+)(["'”’)\]」』]*)(\s*)/g

function isAbbreviation(line: string, from: number, dotAt: number): boolean {
  // the word right before the period
  let i = dotAt
  while (i > from && /[\p{L}.]/u.test(line[i - 1]!)) i--
  const word = line.slice(i, dotAt).toLowerCase()
  if (!word) return false
  if (ABBREVIATIONS.has(word)) return true
  // an initial ("J. Smith") or a dotted acronym ("U.S.")
  return /^\p{L}$/u.test(word) || /^(\p{L}\.)+\p{L}$/u.test(word)
}

/** Cut a long run of text without sentence punctuation (unpunctuated ASR output) into pieces. */
function cutLong(s: string, start: number, maxChars: number, out: [number, number][]): void {
  let from = 0
  while (s.length - from > maxChars) {
    const window = s.slice(from, from + maxChars)
    let cut = -1
    const clause = /[,;:–—]\s/g
    let m: RegExpExecArray | null
    while ((m = clause.exec(window))) if (m.index >= maxChars / 2) cut = m.index + 1
    if (cut < 0) {
      const sp = window.lastIndexOf(' ')
      cut = sp > maxChars / 4 ? sp : maxChars
    }
    out.push([start + from, start + from + cut])
    from += cut
    while (from < s.length && /\s/.test(s[from]!)) from++
  }
  if (from < s.length) out.push([start + from, start + s.length])
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim()

/**
 * Split a text into sentences, with offsets into the original. Lines are sentence boundaries; a
 * speaker label ("Tom:") at the start of a line or sentence starts that speaker's turn, which lasts
 * until the next label or a blank line. A sentence longer than `maxChars` (text without
 * punctuation) is cut at a clause or word boundary.
 */
export function splitSentences(text: string, maxChars = 400): Sentence[] {
  const out: Sentence[] = []
  let speaker: string | null = null
  const lineRe = /[^\n]*(?:\n|$)/g
  let lm: RegExpExecArray | null
  while ((lm = lineRe.exec(text)) && lm[0].length > 0) {
    const lineStart = lm.index
    const line = lm[0].replace(/\n$/, '')
    if (!line.trim()) {
      speaker = null
      continue
    }
    // sentence spans inside the line
    const spans: [number, number][] = []
    let from = 0
    BOUNDARY_RE.lastIndex = 0
    let bm: RegExpExecArray | null
    while ((bm = BOUNDARY_RE.exec(line))) {
      const end = bm.index + bm[1]!.length + bm[2]!.length
      const cjk = /^[。！？]/.test(bm[1]!)
      if (!cjk && !bm[3]) continue
      const next = line[end + bm[3]!.length]
      if (next === undefined) continue
      if (/\p{Ll}/u.test(next)) continue
      if (bm[1] === '.' && isAbbreviation(line, from, bm.index)) continue
      spans.push([from, end])
      from = end + bm[3]!.length
    }
    if (from < line.length) spans.push([from, line.length])
    for (const [a0, b] of spans) {
      let a = a0
      while (a < b && /\s/.test(line[a]!)) a++
      if (a >= b) continue
      let raw = line.slice(a, b)
      let bodyFrom = 0
      const label = labelOf(raw)
      if (label) {
        speaker = label.speaker
        bodyFrom = label.length
      } else {
        const ts = TIMESTAMP_RE.exec(raw)
        if (ts && /^[[(]?\d/.test(raw)) bodyFrom = ts[0].length
      }
      raw = raw.slice(bodyFrom)
      if (!/[\p{L}\p{N}]/u.test(raw)) continue
      const pieces: [number, number][] = []
      if (raw.length > maxChars) cutLong(raw, 0, maxChars, pieces)
      else pieces.push([0, raw.length])
      pieces.forEach(([pa, pb], i) => {
        const start = lineStart + a + (i === 0 ? 0 : bodyFrom + pa)
        const end = lineStart + a + bodyFrom + pb
        const body = collapse(raw.slice(pa, pb))
        if (!body) return
        out.push({ start, end, text: collapse(text.slice(start, end)), body, speaker })
      })
    }
  }
  return out
}

/** Common English words that carry no topic: dropped from terms, for retrieval and ranking alike. */
const STOP_WORDS = new Set(
  (
    'a about above after again against all almost also am an and any are aren around as at be because been ' +
    'before being below between both but by can cannot could couldn did didn do does doesn doing don done down ' +
    'during each either else even ever every few for from further get gets getting got had hadn has hasn have ' +
    'haven having he her here hers herself him himself his how however i if in into is isn it its itself just ' +
    'least less let lets like ll made make makes many may me might mine more most much must mustn my myself ' +
    'need neither no nor not now of off often on once one only or other others otherwise our ours ourselves out ' +
    'over own quite rather re really s said same say says shall shan she should shouldn since so some still such ' +
    't than that the their theirs them themselves then there these they this those though through thus to too ' +
    'under until up upon us ve very was wasn we well were weren what whatever when whenever where whether which ' +
    'while who whoever whom whose why will with within without won would wouldn yes yet you your yours yourself ' +
    'yourselves d m o y ain ma um uh uhm erm hmm mm oh ah okay ok yeah yep nope right sure gonna wanna gotta ' +
    'kind sort actually basically literally probably maybe perhaps thing things stuff lot lots bit way ' +
    'think thought know knew mean means going go goes went come comes came want wants wanted tell told ask asked ' +
    'please thanks thank good great fine hi hello hey also already anyway everyone anybody anyone someone ' +
    'something anything everything nothing another again whats thats theres heres lets im ive id youre theyre ' +
    'were weve dont doesnt didnt isnt arent wasnt cant wont wouldnt shouldnt couldnt'
  ).split(/\s+/),
)

/** Lower-cased words and numbers of a text, in order ("1,840" → "1840", "3.5" stays). */
const WORD_RE = /[\p{L}\p{M}\p{N}]+(?:[.,]\p{N}+)*/gu

export function words(text: string): string[] {
  const out: string[] = []
  const lower = text.toLowerCase()
  for (const m of lower.matchAll(WORD_RE)) {
    let w = m[0]
    if (w.includes(',')) w = w.replace(/,/g, '')
    out.push(w)
  }
  return out
}

const VOWEL = /[aeiouy]/
const stemCache = new Map<string, string>()

/**
 * A light suffix stripper (plural -s/-es/-ies, -ing, -ed, -ly, a final -e), enough to match "opens",
 * "opened" and "opening" with "open". Numbers and short words are kept as they are.
 */
export function stem(word: string): string {
  const hit = stemCache.get(word)
  if (hit !== undefined) return hit
  let s = word
  if (s.length > 3 && !/\d/.test(s) && /^[a-z]+$/.test(s)) {
    if (s.endsWith('ies') && s.length > 4) s = `${s.slice(0, -3)}y`
    else if (s.endsWith('sses')) s = s.slice(0, -2)
    else if (s.endsWith('s') && !/(ss|us|is)$/.test(s)) s = s.slice(0, -1)
    let stripped = false
    if (s.endsWith('ing') && s.length > 5 && VOWEL.test(s.slice(0, -3))) {
      s = s.slice(0, -3)
      stripped = true
    } else if (s.endsWith('ed') && s.length > 4 && VOWEL.test(s.slice(0, -2))) {
      s = s.slice(0, -2)
      stripped = true
    } else if (s.endsWith('ly') && s.length > 5) s = s.slice(0, -2)
    if (stripped && /([b-df-hj-km-npqrtv-xz])\1$/.test(s)) s = s.slice(0, -1)
    if (s.endsWith('e') && s.length > 3) s = s.slice(0, -1)
  }
  if (stemCache.size < 200_000) stemCache.set(word, s)
  return s
}

/** True for a word that carries meaning: not a stop word, not a lone letter. */
export function isContentWord(w: string): boolean {
  return !STOP_WORDS.has(w) && (w.length > 1 || /\d/.test(w))
}

/** The content terms of a text: lower-cased words, stop words dropped, stemmed. */
export function terms(text: string): string[] {
  const out: string[] = []
  for (const w of words(text)) if (isContentWord(w)) out.push(stem(w))
  return out
}

/**
 * Words that are not stop words but say little about what a text is about (time words, generic nouns
 * and verbs of talk, number words). Ranking gives them a fraction of their weight; retrieval keeps
 * them as they are.
 */
export const GENERIC_TERMS = new Set(
  (
    'time times day days week weeks month months year years today tomorrow yesterday tonight morning afternoon ' +
    'evening night next last first second third start started starting begin end ended new old big small high ' +
    'low little long short better best worse number numbers part parts point points people person team teams ' +
    'work working worked look looking looked update updates question questions idea ideas case cases fact problem ' +
    'problems issue issues place use used using call called meeting meetings keep kept put take taking took give ' +
    'gave help find found show try tried move moved line side level item items different able enough whole half ' +
    'moment minute minutes hour hours clock one two three four five six seven eight nine ten hundred thousand ' +
    'percent lot today back around maybe talk talked talking said saying discuss discussed thing stuff everyone ' +
    'guys folks feel felt seem seems seemed yeah okay ok agree agreed agrees decide decided decision want need ' +
    'sure thanks hope glad happy action todo send check ask let'
  )
    .split(/\s+/)
    .map(stem),
)
