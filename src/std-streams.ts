import { writeSync } from 'node:fs'

/**
 * `text` written to standard output or error at once, with write(2) on descriptor 1 or 2. What the
 * server says as it starts and logs, and the commands' lines, go this way rather than through
 * `process.stdout`/`process.stderr`, whose streams (Node's streams, made on first use) cost several
 * milliseconds of a cold start (docs/decisions.md, "Cold start, a third time"). A descriptor left
 * non-blocking by whoever started us (EAGAIN) gets the rest through the stream.
 */
function writeAll(fd: 1 | 2, text: string): void {
  const bytes = Buffer.from(text)
  let at = 0
  try {
    while (at < bytes.length) at += writeSync(fd, bytes, at)
  } catch {
    ;(fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(at))
  }
}

export const writeStdout = (text: string): void => writeAll(1, text)
export const writeStderr = (text: string): void => writeAll(2, text)
