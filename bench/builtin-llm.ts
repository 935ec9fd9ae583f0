/**
 * The builtin LLM engine on a 500,000-character transcript (test/fixtures/long-text.ts: a year of
 * weekly operations meetings, generated deterministically, with a dozen facts said once each):
 *
 * - summarize in each style: median, min and max of RUNS runs (after one warm-up run), against the
 *   2-second target;
 * - retrieval alone: building the passage index, one search on a built index, and retrievePassages
 *   (index + search) as the service calls it for one question;
 * - answers to the factual questions: the hit rate (the answer contains the sentence with the fact),
 *   where the answering passage ranked, and the questions that failed.
 *
 * Run: bun run bench/builtin-llm.ts   (RUNS=5 by default; CHARS=500000 for the text length)
 * It reports and exits 0 whether or not the target holds; it exits 1 only when it could not measure.
 */
import { cpus } from 'node:os'
import { createBuiltinEngine } from '../src/engines/llm/builtin'
import type { StyleId } from '../src/engines/llm/engine'
import { indexPassages, retrievePassages } from '../src/engines/llm/retrieval'
import { LONG_TEXT_HARD_QUESTIONS, LONG_TEXT_QUESTIONS, longMeetingTranscript, type FactualQuestion } from '../test/fixtures/long-text'

const RUNS = Math.max(1, Number(process.env.RUNS ?? 5))
const CHARS = Math.max(1, Number(process.env.CHARS ?? 500_000))
const TARGET_MS = 2000
const STYLES: StyleId[] = ['note', 'bulletpoints', 'meeting-notes', 'transcript']

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`

async function timed(runs: number, fn: () => unknown | Promise<unknown>): Promise<number[]> {
  await fn() // warm-up
  const out: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await fn()
    out.push(performance.now() - t)
  }
  return out
}

const engine = createBuiltinEngine()
const text = longMeetingTranscript(CHARS)
console.log(
  `builtin LLM engine: ${text.length.toLocaleString('en-US')} characters, ${RUNS} runs each; ` +
    `${cpus()[0]?.model ?? 'unknown cpu'}, ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`,
)

// ---- summaries ----
console.log('\nsummarize (median / min / max):')
let slowest = 0
for (const style of STYLES) {
  let summary = ''
  const times = await timed(RUNS, async () => {
    summary = (await engine.summarize({ text, styleId: style })).title
  })
  const m = median(times)
  slowest = Math.max(slowest, m)
  console.log(
    `  ${style.padEnd(14)} ${ms(m).padStart(8)} ${ms(Math.min(...times)).padStart(8)} ${ms(Math.max(...times)).padStart(8)}   title: ${summary}`,
  )
}

// ---- retrieval ----
const questions: (FactualQuestion & { hard: boolean })[] = [
  ...LONG_TEXT_QUESTIONS.map(q => ({ ...q, hard: false })),
  ...LONG_TEXT_HARD_QUESTIONS.map(q => ({ ...q, hard: true })),
]
let index = indexPassages(text)
const buildTimes = await timed(RUNS, () => {
  index = indexPassages(text)
})
const searchTimes: number[] = []
for (let r = 0; r < RUNS; r++) {
  for (const q of questions) {
    const t = performance.now()
    index.search(q.question, 5)
    searchTimes.push(performance.now() - t)
  }
}
const oneShot = await timed(RUNS, () => retrievePassages(text, LONG_TEXT_QUESTIONS[0]!.question, 5))
console.log(`\nretrieval (${index.passages.length} passages):`)
console.log(`  build the index          ${ms(median(buildTimes)).padStart(8)}`)
console.log(`  one search (built index) ${ms(median(searchTimes)).padStart(8)}`)
console.log(`  retrievePassages         ${ms(median(oneShot)).padStart(8)}   (index + search, as for one question)`)

// ---- answers ----
console.log('\nanswers (rank: where the passage with the fact came in the top 5, - when absent):')
const hits = { plain: 0, hard: 0 }
const failed: string[] = []
for (const q of questions) {
  const passages = index.search(q.question, 5)
  const { answer } = await engine.answer({ question: q.question, passages })
  const hit = answer.includes(q.expect)
  const rank = passages.findIndex(p => p.text.includes(q.expect))
  if (hit) hits[q.hard ? 'hard' : 'plain']++
  else failed.push(q.question)
  console.log(`  ${hit ? 'hit ' : 'MISS'} rank ${rank < 0 ? '-' : rank + 1}  ${q.hard ? '(hard) ' : ''}${q.question}`)
}
const plainRate = hits.plain / LONG_TEXT_QUESTIONS.length
console.log(
  `\nhit rate: ${hits.plain}/${LONG_TEXT_QUESTIONS.length} (${(plainRate * 100).toFixed(0)}%) factual questions, ` +
    `${hits.hard}/${LONG_TEXT_HARD_QUESTIONS.length} harder ones`,
)
if (failed.length) console.log(`failed: ${failed.map(f => `"${f}"`).join(', ')}`)

// ---- the same without punctuation, line breaks or capitals (as some speech recognizers write) ----
const flat = text.replace(/[.,!?:;]/g, '').replace(/\s+/g, ' ').toLowerCase()
const flatIndex = indexPassages(flat)
let flatHits = 0
const flatFailed: string[] = []
for (const q of questions) {
  const { answer } = await engine.answer({ question: q.question, passages: flatIndex.search(q.question, 5) })
  if (answer.includes(q.expect.replace(/[.,!?:;]/g, '').toLowerCase())) flatHits++
  else flatFailed.push(q.question)
}
const flatTimes = await timed(RUNS, () => engine.summarize({ text: flat, styleId: 'note' }))
console.log(
  `\nwithout punctuation or capitals: ${flatHits}/${questions.length} answers hit; note summary ${ms(median(flatTimes))}` +
    (flatFailed.length ? `; failed: ${flatFailed.map(f => `"${f}"`).join(', ')}` : ''),
)
slowest = Math.max(slowest, median(flatTimes))

console.log(
  `\ntarget: summary of ${text.length.toLocaleString('en-US')} characters in under ${TARGET_MS / 1000} s, every style: ` +
    `${slowest < TARGET_MS ? 'HOLDS' : 'MISSED'} (slowest style, median: ${ms(slowest)})`,
)
