/**
 * Remembered voices: a new recording's speakers compared with the voice prints a library stored when
 * a person named a speaker (speaker_profiles), by cosine similarity of the engine's prints.
 */

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
export function recognise(speakers: readonly { label: string; embedding: number[] | null }[], profiles: readonly { id: string; name: string; embedding: number[] }[], threshold: number): Map<string, { id: string; name: string }> {
  const pairs: { label: string; profile: { id: string; name: string }; score: number }[] = []
  for (const s of speakers) {
    if (!s.embedding) continue
    for (const p of profiles) {
      const score = similarity(s.embedding, p.embedding)
      if (score >= threshold) pairs.push({ label: s.label, profile: { id: p.id, name: p.name }, score })
    }
  }
  pairs.sort((a, b) => b.score - a.score)
  const out = new Map<string, { id: string; name: string }>()
  const used = new Set<string>()
  for (const p of pairs) {
    if (out.has(p.label) || used.has(p.profile.id)) continue
    out.set(p.label, p.profile)
    used.add(p.profile.id)
  }
  return out
}
