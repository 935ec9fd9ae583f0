import type { StyleId } from './engine'

/**
 * The JSON schemas handed to Ollama as `format` (structured outputs), one per summary style, plus
 * the one for answers, and a small validator for the subset of JSON Schema they use. Ollama turns
 * the schema into a grammar, so a well-behaved model can only produce conforming JSON; the
 * adapter validates again anyway, because a model or server can still send something else.
 *
 * Every schema starts with `refused`: a model that will not handle the content says so there
 * (the adapter turns it into LlmRefusalError, 422 content_policy) instead of writing an apology
 * into the summary.
 *
 * What the model writes maps onto DECISIONS.md "Structured content (keyed by style)":
 * - note:          {refused, title, summary, sections: [{heading, points: [string]}]}
 * - bulletpoints:  {refused, title, bullets: [string]}
 * - meeting-notes: {refused, title, summary, attendees, decisions, actionItems: [{task, owner|null, due|null}]}
 * - transcript:    {refused, title}: the segments come from the transcript itself, never the model
 * - answers:       {refused, found, answer}
 */
export type JsonSchema = {
  type?: JsonType | JsonType[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean
  items?: JsonSchema
  enum?: unknown[]
  anyOf?: JsonSchema[]
  description?: string
}

type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null'

const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) })
const strings = (description?: string): JsonSchema => ({ type: 'array', items: { type: 'string' }, ...(description ? { description } : {}) })
const nullableString = (description?: string): JsonSchema => ({ type: ['string', 'null'], ...(description ? { description } : {}) })
const refused: JsonSchema = { type: 'boolean', description: 'true only if you will not process this text' }

function object(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false }
}

export const STYLE_SCHEMAS: Record<StyleId, JsonSchema> = {
  note: object({
    refused,
    title: str('a short title, at most ten words'),
    summary: str('two to four sentences'),
    sections: {
      type: 'array',
      items: object({ heading: str(), points: strings() }),
    },
  }),
  bulletpoints: object({
    refused,
    title: str('a short title, at most ten words'),
    bullets: strings('the key points, one short sentence each'),
  }),
  'meeting-notes': object({
    refused,
    title: str('a short title, at most ten words'),
    summary: str('two to four sentences'),
    attendees: strings('names of the people present, as said in the text'),
    decisions: strings('what was decided'),
    actionItems: {
      type: 'array',
      items: object({
        task: str(),
        owner: nullableString('who does it, or null if the text does not say'),
        due: nullableString('when, as said in the text, or null'),
      }),
    },
  }),
  transcript: object({
    refused,
    title: str('a short title, at most ten words'),
  }),
}

export const ANSWER_SCHEMA: JsonSchema = object({
  refused,
  found: { type: 'boolean', description: 'true if the passages contain the answer' },
  answer: str(),
})

/** What the model returns for each style (after validation). */
export interface ModelNote { refused: boolean; title: string; summary: string; sections: { heading: string; points: string[] }[] }
export interface ModelBullets { refused: boolean; title: string; bullets: string[] }
export interface ModelMeeting {
  refused: boolean; title: string; summary: string; attendees: string[]; decisions: string[]
  actionItems: { task: string; owner: string | null; due: string | null }[]
}
export interface ModelTranscript { refused: boolean; title: string }
export interface ModelAnswer { refused: boolean; found: boolean; answer: string }

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value as JsonType
}

function typeMatches(expected: JsonType, actual: JsonType): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer')
}

/**
 * Checks `value` against `schema` (type, properties, required, additionalProperties, items, enum,
 * anyOf). Returns the problems found, each naming where it is (`$.sections[0].heading`); empty when
 * the value conforms.
 */
export function validateJson(schema: JsonSchema, value: unknown, path = '$'): string[] {
  const problems: string[] = []
  if (schema.anyOf) {
    if (!schema.anyOf.some(s => validateJson(s, value, path).length === 0)) problems.push(`${path}: matches none of the allowed shapes`)
    return problems
  }
  if (schema.enum && !schema.enum.some(v => v === value)) {
    problems.push(`${path}: must be one of ${schema.enum.map(v => JSON.stringify(v)).join(', ')}`)
  }
  if (schema.type) {
    const allowed = Array.isArray(schema.type) ? schema.type : [schema.type]
    const actual = typeOf(value)
    if (!allowed.some(t => typeMatches(t, actual))) {
      problems.push(`${path}: expected ${allowed.join(' or ')}, got ${actual}`)
      return problems
    }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    for (const key of schema.required ?? []) {
      if (!(key in record)) problems.push(`${path}.${key}: missing`)
    }
    for (const [key, v] of Object.entries(record)) {
      const sub = schema.properties?.[key]
      if (sub) problems.push(...validateJson(sub, v, `${path}.${key}`))
      else if (schema.additionalProperties === false) problems.push(`${path}.${key}: not allowed`)
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((v, i) => problems.push(...validateJson(schema.items!, v, `${path}[${i}]`)))
  }
  return problems
}
