/**
 * How many live streams run at once, on this server and per account (NOTESVC_LIVE_MAX_STREAMS,
 * NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT). A stream takes its place before the upgrade and gives it back
 * when its socket closes (or when the upgrade does not happen). Counted in this process: the streams'
 * state in the database, and so a count across nodes, comes with the stream's storage (issue 32).
 */
export interface StreamLimits {
  maxStreams: number
  maxStreamsPerAccount: number
}

export type StreamPlace = { ok: true; release: () => void } | { ok: false; scope: 'server' | 'account'; limit: number }

export function createStreamCounter(limits: StreamLimits) {
  let running = 0
  const perAccount = new Map<string, number>()

  function take(accountId: string): StreamPlace {
    const mine = perAccount.get(accountId) ?? 0
    if (mine >= limits.maxStreamsPerAccount) return { ok: false, scope: 'account', limit: limits.maxStreamsPerAccount }
    if (running >= limits.maxStreams) return { ok: false, scope: 'server', limit: limits.maxStreams }
    running++
    perAccount.set(accountId, mine + 1)
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        running--
        const left = (perAccount.get(accountId) ?? 1) - 1
        if (left > 0) perAccount.set(accountId, left)
        else perAccount.delete(accountId)
      },
    }
  }

  return { take, running: () => running }
}

