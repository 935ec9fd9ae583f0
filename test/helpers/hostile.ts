/**
 * Hostile load against a running server, and a victim beside it: one account sends the worst requests
 * it can in loops (a search over a note repeating one word, bodies of hundreds of megabytes, a NUL in
 * every string field) while another account's GET /v1/health and GET /v1/notes are timed. Used by
 * test/system/hostile-load.test.ts (that every victim request is answered, and while hostile work was
 * in flight) and bench/hostile.ts (the victim's p50/p99 beside an idle server's).
 */

/** One victim request: when it was sent and answered (performance.now()), its status, and how many hostile requests were in flight when it was answered. */
export interface Timed {
  path: string
  sentAt: number
  doneAt: number
  status: number
  hostileInFlight: number
  /** how many hostile requests were answered while this one waited for its answer */
  hostileAnsweredMeanwhile: number
}

/** What the hostile side did: its requests by status, and how many were in flight at each moment asked. */
export class HostileCounter {
  inFlight = 0
  sent = 0
  answered = 0
  statuses = new Map<number, number>()
  count(status: number) {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
  }
  /** statuses as a sorted object, for messages */
  summary(): Record<string, number> {
    return Object.fromEntries([...this.statuses].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]))
  }
}

/** `concurrency` loops each running `one` again and again until `stop()` says so; counts in `counter`. */
function hostileLoops(concurrency: number, stop: () => boolean, counter: HostileCounter, one: (i: number) => Promise<number>): Promise<void> {
  const loop = async (i: number) => {
    while (!stop()) {
      counter.inFlight++
      counter.sent++
      try {
        counter.count(await one(i))
      } catch {
        counter.count(0) // the connection failed (a refused body may close it)
      } finally {
        counter.inFlight--
        counter.answered++
      }
    }
  }
  return Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i))).then(() => {})
}

/** The victim: GET /v1/health and GET /v1/notes in turn, one at a time, until `stop()`. */
export async function victimLoop(base: string, key: string, stop: () => boolean, counter: HostileCounter | null): Promise<Timed[]> {
  const timed: Timed[] = []
  const paths = ['/v1/health', '/v1/notes?limit=20']
  for (let i = 0; !stop(); i++) {
    const path = paths[i % paths.length]!
    const sentAt = performance.now()
    const answeredBefore = counter?.answered ?? 0
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } })
    await res.arrayBuffer()
    timed.push({ path, sentAt, doneAt: performance.now(), status: res.status, hostileInFlight: counter?.inFlight ?? 0, hostileAnsweredMeanwhile: (counter?.answered ?? 0) - answeredBefore })
  }
  return timed
}

/** The victim's latencies in ms: p50, p99 and the largest. */
export function latencies(timed: Timed[]): { n: number; p50: number; p99: number; max: number } {
  const ms = timed.map(t => t.doneAt - t.sentAt).sort((a, b) => a - b)
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN
  return { n: ms.length, p50: at(0.5), p99: at(0.99), max: ms.at(-1) ?? NaN }
}

/**
 * Runs the hostile loops and the victim together: the victim for `ms`, then the hostile side is
 * stopped (each loop ends after its request under way). The victim starts once the hostile requests
 * are in flight.
 */
export async function duringHostile(o: { base: string; victimKey: string; ms: number; concurrency: number; one: (i: number) => Promise<number> }) {
  const counter = new HostileCounter()
  let hostileStop = false
  const hostile = hostileLoops(o.concurrency, () => hostileStop, counter, o.one)
  while (counter.inFlight < o.concurrency) await Bun.sleep(1)
  const victimEnd = performance.now() + o.ms
  const victims = await victimLoop(o.base, o.victimKey, () => performance.now() > victimEnd, counter)
  hostileStop = true
  await hostile
  return { victims, hostile: counter }
}

/** The victim alone on the same server, for as long: the idle figures. */
export async function idle(base: string, victimKey: string, ms: number): Promise<Timed[]> {
  const end = performance.now() + ms
  return victimLoop(base, victimKey, () => performance.now() > end, null)
}

