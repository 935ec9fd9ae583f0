import type { Diarization, SpeakerTurn } from '../../src/engines/diarization/engine'
import { similarity } from '../../src/engines/diarization/recognise'

/** A speaker the engine found in a recording, as the voice they mostly are. */
export interface FoundSpeaker {
  recording: number
  /** the engine's speaker number in that recording */
  speaker: number
  /** the true voice sharing the most time with the speaker's turns (an index into the set's voices) */
  voice: number
  /** of the speaker's time during which a true voice speaks, the share that is that voice */
  purity: number
  print: number[]
}

/**
 * Each found speaker labelled with the true voice they share the most time with. `voices` maps the
 * truth's speaker numbers to the set's voice indexes.
 */
export function foundSpeakers(recording: number, d: Diarization, truth: SpeakerTurn[], voices: number[]): FoundSpeaker[] {
  return Array.from({ length: d.speakers }, (_, s) => {
    const turns = d.turns.filter(t => t.speaker === s)
    const shared = voices.map((_, v) => turns.reduce((sum, t) => sum + truth.filter(x => x.speaker === v).reduce((n, x) => n + overlap(t, x), 0), 0))
    const best = shared.indexOf(Math.max(...shared))
    const total = shared.reduce((a, b) => a + b, 0)
    return { recording, speaker: s, voice: voices[best]!, purity: total ? shared[best]! / total : 0, print: Array.from(d.embeddings?.[s] ?? []) }
  })
}

const overlap = (a: SpeakerTurn, b: SpeakerTurn) => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start))

export interface ScoredPair {
  a: FoundSpeaker
  b: FoundSpeaker
  score: number
  /** the same voice */
  same: boolean
}

/** Every pair of speakers found in two different recordings, with the similarity of their prints. */
export function scoredPairs(speakers: FoundSpeaker[]): ScoredPair[] {
  const out: ScoredPair[] = []
  for (let i = 0; i < speakers.length; i++) {
    for (let j = i + 1; j < speakers.length; j++) {
      const [a, b] = [speakers[i]!, speakers[j]!]
      if (a.recording === b.recording) continue
      out.push({ a, b, score: similarity(a.print, b.print), same: a.voice === b.voice })
    }
  }
  return out
}

/** At each threshold: how many pairs of different voices would be matched (false accepts) and of the same voice (true accepts). */
export function acceptTable(pairs: ScoredPair[], thresholds: number[]): { threshold: number; falseAccepts: number; trueAccepts: number }[] {
  return thresholds.map(threshold => ({
    threshold,
    falseAccepts: pairs.filter(p => !p.same && p.score >= threshold).length,
    trueAccepts: pairs.filter(p => p.same && p.score >= threshold).length,
  }))
}

/**
 * The lowest threshold on a 0.01 grid with no false accept; when the same-voice pairs leave room above
 * the highest different-voice score, the grid point halfway between that score and the lowest
 * same-voice score above it, so a voice a little nearer than any of this set is still not taken.
 */
export function zeroFalseAcceptThreshold(pairs: ScoredPair[]): number {
  const impostor = Math.max(-1, ...pairs.filter(p => !p.same).map(p => p.score))
  const above = pairs.filter(p => p.same && p.score > impostor).map(p => p.score)
  const edge = Math.floor(impostor * 100 + 1) / 100
  if (!above.length) return Math.min(1, edge)
  return Math.min(1, Math.max(edge, Math.round(((impostor + Math.min(...above)) / 2) * 100) / 100))
}
