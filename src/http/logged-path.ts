/**
 * A request's path as a log line may hold it: a share link's token (`/s/<token>…`, modules/sharing)
 * replaced, since whoever reads the logs must not be able to open the link.
 */
export function loggedPath(path: string): string {
  return path.replace(/^\/s\/[^/?#]+/, '/s/[token]')
}
