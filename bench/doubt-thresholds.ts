/**
 * How far PocketSphinx's word confidence can be trusted, measured on recordings whose words are known
 * (bench/lib/heard.ts): each recording recognized by the ASR adapter (createPocketsphinxEngine, as
 * the pipeline runs it), each heard word matched to the script by the word-level edit alignment, then
 *
 * 1. the confidence of words heard right and wrong (a histogram), and for each threshold p the share of
 *    wrong words below it and of right words below it;
 * 2. the transcript cut into sentences as the builtin summarizer cuts it (sentences from word times,
 *    src/engines/llm/sentences.ts, then its own analysis), each sentence's words below p against the
 *    share of its words heard right: a sentence is "good" when at least 80 % of its words are right,
 *    "bad" when fewer than half are;
 * 3. for rules "fewer than (or at most) a share s of the sentence's words below p", how many good and
 *    bad sentences each would trust, and how right the words of the trusted and the other sentences are.
 *
 * The rule chosen (src/engines/llm/builtin/doubt.ts) is the one marked.
 *
 *   bun run bench/doubt-thresholds.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TranscriptSegment } from '../src/engines/asr/engine'
import { createPocketsphinxEngine } from '../src/engines/asr/pocketsphinx'
import { analyze } from '../src/engines/llm/builtin/analysis'
import { heardSpans, LOW_CONFIDENCE, trusted } from '../src/engines/llm/builtin/doubt'
import { sentencesText, timedSentences } from '../src/engines/llm/sentences'
import { words as referenceWords } from '../test/helpers/wer'
import { heardRight, knownRecordings } from './lib/heard'

interface Scored { confidence: number; right: boolean }
interface SentenceScore { recording: string; text: string; words: number; right: number; confidences: number[] }

const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-doubt-'))
const engine = createPocketsphinxEngine()
const scored: Scored[] = []
const sentences: SentenceScore[] = []
try {
  const started = performance.now()
  console.log(`recording                        audio  words  heard right  low (<${LOW_CONFIDENCE})  sentences`)
  for (const rec of knownRecordings(dir)) {
    const { segments } = await engine.transcribeChunk(rec.samples, { language: 'en' })
    const heard = segments.flatMap(s => s.words ?? [])
    const right = heardRight(referenceWords(rec.reference), heard.map(w => w.word.toLowerCase()))
    heard.forEach((w, i) => scored.push({ confidence: w.confidence!, right: right[i]! }))
    const found = scoreSentences(rec.name, segments, right)
    sentences.push(...found)
    console.log(
      `${rec.name.padEnd(30)} ${(rec.samples.length / 16_000).toFixed(1).padStart(6)} s ${String(heard.length).padStart(6)} ${pct(right.filter(Boolean).length, heard.length).padStart(12)} ${pct(heard.filter(w => w.confidence! < LOW_CONFIDENCE).length, heard.length).padStart(11)} ${String(found.length).padStart(10)}`,
    )
  }
  console.log(`(recognized in ${((performance.now() - started) / 1000).toFixed(0)} s on ${navigator.hardwareConcurrency} cores)\n`)

  const rights = scored.filter(s => s.right)
  const wrongs = scored.filter(s => !s.right)
  console.log(`word confidence, ${rights.length} heard right and ${wrongs.length} heard wrong:`)
  console.log('confidence    right   wrong   right share')
  for (let b = 0; b < 10; b++) {
    const inBin = (s: Scored) => s.confidence >= b / 10 && (b === 9 ? s.confidence <= 1 : s.confidence < (b + 1) / 10)
    const r = rights.filter(inBin).length
    const w = wrongs.filter(inBin).length
    console.log(`${(b / 10).toFixed(1)}–${((b + 1) / 10).toFixed(1)}   ${String(r).padStart(7)} ${String(w).padStart(7)} ${pct(r, r + w).padStart(13)}`)
  }
  console.log('\nword below p:     wrong words below   right words below   right share at or above p')
  for (const p of [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) {
    const above = scored.filter(s => s.confidence >= p)
    console.log(`p = ${p.toFixed(1)}${p === LOW_CONFIDENCE ? ' (chosen)' : '         '} ${pct(wrongs.filter(s => s.confidence < p).length, wrongs.length).padStart(16)} ${pct(rights.filter(s => s.confidence < p).length, rights.length).padStart(19)} ${pct(above.filter(s => s.right).length, above.length).padStart(27)}`)
  }

  const good = sentences.filter(s => s.right >= 0.8 * s.words)
  const bad = sentences.filter(s => s.right < 0.5 * s.words)
  const rightWords = sentences.reduce((n, s) => n + s.right, 0)
  console.log(`\n${sentences.length} sentences: ${good.length} good (≥ 80 % of words right), ${bad.length} bad (< 50 % right), ${sentences.length - good.length - bad.length} between; ${rightWords} words right`)
  console.log('rule: trusted when words below p are …      trusted   good   bad   words right: trusted   others   right words kept')
  for (const p of [0.5, 0.6, 0.7, 0.8]) {
    for (const [share, strict] of [[1 / 3, false], [0.5, false], [0.5, true]] as const) {
      const rule = (s: SentenceScore) => {
        const low = s.confidences.filter(c => c < p).length
        return strict ? low < share * s.words : low <= share * s.words
      }
      const chosen = p === LOW_CONFIDENCE && share === 0.5 && strict ? ' (chosen)' : '         '
      const t = sentences.filter(rule)
      const o = sentences.filter(s => !rule(s))
      const accuracy = (xs: SentenceScore[]) => pct(xs.reduce((n, s) => n + s.right, 0), xs.reduce((n, s) => n + s.words, 0))
      const kept = t.reduce((n, s) => n + s.right, 0)
      console.log(
        `${`p = ${p.toFixed(1)}, ${strict ? 'fewer than' : 'at most'} ${share === 0.5 ? 'half' : 'a third'}`.padEnd(36)}${chosen} ${String(t.length).padStart(7)} ${String(good.filter(rule).length).padStart(6)} ${String(bad.filter(rule).length).padStart(5)} ${accuracy(t).padStart(22)} ${accuracy(o).padStart(14)} ${pct(kept, rightWords).padStart(18)}`,
      )
    }
  }
  console.log(`\nsentences (right words / words, words below ${LOW_CONFIDENCE}; T = trusted by the chosen rule):`)
  for (const s of sentences) {
    const low = s.confidences.filter(c => c < LOW_CONFIDENCE).length
    const t = trusted({ words: s.words, low }) ? 'T' : ' '
    console.log(`${t} ${`${s.right}/${s.words}`.padStart(5)}  ${String(low).padStart(3)} low  ${s.recording.slice(0, 14).padEnd(14)}  ${s.text.slice(0, 70)}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

function pct(n: number, of: number): string {
  return `${n} (${of ? ((100 * n) / of).toFixed(0) : '0'} %)`
}

/** The transcript's sentences as the builtin summarizer sees them, each with its words' confidences and how many were right. */
function scoreSentences(recording: string, segments: TranscriptSegment[], right: boolean[]): SentenceScore[] {
  const transcript = segments.map(s => s.text).join(' ')
  const timed = timedSentences(transcript, segments)
  const text = timed ? sentencesText(timed) : transcript
  const spans = heardSpans(text, segments)
  return analyze(text).units.flatMap(u => {
    const inside = spans.filter(s => s.start >= u.s.start && s.end <= u.s.end)
    if (!inside.length) return []
    return [{ recording, text: u.s.body, words: inside.length, right: inside.filter(s => right[s.index]).length, confidences: inside.map(s => s.confidence) }]
  })
}
