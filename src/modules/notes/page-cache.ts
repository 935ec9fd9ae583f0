/**
 * Whole list pages (response texts), each kept under the notes' change stamp it was made at, until
 * the stamp moves; at most `maxEntries`, then all are dropped. A page made at an older stamp than the
 * kept ones (a slow reader overtaken by a write) is not kept.
 */
export class PageCache {
  private stamp = -1
  private pages = new Map<string, string>()

  constructor(private readonly maxEntries = 1000) {}

  get(stamp: string, key: string): string | undefined {
    return Number(stamp) === this.stamp ? this.pages.get(key) : undefined
  }

  set(stamp: string, key: string, page: string): void {
    const n = Number(stamp)
    if (n < this.stamp) return
    if (n > this.stamp) {
      this.pages.clear()
      this.stamp = n
    }
    if (this.pages.size >= this.maxEntries) this.pages.clear()
    this.pages.set(key, page)
  }
}
