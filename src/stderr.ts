import { writeSync } from 'node:fs'

/**
 * `text` written to standard error at once, with write(2) on descriptor 2. What the server says as it
 * starts and logs goes this way rather than through `process.stderr`, whose stream (Node's streams,
 * made on first use) cost about 2 ms of every cold start (docs/decisions.md, "Cold start, again"). A
 * descriptor left non-blocking by whoever started us (EAGAIN) gets the rest through process.stderr.
 */
export function writeStderr(text: string): void {
  const bytes = Buffer.from(text)
  let at = 0
  try {
    while (at < bytes.length) at += writeSync(2, bytes, at)
  } catch {
    process.stderr.write(bytes.subarray(at))
  }
}
