/**
 * The builtin LLM engine: offline, no model, deterministic. It makes notesvc useful on a machine with
 * no Ollama.
 *
 * Summaries are extractive: the summary, bullets and section points are sentences of the text itself,
 * chosen by a ranking that scales to long inputs (a 500,000-character transcript in well under two
 * seconds):
 *
 * 1. sentences are split (speaker labels such as "Maria:" kept aside) and turned into TF-IDF vectors
 *    over stemmed content terms;
 * 2. the text is cut into topic segments with TextTiling: the cosine similarity between the sentences
 *    before and after each gap (sliding blocks, so linear time); the gaps where the vocabulary changes
 *    most become section boundaries;
 * 3. every sentence gets a centrality score: cosine similarity to its segment's centroid and to the
 *    whole text's centroid, weighted for length (fragments and rambling sentences lose) and questions;
 * 4. only a bounded candidate set (the best 150 of the whole text, or 60 of a section) is ranked with
 *    TextRank (PageRank over sentence similarity), so the quadratic step never sees more than 150
 *    sentences whatever the length of the text;
 * 5. sentences are picked from the candidates by maximal marginal relevance (a good score, little
 *    overlap with what was already picked, here or in an earlier section), and shown in their
 *    original order, with hesitations ("um") and leading "so", "okay"… removed.
 *
 * Words that say little about a topic ("week", "start", "percent": GENERIC_TERMS) count for less, and
 * sentences with few content words ("let us get started") rank lower.
 *
 * Per style: `note` has the summary and one section per topic segment (heading: the segment's most
 * distinctive terms, two that occur side by side joined as a phrase; points: its best sentences);
 * `bulletpoints` has a few more sentences than the summary, and its `summary` is them as a Markdown
 * list; `transcript` keeps `input.segments` (start, end, trimmed text) and its `summary` is the whole
 * text; with no segments given the list is empty, since times cannot be made up. The title is the
 * best sentence when it has at most ten words, else the text's top keywords ("Image cache, crash and
 * launch").
 *
 * Meeting notes add attendees (speaker labels, "Maria said", "thanks, Tom", "Lars will"), decisions
 * (cue phrases such as "we decided", "agreed to", "the decision is") and action items ("action item:",
 * "todo", "Tom will", "I'll", "needs to"), with the owner and the due date when stated.
 *
 * A transcript cut into sentences from word times (`input.sentences`, ../sentences.ts) is titled by a
 * short summary sentence instead; one unpunctuated run that would be its own summary gets a plain
 * "No summary: …" instead (`noSummaryReason`).
 *
 * A transcript whose words carry the engine's confidence (PocketSphinx) is summarized from the
 * sentences heard clearly only (./doubt.ts): the summary, sections, bullets, title, decisions, action
 * items and owners come from them, the speakers' labels still name attendees, and the summary says
 * how many words were heard with low confidence (leading with it when most were). With no sentence
 * heard clearly the title is the recording's file name. Text without confidences, or all of whose
 * sentences were heard clearly, is summarized exactly as before.
 *
 * Answers are extractive too: from the passages retrieval found (see ../retrieval.ts), the sentences of
 * the best passage that contain the question's terms, with the next-best passage when it scores
 * almost as well; at most three sentences, with their times when the transcript's were given.
 *
 * Files: analysis.ts (sentences, vectors, segments, scores), ranking.ts (TextRank, the pick, keywords,
 * title), meeting-cues.ts (attendees, decisions, action items), doubt.ts (which sentences were heard
 * clearly), answering.ts; this file shapes the output of each style.
 */
import type { AnswerInput, AnswerOutput, LlmEngine, StyleId, SummaryInput, SummaryOutput } from '../engine'
import { analyze, type Analysis, type Unit } from './analysis'
import { answerQuestion } from './answering'
import { doubtNotice, doubtOf, mostlyUnreliable, type Doubt } from './doubt'
import { meetingNotes } from './meeting-cues'
import { hasSentencePunctuation } from '../sentences'
import { inOrder, joinKeywords, keywords, pick, spokenTitleOf, summaryCount, titleOf, UNTITLED } from './ranking'

