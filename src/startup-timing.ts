import { writeStderr } from './std-streams'
/**
 * Where a start spends its time, for bench/cold-start.ts: with NOTESVC_STARTUP_TIMING=1, `startupMark`
 * notes the time since the process started (performance.now(), whose origin is the launch), and
 * `startupReport` writes one `startup: <phase> <ms>` line per phase to stderr, each with the time
 * since the previous mark. Off (the default) it records nothing.
 */
const enabled = process.env.NOTESVC_STARTUP_TIMING === '1'
const marks: [string, number][] = []

export function startupMark(phase: string): void {
  if (enabled) marks.push([phase, performance.now()])
}

export function startupReport(): void {
  if (!enabled) return
  let previous = 0
  for (const [phase, at] of marks) {
    writeStderr(`startup: ${phase} ${(at - previous).toFixed(1)} ms (at ${at.toFixed(1)} ms)\n`)
    previous = at
  }
  marks.length = 0
}
