/**
 * Time-sortable opaque ids: `<prefix>_<10 chars of milliseconds><16 random chars>` in Crockford
 * base32 (80 random bits). Within one millisecond the random part counts up, so ids made by one process
 * sort in the order they were made (as monotonic ULIDs do): ties in time order by id.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
const RANDOM_CHARS = 16

type IdPrefix = 'note' | 'fld' | 'use' | 'key' | 'acct' | 'cli' | 'req' | 'job' | 'tok' | 'wrk' | 'whk' | 'whd' | 'msg' | 'spk' | 'aud' | 'live' | 'shr' | 'tag' | 'inv'

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

function randomDigits(): number[] {
  // The top digit leaves headroom so counting up within a millisecond never overflows in practice.
  return [...crypto.getRandomValues(new Uint8Array(RANDOM_CHARS))].map((b, i) => (i === 0 ? b & 15 : b & 31))
}

function increment(digits: number[]): void {
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i]! < 31) {
      digits[i]!++
      return
    }
    digits[i] = 0
  }
}

export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  let lastMs = -1
  let digits: number[] = []
  return {
    next(prefix) {
      const ms = now()
      if (ms === lastMs) increment(digits)
      else {
        lastMs = ms
        digits = randomDigits()
      }
      return `${prefix}_${encodeTime(ms)}${digits.map(d => ALPHABET[d]).join('')}`
    },
  }
}
