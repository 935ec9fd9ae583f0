/**
 * node:net's `isIP` (4, 6 or 0), with node:net required on the first call rather than at start: it
 * brings Node's streams, milliseconds of every cold start, for a check made only when a URL is
 * fetched or a webhook sent (docs/decisions.md, "Cold start, again").
 */
export function isIP(s: string): 0 | 4 | 6 {
  return (require('node:net') as typeof import('node:net')).isIP(s) as 0 | 4 | 6
}