export { cleanSentence } from './analysis'
export { NO_ANSWER } from './answering'
export type { ActionItem, MeetingNotes } from './meeting-cues'
export { UNTITLED } from './ranking'

/** Up to this many words, an unpunctuated text stands as its own summary, as a short sentence does. */
const SHORT_RUN_WORDS = 25

/**
 * Why no useful summary can be made, or null when one can: the text is one unpunctuated run of more
 * than 25 words, with no word times to cut it into sentences (`input.sentences`), and the summary
 * would be nearly all of it (at least 90 % of its length): the transcript returned as its own summary.
 * A long run still gives a summary of some of its pieces; an empty text an empty summary.
 */
function noSummaryReason(input: SummaryInput, summary: string): string | null {
  const text = (input.text ?? '').trim()
  if (input.sentences?.length || !text || hasSentencePunctuation(text)) return null
  const words = text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0
  if (words <= SHORT_RUN_WORDS || summary.length < 0.9 * text.length) return null
  return `No summary: the transcript is one run of ${words} words without punctuation or word times, so it cannot be cut into sentences to choose from. Read the transcript itself.`
}

function noSummary(input: SummaryInput, reason: string): SummaryOutput {
  const empty: Record<StyleId, Record<string, unknown>> = {
    note: { note: { summary: reason, sections: [] } },
    bulletpoints: { bulletpoints: { bullets: [] } },
    'meeting-notes': { 'meeting-notes': { summary: reason, attendees: [], decisions: [], actionItems: [] } },
    transcript: { transcript: { segments: [] } },
  }
  return { title: UNTITLED, summary: reason, structuredContent: empty[input.styleId] ?? empty.note }
}

function summarizeText(input: SummaryInput, signal?: AbortSignal, analysed?: Analysis): SummaryOutput {
  const style: StyleId = input.styleId
  const a = analysed ?? analyze(input.text ?? '')
  signal?.throwIfAborted()
  const units = a.units
  const n = units.length
  const m = a.segments.length
  const count = summaryCount(n)
  // the summary: the best sentences of the whole text, a few from each section at most
  const top = pick(units, count, {
    candidates: 150,
    perSegment: m > 1 ? Math.ceil(count / m) + 1 : undefined,
  })
  const summarySentences = inOrder(top).map(u => u.out)
  const summary = summarySentences.join(' ')
  const reason = style === 'transcript' ? null : noSummaryReason(input, summary)
  if (reason) return noSummary(input, reason)
  const title = input.sentences?.length ? spokenTitleOf(top) : titleOf(a, top[0])
  signal?.throwIfAborted()

  switch (style) {
    case 'transcript': {
      const segments = (input.segments ?? []).map(s => ({ start: s.start, end: s.end, text: s.text.trim() }))
      return { title, summary: (input.text ?? '').trim(), structuredContent: { transcript: { segments } } }
    }
    case 'bulletpoints': {
      const bulletCount = n <= 3 ? n : Math.min(n, count + 4, 14)
      const bullets = inOrder(
        pick(units, bulletCount, { candidates: 150, perSegment: m > 1 ? Math.ceil(bulletCount / m) + 1 : undefined }),
      ).map(u => u.out)
      return { title, summary: bullets.map(b => `- ${b}`).join('\n'), structuredContent: { bulletpoints: { bullets } } }
    }
    case 'meeting-notes': {
      const notes = meetingNotes(units)
      return { title, summary, structuredContent: { 'meeting-notes': { summary, ...notes } } }
    }
    default: {
      const used: Unit[] = []
      const sections = a.segments
        .map(([from, to], k) => {
          const pool = units.slice(from, to)
          const chosen = pick(pool, Math.max(1, Math.min(5, Math.ceil(pool.length / 5))), { candidates: 60, avoid: used })
          used.push(...chosen)
          const points = inOrder(chosen).map(u => u.out)
          const heading = joinKeywords(keywords(a, k, 3)) || (m > 1 ? `Part ${k + 1}` : 'Summary')
          return { heading, points }
        })
        .filter(s => s.points.length > 0)
      return { title, summary, structuredContent: { note: { summary, sections } } }
    }
  }
}

