/**
 * Meeting notes from the cues in the text: attendees (speaker labels, "Maria said", "thanks, Tom",
 * "Lars will"), decisions (cue phrases such as "we decided", "agreed to", "the decision is") and action
 * items ("action item:", "todo", "Tom will", "I'll", "needs to"), with the owner and the due date when
 * stated.
 */
import { GENERIC_SPEAKER_RE, looksLikeName } from '../text'
import { cleanSentence, stripEnd, type Unit } from './analysis'

const DEPARTMENTS = new Set(
  'Marketing Sales Engineering Finance Legal Support Product Design Operations Ops HR IT QA Security Procurement Facilities Accounting Logistics'.split(' '),
)
const NAME = String.raw`\p{Lu}[\p{Ll}\p{M}'’-]+(?: \p{Lu}[\p{Ll}\p{M}'’-]+)?`
const SAID_RE = new RegExp(
  String.raw`(?:^|[^\p{L}])(?<!\p{Lu}[\p{L}'’-]* )(${NAME}) (?:said|says|asked|asks|mentioned|suggested|proposed|noted|added|explained|replied|reported|presented|pointed out|confirmed|volunteered|argued|wondered|joined|commented|answered|recommended)\b`,
  'gu',
)
const WEAK_NAME_RE = new RegExp(String.raw`(?:^|[^\p{L}])(?<!\p{Lu}[\p{L}'’-]* )(${NAME}) (?:will|'ll|’ll|agreed|is going to|needs to|has to|to \p{Ll}+)\b`, 'gu')
const VOCATIVE_RE = new RegExp(
  String.raw`(?:\b(?:thanks|thank you|cheers|hi|hello|over to you|welcome),? (${NAME})\b|^(${NAME}), (?:can|could|would|will|do|did|are|is|what|how|any|please)\b|\b(?:I'm|I am|my name is|this is) (${NAME})\b)`,
  'gu',
)
const LIST_RE = /^(?:attendees|present|participants|in attendance|attending)\s*:\s*(.+)$/i

const DECISION_RE =
  /\b(?:we(?:'ve|’ve| have)?|they|the (?:team|board|group|committee|client)|everyone|everybody|all of us|it was|it's been|it has been)\s+(?:all\s+|finally\s+|just\s+|unanimously\s+|now\s+)?(?:decided|agreed|resolved|voted|chose|settled|approved|signed off)\b|\bagreed (?:to|that|on)\b|\bthe (?:final )?decision (?:is|was|here is)\b|\bdecision\s*:|\bdecided (?:to|that|on|against)\b|\blet'?s go with\b|\bwe(?:'re|’re| are) going (?:to go )?with\b|\bwe(?:'ll|’ll| will) go with\b|\b(?:is|was|were|are|been|got) (?:approved|signed off)\b/i

const WEEKDAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday'
const MONTH = 'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec'
const DUE_PHRASE =
  `(?:the\\s+)?end of (?:the\\s+|this\\s+|next\\s+)?(?:day|week|month|quarter|year|sprint)|(?:this|next)\\s+(?:week|month|quarter|year|sprint|${WEEKDAY})|` +
  `tomorrow(?: morning| afternoon| evening)?|tonight|today|eod|eow|cob|${WEEKDAY}(?: morning| afternoon| evening)?|` +
  `(?:${MONTH})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?|(?:the\\s+)?\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTH})|the\\s+\\d{1,2}(?:st|nd|rd|th)|` +
  `(?:the\\s+)?next (?:meeting|call|review|standup|stand-up)|q[1-4]|week \\d{1,2}|\\d{4}-\\d{2}-\\d{2}|\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?`
const DUE_RE = new RegExp(`\\b(?:(?:by|before|until|till|due|no later than|on)\\s+(${DUE_PHRASE})|((?:the\\s+)?end of (?:the\\s+|this\\s+|next\\s+)?(?:day|week|month|quarter|year)|(?:this|next)\\s+(?:week|month|${WEEKDAY})|tomorrow|tonight|eod|eow))\\b`, 'i')

const COMMIT =
  String.raw`(?:will|'ll|’ll|shall|is going to|are going to|am going to|'m going to|’m going to|'re going to|’re going to|needs? to|has to|have to|must|agreed to|volunteered to|offered to|promised to|is responsible for|(?:will |can )?take care of|takes care of)`
const ACTION_LABEL_RE = /\b(?:action items?|action points?|to-?dos?|next steps?)\b\s*(?:for\s+(\p{Lu}[\p{Ll}\p{M}'’-]+(?: \p{Lu}[\p{Ll}\p{M}'’-]+)?))?\s*[:\-–—]\s*(.+)$/iu
const SUBJECT_RE = new RegExp(
  String.raw`(?:^|[,;:]\s+|\b(?:and|so|then|also|okay|ok|right|sure)\s+)(${NAME}|I|we|We)(?:\s+(?:also|then|just))?\s*(${COMMIT})\s+(.+)$`,
  'u',
)
const ASK_RE = new RegExp(String.raw`^(${NAME}),?\s+(?:can|could|would) you(?: please)?\s+(.+)$`, 'u')
const MINUTES_RE = new RegExp(String.raw`^(${NAME}) to (\p{Ll}+\b.*)$`, 'u')
const NOT_TASKS = new Set(['be', 'say', 'admit', 'guess', 'bet', 'see', 'probably', 'never', 'not', 'always', 'still', 'find', 'need', 'get', 'have'])

