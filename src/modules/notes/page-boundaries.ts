/** Where a row stands in list order (newest first, ties by id): the key a page can seek past. */
export interface SortKey {
  dateCreated: string
  id: string
}

/**
 * An ordered sequence of rows that can be read from any key onward, straight off an index.
 * `after: null` is the start of the sequence.
 */
export interface OrderedSequence<Row> {
  /** names the sequence (library and filters); equal names, equal sequences */
  name: string
  /**
   * The keys of the rows `step`, `2 × step`, … (at most `count` of them) after `after`, in one read:
   * fewer than `count` when the sequence ends first.
   */
  keysEvery(after: SortKey | null, step: number, count: number): SortKey[]
  /** `count` rows starting `skip` rows after `after` */
  rows(after: SortKey | null, skip: number, count: number): Row[]
  /** how many rows follow `after`, counting at most `max` */
  countAfter(after: SortKey | null, max: number): number
}

interface Boundaries {
  /** keys[i]: the key of the row at position (i + 1) * step - 1 */
  keys: SortKey[]
  /** the number of rows, once the end has been reached */
  length?: number
}

/**
 * Deep offsets without walking every skipped row. Neither SQLite nor PostgreSQL can find the n-th row
 * of an index without stepping over the n before it, so `OFFSET 90000` costs 90,000 steps. This
 * remembers, per sequence (a library and a combination of filters), the sort key at every `step`-th
 * position as pages are read; a page at offset n then seeks to the nearest remembered key at or
 * before n and steps over fewer than `step` rows. Remembered keys are forgotten whenever the database
 * may have changed (`stamp`, the read cache's), so they never describe a library that has moved on:
 * a page read after an insert or delete is exactly what a plain OFFSET query would return.
 */
/** How many boundaries `count` learns per read while it looks for the end. */
const COUNT_BATCH = 4096

export class PageBoundaries {
  private stampSeen = ''
  private sequences = new Map<string, Boundaries>()

  constructor(
    private readonly stamp: () => string,
    readonly step = 16,
    private readonly maxSequences = 256,
  ) {}

  /** `count` rows from position `offset` of the sequence. */
  page<Row>(seq: OrderedSequence<Row>, offset: number, count: number): Row[] {
    const { after, skip } = this.seek(seq, offset)
    if (after === undefined) return []
    return seq.rows(after, skip, count)
  }

  /** The number of rows in the sequence. */
  count<Row>(seq: OrderedSequence<Row>): number {
    const b = this.boundaries(seq)
    while (b.length === undefined) this.extend(seq, b, COUNT_BATCH)
    return b.length
  }

  /**
   * The nearest remembered key at or before `offset`, learning the missing boundaries on the way,
   * and how many rows lie between it and `offset`. `after: undefined` when the sequence ends first.
   */
  private seek<Row>(seq: OrderedSequence<Row>, offset: number): { after: SortKey | null | undefined; skip: number } {
    const b = this.boundaries(seq)
    const wanted = Math.floor(offset / this.step)
    if (b.keys.length < wanted && b.length === undefined) this.extend(seq, b, wanted - b.keys.length)
    if (b.length !== undefined && offset >= b.length) return { after: undefined, skip: 0 }
    const known = Math.min(wanted, b.keys.length)
    return { after: known === 0 ? null : b.keys[known - 1]!, skip: offset - known * this.step }
  }

  /** Learns up to `count` more boundaries in one read, or finds the end of the sequence. */
  private extend<Row>(seq: OrderedSequence<Row>, b: Boundaries, count: number): void {
    const last = b.keys.length === 0 ? null : b.keys[b.keys.length - 1]!
    const found = seq.keysEvery(last, this.step, count)
    b.keys.push(...found)
    if (found.length < count) b.length = b.keys.length * this.step + seq.countAfter(b.keys.length === 0 ? null : b.keys[b.keys.length - 1]!, this.step)
  }

  private boundaries<Row>(seq: OrderedSequence<Row>): Boundaries {
    const stamp = this.stamp()
    if (stamp !== this.stampSeen) {
      this.sequences.clear()
      this.stampSeen = stamp
    }
    let b = this.sequences.get(seq.name)
    if (!b) {
      if (this.sequences.size >= this.maxSequences) this.sequences.clear()
      this.sequences.set(seq.name, (b = { keys: [] }))
    }
    return b
  }
}
