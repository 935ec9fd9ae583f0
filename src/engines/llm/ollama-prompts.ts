/**
 * What the Ollama adapter says to the model and how it reads the reply: the system prompt of each
 * style and of answers, the numbered passages of a question, the parsing and validation of a reply
 * (a refusal told apart from malformed output), and the tidying of the text fields it returns.
 */
import type { Passage, StyleId } from './engine'
import { validateJson, type JsonSchema } from './style-schemas'

const STYLE_INSTRUCTIONS: Record<StyleId, string> = {
  note:
    'Write notes of the text the user sends: a short title (at most ten words), a summary of two to four ' +
    'sentences, and two to six sections, each with a heading and two to six short points.',
  bulletpoints:
    'Write a short title (at most ten words) and the key points of the text the user sends as three to twelve ' +
    'bullets, one short sentence each, in the order they come up.',
  'meeting-notes':
    'The user sends the transcript or notes of a meeting. Write a short title (at most ten words), a summary ' +
    'of two to four sentences, the attendees (names of people present as the text gives them; an empty list ' +
    'if it names nobody), the decisions taken, and the action items: the task, its owner and its due date ' +
    'exactly as the text says them, or null when the text does not say.',
  transcript:
    'The user sends a transcript. Write only a short title for it (at most ten words).',
}

function languageLine(language: string | null | undefined): string {
  return language ? `Write in the language with ISO 639-1 code "${language}".` : 'Write in the language of the text.'
}

export function summarySystemPrompt(styleId: StyleId, language?: string | null): string {
  return [
    'You summarize recordings and documents for a note-taking service.',
    STYLE_INSTRUCTIONS[styleId],
    'Use only what the text says; do not invent names, dates or facts.',
    languageLine(language),
    'Reply with JSON that matches the given schema. Set "refused" to false. Only if you will not process ' +
      'this text at all, set "refused" to true and leave every other field empty.',
  ].join('\n')
}

export function answerSystemPrompt(language?: string | null): string {
  return [
    'You answer questions about a recording using only the numbered passages from its transcript that the user sends.',
    'Do not use any other knowledge. If the passages do not contain the answer, set "found" to false and say in ' +
      'one sentence that the transcript does not say; otherwise set "found" to true and answer in one to three sentences.',
    languageLine(language),
    'Reply with JSON that matches the given schema. Set "refused" to false unless you will not answer at all.',
  ].join('\n')
}

/** The user message for a question: the passages, numbered, then the question. */
export function answerUserMessage(question: string, passages: Passage[]): string {
  const blocks = passages.map((p, i) => `[${i + 1}] ${p.text.trim()}`)
  return `Passages from the transcript:\n\n${blocks.join('\n\n')}\n\nQuestion: ${question.trim()}`
}

const REFUSAL_PATTERNS = [
  /^(?:i'?m|i am)\s+(?:sorry|afraid)\b[^.!?]{0,40}?\b(?:can(?:'|’)?t|cannot|can not|won(?:'|’)t|will not|unable|not able)\b/i,
  /^(?:as an ai[^,.]{0,40},\s*)?i\s+(?:can(?:'|’)?t|cannot|can not|won(?:'|’)t|will not|must decline|am (?:not able|unable|not allowed|not permitted))\s+(?:to\s+)?(?:help|assist|comply|provide|summari[sz]e|process|fulfil|respond|engage|create|write|answer|generate|do\s+that|with\s+(?:that|this))/i,
  /^i(?:'|’)?m (?:not able|unable) to (?:help|assist|comply|provide|summari[sz]e|process|fulfil|respond|engage|answer)/i,
]

/** Whether a text reads as a model declining the request ("I'm sorry, but I can't help with that."). */
export function looksLikeRefusal(text: string): boolean {
  const head = text.trim().replace(/^["'“]+/, '').slice(0, 200)
  return REFUSAL_PATTERNS.some(p => p.test(head))
}

export function clean(s: string): string {
  return s.replace(/\s+/g, ' ').trim()
}

export function cleanList(list: string[]): string[] {
  return list.map(clean).filter(Boolean)
}

export function cleanTitle(title: string, fallbackText: string): string {
  let t = clean(title).replace(/^["'“”#*\s]+|["'“”*\s]+$/g, '').replace(/[.]+$/, '')
  if (!t) {
    const words = clean(fallbackText).split(' ').slice(0, 10).join(' ').replace(/[.!?,;:]+$/, '')
    t = words || 'Untitled recording'
  }
  return t.length > 120 ? `${t.slice(0, 119).trimEnd()}…` : t
}

type Parsed<T> = { ok: true; value: T } | { ok: false; refusal: true; text: string } | { ok: false; refusal: false; problem: string }

/** Parses and validates the model's reply; tells a refusal apart from malformed output. */
export function parseModelReply<T>(content: string | undefined, schema: JsonSchema, textFields: string[]): Parsed<T> {
  const raw = (content ?? '').trim()
  if (!raw) return { ok: false, refusal: false, problem: 'the reply was empty' }
  const unfenced = raw.replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '')
  let value: unknown
  try {
    value = JSON.parse(unfenced)
  } catch {
    if (looksLikeRefusal(raw)) return { ok: false, refusal: true, text: raw.slice(0, 300) }
    return { ok: false, refusal: false, problem: `the reply is not JSON (starts with ${JSON.stringify(raw.slice(0, 60))})` }
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    if (record.refused === true) return { ok: false, refusal: true, text: 'the model set "refused"' }
    for (const field of textFields) {
      const v = record[field]
      if (typeof v === 'string' && looksLikeRefusal(v)) return { ok: false, refusal: true, text: v.slice(0, 300) }
    }
  }
  const problems = validateJson(schema, value)
  if (problems.length) return { ok: false, refusal: false, problem: `the reply does not match the schema (${problems.slice(0, 3).join('; ')})` }
  return { ok: true, value: value as T }
}
