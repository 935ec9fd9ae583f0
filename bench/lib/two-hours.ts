/**
 * The two-hour transcript of the editing benchmarks (issue 31): BENCH_WORDS words (20,000 by default)
 * in segments of about 12 words over two hours, each word timed and with a confidence (about one in
 * five below the 0.7 of doubt), always the same (a seeded source of numbers); and the note made from
 * it as the pipeline makes one (createPending, saveTranscript, finish), without a recording.
 */
import { Database } from 'bun:sqlite'
import type { Library } from '../../src/modules/library'
import type { Services } from '../../src/services'

export const SECONDS = 2 * 3600
const VOCABULARY = 'we the budget plan launch team customer meeting next week ship beta review invoice billing page announcement friday monday decide agree write send fix bug feedback document public date numbers quarter product design research call notes question answer'.split(' ')

/** A deterministic source of numbers in [0, 1) (mulberry32), so every run edits the same transcript. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface BenchSegment {
  start: number
  end: number
  text: string
  words: { word: string; start: number; end: number; confidence: number }[]
}

/** The segments of a two-hour recording of `words` words: about 12 words each, every word timed and with a confidence. */
export function twoHours(words: number): BenchSegment[] {
  const rand = random(31)
  const perWord = SECONDS / words
  const segments: BenchSegment[] = []
  let w = 0
  while (w < words) {
    const n = Math.min(words - w, 8 + Math.floor(rand() * 9))
    const ws = Array.from({ length: n }, (_, k) => {
      const start = Math.round((w + k) * perWord * 1000) / 1000
      return { word: VOCABULARY[Math.floor(rand() * VOCABULARY.length)]!, start, end: Math.round((start + perWord * 0.9) * 1000) / 1000, confidence: Math.round((rand() < 0.2 ? rand() * 0.7 : 0.7 + rand() * 0.3) * 1e4) / 1e4 }
    })
    segments.push({ start: ws[0]!.start, end: Math.round((w + n) * perWord * 1000) / 1000, text: ws.map(x => x.word).join(' '), words: ws })
    w += n
  }
  return segments
}

/** A finished note of `segments` in `lib`, made as the pipeline makes one; its id. */
export async function twoHourNote(services: Services, lib: Library, segments: BenchSegment[]): Promise<string> {
  const note = await services.notes.createPending(lib, { title: 'Two-hour planning.wav', type: 'audio', styleId: 'note', language: null, source: 'upload', stage: 'transcribing' })
  const transcript = segments.map(s => s.text).join(' ')
  await services.notes.saveTranscript(note.id, { transcript, language: 'en', segments, speakers: [] })
  await services.notes.finish(note.id, { title: 'Two-hour planning', summary: 'A long meeting.', language: 'en', segments, structuredContent: { note: { summary: 'A long meeting.', sections: [] } } })
  return note.id
}

/** The p-th percentile of `xs` (nearest rank). */
export const percentile = (xs: number[], p: number) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

/**
 * What the revisions of a SQLite database hold: their rows and the bytes of every column of every row
 * (whatever columns the schema gives them).
 */
export function revisionBytes(databasePath: string): { rows: number; bytes: number } {
  const db = new Database(databasePath, { readonly: true })
  try {
    const columns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('transcript_revisions')").all().map(c => c.name)
    const sum = columns.map(c => `coalesce(sum(length(CAST(${c} AS BLOB))), 0)`).join(' + ')
    const r = db.query<{ rows: number; bytes: number }, []>(`SELECT count(*) AS rows, ${sum} AS bytes FROM transcript_revisions`).get()!
    return { rows: r.rows, bytes: r.bytes }
  } finally {
    db.close()
  }
}
