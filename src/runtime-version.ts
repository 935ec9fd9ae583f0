/**
 * The Bun versions notesvc runs on: package.json `engines.bun`, bundled into the compiled binary at
 * build time. Bun 1.4.0 and older accept an upload PUT and never answer it (docs/decisions.md, Runtime), so every
 * command refuses them before doing anything.
 */
import pkg from '../package.json' with { type: 'json' }

const SUPPORTED_BUN: string = pkg.engines.bun

/**
 * The one line that refuses `version`, or null when this Bun can run notesvc. A canary counts as the
 * release it leads to (1.4.2-canary.… as 1.4.2), which plain semver would refuse.
 */
export function runtimeRefusal(version: string | undefined = process.versions.bun, range: string = SUPPORTED_BUN, compiled = false): string | null {
  if (version && Bun.semver.satisfies(version.replace(/[-+].*$/s, ''), range)) return null
  const upgrade = compiled
    ? 'rebuild the binary with a newer Bun: npm install -g bun && bun run build'
    : 'upgrade with: npm install -g bun'
  return `notesvc needs Bun ${range} but runs on Bun ${version ?? '(unknown)'}; ${upgrade}`
}