export interface ActionItem {
  task: string
  owner: string | null
  due: string | null
}

function splitDue(task: string): { task: string; due: string | null } {
  const m = DUE_RE.exec(task)
  if (!m) return { task, due: null }
  const phrase = (m[1] ?? m[2] ?? '').trim()
  const rest = (task.slice(0, m.index) + task.slice(m.index + m[0].length)).replace(/\s{2,}/g, ' ').replace(/\s+([,.!?])/g, '$1')
  return { task: rest, due: phrase || null }
}

function tidyTask(s: string): string {
  let t = stripEnd(s.trim()).replace(/^(?:please|also|then|just)\s+/i, '').replace(/[,;]\s*(?:please|okay|ok|right)$/i, '')
  t = stripEnd(t)
  return t.charAt(0).toUpperCase() + t.slice(1)
}

function firstWord(s: string): string {
  return (s.trim().split(/\s+/)[0] ?? '').toLowerCase().replace(/[^\p{L}]/gu, '')
}

const PLACE_PREPOSITIONS = new Set(['in', 'at', 'from', 'near', 'across', 'via', 'into', 'inside', 'outside', 'between', 'towards', 'toward', 'through', 'of'])

/**
 * Names of people in the text, in order of first appearance. When the text has speaker labels, the
 * attendees are the labelled speakers, the names of an "Attendees:" line and the people addressed
 * ("Tom, can you…", "thanks, Maria"): someone only spoken about ("Maria said") may well be absent.
 * Without labels, "Maria said"-style cues count too, and "Lars will…" when Lars is also written with a
 * capital in the middle of a sentence; words that mostly follow "in", "at", "from"… are places.
 * `known` holds every name found by any cue (owners of action items are checked against it).
 */
