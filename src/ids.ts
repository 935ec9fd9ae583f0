/** Time-sortable opaque ids: `<prefix>_<10 chars of milliseconds><16 random chars>` in Crockford base32. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

export type IdPrefix = 'note' | 'fld' | 'use' | 'key' | 'acct' | 'cli' | 'req' | 'job'

export interface IdGenerator {
  next(prefix: IdPrefix): string
}

function encodeTime(ms: number): string {
  let out = ''
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out
    ms = Math.floor(ms / 32)
  }
  return out
}

function randomPart(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  let out = ''
  for (const b of bytes) out += ALPHABET[b & 31]
  return out
}

/** Ids from the clock and 80 random bits; monotonic within one millisecond is not needed (ties sort by id). */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  return { next: prefix => `${prefix}_${encodeTime(now())}${randomPart()}` }
}
