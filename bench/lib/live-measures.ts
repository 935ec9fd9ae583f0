/**
 * What bench/live.ts reads from one stream's events (bench/lib/live-client.ts): each word's latency
 * from its end in the audio to its first appearance in a partial, each turn's lag, and the final text.
 * A word's end comes from the batch alignment of the same recording (PocketSphinx's batch recognizer on
 * the 16 kHz audio): the route's `completed` has no word times, so the final's words are aligned to the
 * batch words (edit distance; a match or a substitution takes the batch word's end).
 */
import type { TimedEvent } from './live-client'

export interface TimedWord {
  word: string
  end: number
}

/** For each word of `hyp`, the end of the `ref` word it lines up with (match or substitution), or null. */
function alignedEnds(hyp: string[], ref: TimedWord[]): Array<number | null> {
  const n = hyp.length
  const m = ref.length
  const d = Array.from({ length: n + 1 }, (_, i) => Int32Array.from({ length: m + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= m; j++) {
      const sub = d[i - 1]![j - 1]! + (hyp[i - 1] === ref[j - 1]!.word ? 0 : 1)
      d[i]![j] = Math.min(sub, d[i - 1]![j]! + 1, d[i]![j - 1]! + 1)
    }
  }
  const ends: Array<number | null> = new Array(n).fill(null)
  for (let i = n, j = m; i > 0 && j > 0; ) {
    const sub = d[i - 1]![j - 1]! + (hyp[i - 1] === ref[j - 1]!.word ? 0 : 1)
    if (d[i]![j] === sub) {
      ends[i - 1] = ref[j - 1]!.end
      i--
      j--
    } else if (d[i]![j] === d[i - 1]![j]! + 1) i--
    else j--
  }
  return ends
}

const type = (x: TimedEvent) => x.e.type as string
const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean)

export interface StreamMeasures {
  /** seconds from each word's end in the audio to the first partial showing it (or its final) */
  latencies: number[]
  /** per turn: seconds from when the turn could end (speech_stopped's audio_end_ms: the frame that completed the VAD's silence) to its final */
  lags: number[]
  /** the last final's arrival after the audio's end (negative: before it) */
  lastFinalAfterEnd: number
  text: string
}

/**
 * A partial counts as showing word k of its turn once it has the word within two places of k (the
 * search shifts words as it revises them), as bench/live-engine.ts counts it.
 */
export function measureStream(events: TimedEvent[], audioSeconds: number, batch: TimedWord[]): StreamMeasures {
  const finals = events.filter(x => type(x) === 'conversation.item.input_audio_transcription.completed' && x.e.transcript)
  const all = finals.flatMap(f => wordsOf(f.e.transcript))
  const ends = alignedEnds(all, batch)
  const latencies: number[] = []
  let at = 0
  for (const f of finals) {
    const partials = events.filter(x => type(x) === 'notesvc.transcription.partial' && x.e.item_id === f.e.item_id)
    wordsOf(f.e.transcript).forEach((word, k) => {
      const end = ends[at + k]
      if (end === null || end === undefined) return
      const shown = partials.find(p => wordsOf(p.e.text).slice(Math.max(0, k - 2), k + 3).includes(word)) ?? f
      latencies.push(shown.at - end)
    })
    at += wordsOf(f.e.transcript).length
  }
  const lags = finals.map(f => {
    const stopped = events.find(x => type(x) === 'input_audio_buffer.speech_stopped' && x.e.item_id === f.e.item_id)
    const couldEnd = stopped ? stopped.e.audio_end_ms / 1000 : audioSeconds
    return f.at - couldEnd
  })
  return { latencies, lags, lastFinalAfterEnd: (finals.at(-1)?.at ?? NaN) - audioSeconds, text: finals.map(f => f.e.transcript).join(' ') }
}

export const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN
