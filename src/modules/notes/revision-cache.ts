/**
 * Values remembered by rowid, each good only for the revision it was read at (migration 5 gives every
 * note a new revision from one counter on every insert and change, so a rowid and a revision name one
 * state of one row for good). A reader that has the current revision from an index asks for the value
 * of that revision: a changed, deleted or replaced row simply misses. Nothing needs to be forgotten
 * when the database changes, by this process or another one.
 *
 * Bounded by the total length of the values; past it the oldest entries go first.
 */
export class RevisionCache {
  private entries = new Map<number, { revision: number; value: string }>()
  private chars = 0

  constructor(private readonly maxChars: number) {}

  get(rowid: number, revision: number): string | undefined {
    const e = this.entries.get(rowid)
    return e !== undefined && e.revision === revision ? e.value : undefined
  }

  set(rowid: number, revision: number, value: string): void {
    const old = this.entries.get(rowid)
    if (old !== undefined) {
      this.chars -= old.value.length
      this.entries.delete(rowid)
    }
    this.entries.set(rowid, { revision, value })
    this.chars += value.length
    if (this.chars > this.maxChars) this.shrink()
  }

  get size(): number {
    return this.entries.size
  }

  /** Drops the oldest entries until a tenth of the budget is free again. */
  private shrink(): void {
    const target = this.maxChars * 0.9
    for (const [rowid, e] of this.entries) {
      if (this.chars <= target) break
      this.entries.delete(rowid)
      this.chars -= e.value.length
    }
  }
}
