/**
 * Remembered voices: a new recording's speakers compared with the voice prints a library stored when
 * a person named a speaker (speaker_profiles), by cosine similarity of the engine's prints.
 */

/**
 * How alike a speaker's print must be to a remembered voice's to be matched, per engine.
 *
 * builtin: measured by `bun run bench/voices.ts` (12 voices, each in two recordings with another
 * partner, other words and other hiss, made at 40 and at 60 s, diarized without a count): 0.93 is the
 * lowest 0.01 step with no false accept among its 502 pairs of different voices, and keeps 7 of its 24
 * pairs of the same voice. A remembered voice is missed more often than not; the nearest stranger
 * there scored 0.924 (the same synthetic voice 6 % lower), so one that near would be taken. The 0.97
 * used before was a guess, and with the prints of then it took 58 of those 502 pairs.
 *
 * sherpa-onnx: 0.6 is a guess, not measured: that needs its real model weights, which this machine
 * has not got (bench/voices.ts measures it when they are in the models folder).
 */
export const RECOGNITION_THRESHOLDS: Readonly<Record<string, number>> = { builtin: 0.93, 'sherpa-onnx': 0.6 }

/** Cosine similarity of two unit-length prints (their dot product); 0 when the lengths differ. */
export function similarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return 0
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0
}

/**
 * Each new speaker's remembered voice, if any: pairs taken best first, each voice and each speaker
 * once, only at `threshold` or above.
 */
export function recognise(speakers: readonly { label: string; embedding: number[] | null }[], profiles: readonly { id: string; name: string; embedding: number[] }[], threshold: number): Map<string, { id: string; name: string; similarity: number }> {
  const pairs: { label: string; profile: { id: string; name: string }; score: number }[] = []
  for (const s of speakers) {
    if (!s.embedding) continue
    for (const p of profiles) {
      const score = similarity(s.embedding, p.embedding)
      if (score >= threshold) pairs.push({ label: s.label, profile: { id: p.id, name: p.name }, score })
    }
  }
  pairs.sort((a, b) => b.score - a.score)
  const out = new Map<string, { id: string; name: string; similarity: number }>()
  const used = new Set<string>()
  for (const p of pairs) {
    if (out.has(p.label) || used.has(p.profile.id)) continue
    out.set(p.label, { ...p.profile, similarity: p.score })
    used.add(p.profile.id)
  }
  return out
}
