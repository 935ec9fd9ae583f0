/** A command's arguments once the configuration flags are taken out (config.ts applyFlags). */
export interface Parsed {
  positional: string[]
  flags: Record<string, string | true>
}

/** A mistake in how the command was called; printed with a hint, exit code 2. */
export class UsageError extends Error {}

/** Flags that never take a value, so `--summary talk.wav` leaves the file a positional argument. */
const SWITCHES = new Set(['summary', 'live'])

export function parseArgs(args: string[]): Parsed {
  const positional: string[] = []
  const flags: Record<string, string | true> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (!a.startsWith('--')) { positional.push(a); continue }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
    if (inline !== undefined) flags[name] = inline
    else if (SWITCHES.has(name)) flags[name] = true
    else if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) flags[name] = args[++i]!
    else flags[name] = true
  }
  return { positional, flags }
}

export function stringFlag(p: Parsed, name: string, required: true): string
export function stringFlag(p: Parsed, name: string, required?: false): string | undefined
export function stringFlag(p: Parsed, name: string, required = false): string | undefined {
  const v = p.flags[name]
  if (v === true) throw new UsageError(`--${name} needs a value`)
  if (v === undefined && required) throw new UsageError(`--${name} is required`)
  return v
}