/**
 * Sends a request's head by hand on a TCP socket, then body bytes (chunked when `chunked`) in pieces,
 * `bytesPerMs` at most; resolves with the status the server answered and how many body bytes had been
 * written by then. The body is never finished past `total`: an answer before that means the server
 * did not wait for the rest.
 */
export async function rawRequest(port: number, head: string, body: { total: number; chunked?: boolean; bytesPerMs?: number }): Promise<{ status: number; json: any; sentBeforeAnswer: number }> {
  let received = ''
  let sent = 0
  let answeredAt = -1
  const { promise: answered, resolve } = Promise.withResolvers<void>()
  const socket = await Bun.connect({
    hostname: '127.0.0.1', port,
    socket: {
      data(_s, data) {
        if (answeredAt < 0) answeredAt = sent
        received += new TextDecoder().decode(data)
        const [headPart, rest] = received.split('\r\n\r\n')
        const length = /content-length: (\d+)/i.exec(headPart ?? '')
        if (rest !== undefined && length && Buffer.byteLength(rest) >= Number(length[1])) resolve()
      },
      close() { resolve() },
      error() { resolve() },
    },
  })
  socket.write(head)
  const piece = new Uint8Array(256 * 1024).fill(0x61) // 'a'
  const started = performance.now()
  while (sent < body.total && answeredAt < 0) {
    if (body.bytesPerMs && sent > (performance.now() - started) * body.bytesPerMs) {
      await Bun.sleep(2)
      continue
    }
    const n = Math.min(piece.length, body.total - sent)
    const bytes = body.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece.subarray(0, n), Buffer.from('\r\n')]) : piece.subarray(0, n)
    let off = 0
    while (off < bytes.length && answeredAt < 0) {
      const w = socket.write(bytes.subarray(off))
      off += w
      if (w === 0) await Bun.sleep(1)
    }
    sent += n
    await Bun.sleep(0)
  }
  await Promise.race([answered, Bun.sleep(10_000)])
  socket.end()
  const [headPart, rest] = received.split('\r\n\r\n')
  let json: any = null
  try {
    json = rest ? JSON.parse(rest) : null
  } catch {
    json = rest
  }
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(headPart ?? '')?.[1] ?? 0), json, sentBeforeAnswer: answeredAt < 0 ? sent : answeredAt }
}

const NUL = '\u0000'
/** Requests with a NUL in every string field and path or query parameter the interface takes. */
function nulRequests(): { method: string; path: string; body?: unknown }[] {
  return [
    { method: 'POST', path: '/v1/notes', body: { title: `t${NUL}`, content: `c${NUL}` } },
    { method: 'POST', path: '/v1/notes', body: { title: 't', content: 'c', source: `s${NUL}`, format: `f${NUL}` } },
    { method: 'PATCH', path: '/v1/notes/nte_x', body: { summary: `s${NUL}` } },
    { method: 'GET', path: '/v1/notes/%00' },
    { method: 'GET', path: '/v1/notes?folderId=%00' },
    { method: 'GET', path: '/v1/notes?q=%00' },
    { method: 'POST', path: '/v1/folders', body: { name: `n${NUL}` } },
    { method: 'PATCH', path: '/v1/folders/fld_x', body: { name: `n${NUL}` } },
    { method: 'POST', path: '/v1/uploads', body: { fileName: `a${NUL}.wav`, contentType: 'audio/wav' } },
    { method: 'POST', path: '/v1/summaries', body: { text: `hello${NUL} world` } },
    { method: 'POST', path: '/v1/webhooks', body: { url: `http://127.0.0.1:9/${NUL}`, events: ['note.completed'] } },
    { method: 'DELETE', path: '/v1/webhooks/%00' },
  ]
}

/** Sends one request of `nulRequests()` (the i-th, round robin) with `key`; resolves with its status. */
export async function sendNul(base: string, key: string, i: number): Promise<number> {
  const all = nulRequests()
  const r = all[i % all.length]!
  const res = await fetch(base + r.path, {
    method: r.method,
    headers: { authorization: `Bearer ${key}`, ...(r.body ? { 'content-type': 'application/json' } : {}) },
    body: r.body ? JSON.stringify(r.body) : undefined,
  })
  await res.arrayBuffer()
  return res.status
}