function findAttendees(units: Unit[], heard: (u: Unit) => boolean): { attendees: string[]; known: Set<string>; capitalizedMidSentence: Set<string> } {
  const labels = new Map<string, number>()
  const strong = new Map<string, number>()
  const reported = new Map<string, number>()
  const weak = new Map<string, number>()
  const capitalizedMidSentence = new Set<string>()
  const seen = new Map<string, number>()
  const afterPreposition = new Map<string, number>()
  // Words also written in lower case somewhere are ordinary words, capitalized only to start a sentence.
  const lowerWords = new Set<string>()
  const note = (m: Map<string, number>, name: string, at: number) => {
    if (looksLikeName(name) && !m.has(name)) m.set(name, at)
  }
  for (const u of units) {
    const body = u.s.body
    // a labelled speaker attended, named ("Maria") or not yet ("Speaker A", renamed later)
    if (u.s.speaker && (looksLikeName(u.s.speaker) || GENERIC_SPEAKER_RE.test(u.s.speaker)) && !labels.has(u.s.speaker)) labels.set(u.s.speaker, u.i)
    // a name heard unclearly may be a word misheard as one
    if (!heard(u)) continue
    const list = LIST_RE.exec(body)
    if (list) for (const p of list[1]!.split(/\s*(?:,|;|\band\b|&)\s*/)) note(strong, stripEnd(p.trim()), u.i)
    for (const m of body.matchAll(VOCATIVE_RE)) note(strong, (m[1] ?? m[2] ?? m[3])!, u.i)
    for (const m of body.matchAll(SAID_RE)) note(reported, m[1]!, u.i)
    for (const m of body.matchAll(WEAK_NAME_RE)) note(weak, m[1]!, u.i)
    for (const m of body.matchAll(/(?<![\p{L}])\p{Ll}[\p{Ll}\p{M}'’-]*/gu)) lowerWords.add(m[0])
    for (const m of body.matchAll(/\p{Lu}[\p{Ll}\p{M}'’-]+/gu)) {
      const word = m[0]
      seen.set(word, (seen.get(word) ?? 0) + 1)
      const before = /([\p{L}\p{N},;:]+)\s+$/u.exec(body.slice(Math.max(0, m.index - 16), m.index))?.[1]
      if (!before) continue
      if (/^[\p{Ll}\p{N}]/u.test(before) || /[,;:]$/.test(before)) capitalizedMidSentence.add(word)
      if (PLACE_PREPOSITIONS.has(before.toLowerCase())) afterPreposition.set(word, (afterPreposition.get(word) ?? 0) + 1)
    }
  }
  const place = (name: string) => {
    const first = name.split(' ')[0]!
    return (afterPreposition.get(first) ?? 0) >= 0.3 * (seen.get(first) ?? 1)
  }
  /** earliest first: a later sighting never moves a name down the list */
  const merged = (...maps: Map<string, number>[]) => {
    const out = new Map<string, number>()
    for (const m of maps) for (const [k, v] of m) out.set(k, Math.min(v, out.get(k) ?? v))
    return out
  }
  const known = merged(labels, strong)
  for (const [name, at] of [...reported, ...weak]) {
    if (known.has(name) || place(name)) continue
    const parts = name.split(' ')
    if (reported.has(name) || parts.some(p => capitalizedMidSentence.has(p)) || parts.every(p => !lowerWords.has(p.toLowerCase()))) known.set(name, at)
  }
  const labelled = labels.size >= 2
  const chosen = labelled ? merged(labels, strong) : known
  for (const name of [...chosen.keys()]) if (!labels.has(name) && place(name)) chosen.delete(name)
  // "Maria" and "Maria Lopez" are one person
  const names = [...chosen.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([n]) => n)
  const full = names.filter(n => n.includes(' '))
  const attendees = names.filter(n => n.includes(' ') || !full.some(f => f.startsWith(`${n} `))).slice(0, 50)
  return { attendees, known: new Set(known.keys()), capitalizedMidSentence }
}

function ownerOk(name: string, known: Set<string>, mid: Set<string>): boolean {
  if (DEPARTMENTS.has(name)) return true
  if (!looksLikeName(name)) return false
  return known.has(name) || name.split(' ').every(p => mid.has(p))
}

function actionOf(u: Unit, known: Set<string>, mid: Set<string>): ActionItem | null {
  const body = cleanSentence(u.s.body)
  const speakerOwner = u.s.speaker && (looksLikeName(u.s.speaker) || GENERIC_SPEAKER_RE.test(u.s.speaker)) ? u.s.speaker : null
  const labelled = ACTION_LABEL_RE.exec(body)
  if (labelled) {
    let owner: string | null = labelled[1] && ownerOk(labelled[1], known, mid) ? labelled[1] : null
    let rest = labelled[2]!
    const lead = new RegExp(String.raw`^(${NAME})(?:\s*[:,\-–—]\s*|\s+(?:to|will|should|needs? to|is going to|has to)\s+)(.+)$`, 'u').exec(rest)
    if (!owner && lead && ownerOk(lead[1]!, known, mid)) {
      owner = lead[1]!
      rest = lead[2]!
    }
    const { task, due } = splitDue(rest)
    const t = tidyTask(task)
    return t ? { task: t, owner, due } : null
  }
  const ask = ASK_RE.exec(body)
  if (ask && ownerOk(ask[1]!, known, mid) && !NOT_TASKS.has(firstWord(ask[2]!))) {
    const { task, due } = splitDue(ask[2]!.replace(/\?+$/, ''))
    const t = tidyTask(task)
    return t ? { task: t, owner: ask[1]!, due } : null
  }
  const minutes = MINUTES_RE.exec(body)
  if (minutes && ownerOk(minutes[1]!, known, mid)) {
    const { task, due } = splitDue(minutes[2]!)
    const t = tidyTask(task)
    return t ? { task: t, owner: minutes[1]!, due } : null
  }
  const sub = SUBJECT_RE.exec(body)
  if (sub) {
    const subject = sub[1]!
    const verb = sub[2]!.toLowerCase()
    const rest = sub[3]!
    if (NOT_TASKS.has(firstWord(rest)) || rest.trim().endsWith('?')) return null
    const { task, due } = splitDue(rest)
    let owner: string | null
    if (subject === 'I') owner = speakerOwner
    else if (subject === 'we' || subject === 'We') {
      // "we will…" is often just talk; keep it when it is an obligation or has a date
      if (!due && !/need|have to|must/.test(verb)) return null
      owner = null
    } else if (ownerOk(subject, known, mid)) owner = subject
    else return null
    const t = tidyTask(task)
    return t.split(/\s+/).length >= 2 ? { task: t, owner, due } : null
  }
  return null
}

/** Keep at most `max` items, the most central ones, in their original order. */
function capped<T>(items: { u: Unit; item: T }[], max: number): T[] {
  if (items.length <= max) return items.map(x => x.item)
  return [...items]
    .sort((a, b) => b.u.base - a.u.base || a.u.i - b.u.i)
    .slice(0, max)
    .sort((a, b) => a.u.i - b.u.i)
    .map(x => x.item)
}

export interface MeetingNotes {
  attendees: string[]
  decisions: string[]
  actionItems: ActionItem[]
}

const MAX_DECISIONS = 25
const MAX_ACTIONS = 30

/**
 * The meeting's attendees, decisions and action items. `trusted` (per unit, from ./doubt.ts) leaves out
 * sentences heard unclearly: no decision, action item, owner or name comes from them; the speakers'
 * labels (from diarization, not from the words) still name attendees.
 */
export function meetingNotes(units: Unit[], trusted?: readonly boolean[]): MeetingNotes {
  const heard = (u: Unit) => trusted?.[u.i] ?? true
  const { attendees, known, capitalizedMidSentence } = findAttendees(units, heard)
  const decisions: { u: Unit; item: string }[] = []
  const actions: { u: Unit; item: ActionItem }[] = []
  const seenD = new Set<string>()
  const seenA = new Set<string>()
  for (const u of units) {
    if (!heard(u)) continue
    const action = actionOf(u, known, capitalizedMidSentence)
    // "Tom, can you send the notes?" "Sure, I'll send them by tomorrow.": one task, with its date
    const previous = actions[actions.length - 1]
    if (action && previous && u.i - previous.u.i <= 3 && /^\p{L}+ (?:it|them|that|this|those|these)$/iu.test(action.task)) {
      const p = previous.item
      if (p.owner === null || action.owner === null || p.owner === action.owner) {
        p.owner ??= action.owner
        p.due ??= action.due
        continue
      }
    }
    if (action) {
      const key = `${action.task.toLowerCase()}|${action.owner ?? ''}`
      if (!seenA.has(key)) {
        seenA.add(key)
        actions.push({ u, item: action })
      }
      // "Tom agreed to send the report" is Tom's task, not a decision of the meeting
      if (action.owner) continue
    }
    if (DECISION_RE.test(u.s.body) && !u.s.body.trim().endsWith('?')) {
      const d = stripEnd(cleanSentence(u.s.body)) + '.'
      const key = d.toLowerCase()
      if (!seenD.has(key)) {
        seenD.add(key)
        decisions.push({ u, item: d })
      }
    }
  }
  return { attendees, decisions: capped(decisions, MAX_DECISIONS), actionItems: capped(actions, MAX_ACTIONS) }
}
