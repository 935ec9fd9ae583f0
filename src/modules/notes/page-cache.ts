/**
 * Whole list pages (response texts), each kept under the notes' change stamp it was made at, until
 * the stamp moves; at most `maxEntries`, then all are dropped. A page made at an older stamp than the
 * kept ones (a slow reader overtaken by a write) is not kept.
 */
export class PageCache {
  private stamp = -1
  private pages = new Map<string, string>()
  /** pages also kept as UTF-8 bytes, for the answers sent before routing (kept-page-answer.ts) */
  private bodies = new Map<string, Blob>()

  constructor(private readonly maxEntries = 1000) {}

  get(stamp: string, key: string): string | undefined {
    return Number(stamp) === this.stamp ? this.pages.get(key) : undefined
  }

  /**
   * The kept page as bytes ready to send, encoded the first time it is asked for and kept with the
   * page (a Response made from a Blob shares its bytes; one made from a string copies them each time).
   */
  body(stamp: string, key: string): Blob | undefined {
    const page = this.get(stamp, key)
    if (page === undefined) return undefined
    let body = this.bodies.get(key)
    if (body === undefined) this.bodies.set(key, (body = new Blob([page])))
    return body
  }

  set(stamp: string, key: string, page: string): void {
    const n = Number(stamp)
    if (n < this.stamp) return
    if (n > this.stamp || this.pages.size >= this.maxEntries) {
      this.pages.clear()
      this.bodies.clear()
      this.stamp = n
    }
    this.pages.set(key, page)
    this.bodies.delete(key)
  }
}
