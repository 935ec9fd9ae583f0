/**
 * Agglomerative clustering of unit vectors by cosine similarity, average linkage: every vector starts
 * alone, and the two most similar clusters merge until `clusters` remain. O(n²) memory and O(n³) time: callers
 * keep n to a few hundred (the builtin engine clusters a sample of its windows and assigns the rest).
 */
export function agglomerate(vectors: Float32Array[], clusters: number): number[] {
  const n = vectors.length
  if (n === 0) return []
  const sim = new Float64Array(n * n)
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) sim[i * n + j] = sim[j * n + i] = dot(vectors[i]!, vectors[j]!)
  const size = new Int32Array(n).fill(1)
  const parent = Array.from({ length: n }, (_, i) => i)
  const alive = new Set(parent)
  while (alive.size > Math.max(1, clusters)) {
    let best = -Infinity
    let a = -1
    let b = -1
    for (const i of alive) for (const j of alive) if (j > i && sim[i * n + j]! > best) [best, a, b] = [sim[i * n + j]!, i, j]
    // b joins a; a's similarity to every other cluster becomes the size-weighted mean of both
    for (const k of alive) {
      if (k === a || k === b) continue
      const v = (size[a]! * sim[a * n + k]! + size[b]! * sim[b * n + k]!) / (size[a]! + size[b]!)
      sim[a * n + k] = sim[k * n + a] = v
    }
    size[a]! += size[b]!
    alive.delete(b)
    parent[b] = a
  }
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)))
  const ids = new Map<number, number>()
  return vectors.map((_, i) => {
    const r = root(i)
    if (!ids.has(r)) ids.set(r, ids.size)
    return ids.get(r)!
  })
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

/** `v` scaled to unit length (a zero vector stays zero). */
export function unit(v: Float32Array): Float32Array {
  const norm = Math.sqrt(dot(v, v))
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
}