/** The recording's file name without its folder and extension ("planning-meeting.wav" → "planning-meeting"), or null. */
function fileTitle(fileName: string | undefined): string | null {
  const base = (fileName ?? '').split(/[/\\]/).pop()!.replace(/\.[^.]*$/, '').replace(/\s+/g, ' ').trim()
  return base || null
}

/** Below this many words a sentence ("We.", "Oh, right.") says nothing of its own. */
const FRAGMENT_WORDS = 3

/**
 * The sentences heard clearly as a text of their own, each turn's speaker label kept. Fragments are
 * left out: among a few clear sentences they would be picked for the summary and the title, though
 * they never were among many.
 */
function trustedText(units: readonly Unit[], trusted: readonly boolean[]): string {
  const lines: string[] = []
  let speaker: string | null = null
  for (const u of units) {
    if (!trusted[u.i] || u.words < FRAGMENT_WORDS) continue
    if (!lines.length || u.s.speaker !== speaker) {
      lines.push(u.s.speaker ? `${u.s.speaker}: ${u.s.body}` : u.s.body)
      speaker = u.s.speaker
    } else lines[lines.length - 1] += ` ${u.s.body}`
  }
  return lines.join('\n')
}

/**
 * A summary of a transcript some of whose sentences were heard unclearly: made from the others, with
 * the warning (./doubt.ts) leading the summary or closing it; the `transcript` style keeps every
 * segment and only takes its title from the clear sentences.
 */
function summarizeDoubted(input: SummaryInput, a: Analysis, doubt: Doubt, signal?: AbortSignal): SummaryOutput {
  const clear = trustedText(a.units, doubt.trusted)
  const base = clear ? summarizeText({ ...input, text: clear }, signal) : null
  // A mostly unreliable transcript is titled by its file name when it has one: its few clear sentences
  // were often clear only to the engine ("You too to on a Friday", bench/meeting.ts).
  const fromFile = fileTitle(input.fileName)
  const title = mostlyUnreliable(doubt) && fromFile ? fromFile : base && base.title !== UNTITLED ? base.title : (fromFile ?? UNTITLED)
  if (input.styleId === 'transcript') return { ...summarizeText(input, signal, a), title }
  const notice = doubtNotice(doubt)!
  const told = (text: string, sep = ' ') => (!text ? notice.text : notice.lead ? `${notice.text}${sep}${text}` : `${text}${sep}${notice.text}`)
  const said = (style: string) => (base?.structuredContent[style] ?? {}) as Record<string, unknown>
  switch (input.styleId) {
    case 'bulletpoints': {
      const bullets = (said('bulletpoints').bullets as string[] | undefined) ?? []
      return { title, summary: told(bullets.map(b => `- ${b}`).join('\n'), '\n\n'), structuredContent: { bulletpoints: { bullets } } }
    }
    case 'meeting-notes': {
      const summary = told((said('meeting-notes').summary as string | undefined) ?? '')
      return { title, summary, structuredContent: { 'meeting-notes': { summary, ...meetingNotes(a.units, doubt.trusted) } } }
    }
    default: {
      const summary = told((said('note').summary as string | undefined) ?? '')
      return { title, summary, structuredContent: { note: { summary, sections: said('note').sections ?? [] } } }
    }
  }
}

function summarizeHeard(input: SummaryInput, signal?: AbortSignal): SummaryOutput {
  const a = analyze(input.text ?? '')
  const doubt = doubtOf(input.text ?? '', input.segments, a.units)
  if (!doubt || doubt.withheld === 0) return summarizeText(input, signal, a)
  return summarizeDoubted(input, a, doubt, signal)
}

export function createBuiltinEngine(): LlmEngine {
  return {
    name: 'builtin',
    maxInputChars: Number.POSITIVE_INFINITY,
    async summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> {
      signal?.throwIfAborted()
      return summarizeHeard(input, signal)
    },
    async answer(input: AnswerInput, signal?: AbortSignal): Promise<AnswerOutput> {
      signal?.throwIfAborted()
      return answerQuestion(input)
    },
  }
}
