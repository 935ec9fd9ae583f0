import { describe, expect, test } from 'bun:test'
import { indexPassages, retrievePassages, splitPassages } from '../../../src/engines/llm/retrieval'
import { splitSentences, stem, terms } from '../../../src/engines/llm/text'
import { LECTURE } from '../../fixtures/lecture'
import { longText } from '../../fixtures/long-text'

describe('retrieval', () => {
  test('passages are a few sentences, 300 to 600 characters, overlapping by one sentence, with exact offsets', () => {
    const text = longText().slice(0, 40_000)
    const passages = splitPassages(text)
    expect(passages.length).toBeGreaterThan(40)
    for (const [i, p] of passages.entries()) {
      // the passage is the text at its offset, up to white space
      const original = text.slice(p.offset, p.offset + p.text.length + 200).replace(/\s+/g, ' ')
      expect(original.startsWith(p.text)).toBe(true)
      if (i < passages.length - 1) expect(p.text.length).toBeGreaterThanOrEqual(250)
      expect(p.text.length).toBeLessThanOrEqual(700)
      const next = passages[i + 1]
      if (next) expect(next.first).toBeLessThanOrEqual(p.last + 1)
    }
    const overlapping = passages.filter((p, i) => passages[i + 1] && passages[i + 1]!.first === p.last).length
    expect(overlapping).toBeGreaterThan(passages.length / 2)
  })

  test('BM25 ranks the passage about the question first, with stemming and stop words', () => {
    const results = retrievePassages(LECTURE, 'Which enzyme catalyses the fixation of carbon?', 3)
    expect(results.length).toBeGreaterThan(0)
    expect(results[0]!.text).toContain('RuBisCO catalyses the first step of carbon fixation')
    for (let i = 1; i < results.length; i++) expect(results[i]!.score).toBeLessThanOrEqual(results[i - 1]!.score)
    // "opened" finds "open"; "exams" finds "exam"
    expect(retrievePassages(LECTURE, 'When are stomata opened?', 1)[0]!.text).toContain('open their stomata only at night')
    expect(retrievePassages(LECTURE, 'how long are the exams', 1)[0]!.text).toMatch(/exam/)
    // a question of stop words only, an unknown word or an empty text: nothing
    expect(retrievePassages(LECTURE, 'What is it that they were?')).toEqual([])
    expect(retrievePassages(LECTURE, 'xylophone')).toEqual([])
    expect(retrievePassages('', 'carbon')).toEqual([])
    expect(retrievePassages(LECTURE, 'carbon', 0)).toEqual([])
  })

  test('a rarer term counts for more than a common one, and phrases help', () => {
    const text = [
      'The blue truck is parked in the yard next to the gate.',
      'The truck in bay four is red and needs new tyres soon.',
      'The truck fleet grew by ten vehicles this year.',
      'Loading bays in the north building are closed for repairs.',
      'The loading of trucks starts at six, and the bays open at five.',
    ]
      .map((s, i) => `Speaker ${i + 1}: ${s}`)
      .join('\n')
    const idx = indexPassages(text, { targetChars: 10, maxChars: 80 })
    expect(idx.passages.length).toBe(5)
    expect(idx.search('Which truck is red?', 1)[0]!.text).toContain('red')
    expect(idx.search('Where are the loading bays closed?', 1)[0]!.text).toContain('Loading bays in the north building')
  })

  test('terms: lower case, no punctuation or stop words, light stemming', () => {
    expect(terms("The Drivers' opening hours, and 1,840 dollars!")).toEqual(['driver', 'open', 'hour', '1840', 'dollar'])
    expect(stem('planned')).toBe(stem('planning'))
    expect(stem('opens')).toBe(stem('opened'))
    expect(stem('companies')).toBe('company')
    expect(stem('status')).toBe('status')
  })

  test('sentences: abbreviations, initials and decimals do not end a sentence; labels are kept aside', () => {
    const s = splitSentences('Dr. Smith met J. R. Tolkien at 3.5 p.m. on Friday. It went well!\nTom: Great. See e.g. the notes.')
    expect(s.map(x => x.body)).toEqual(['Dr. Smith met J. R. Tolkien at 3.5 p.m. on Friday.', 'It went well!', 'Great.', 'See e.g. the notes.'])
    expect(s.map(x => x.speaker)).toEqual([null, null, 'Tom', 'Tom'])
    expect(s[2]!.text).toBe('Tom: Great.')
  })
})
