/**
 * A live stream as OpenAI's realtime clients send it, for bench/live.ts: a WebSocket to GET
 * /v1/realtime (key as Bearer), `session.update` with 24 kHz pcm16 and server VAD, the audio in
 * 100-ms `input_audio_buffer.append`s at real-time pace, then `notesvc.stream.finish`; every server
 * event kept with its arrival time in seconds since the first append was sent (audio time 0). The
 * socket is the CLI's (src/live-client/realtime-connection.ts), which reads a refusal's status and
 * Retry-After.
 */
import { openRealtime, StreamRefused, type RealtimeSocket } from '../../src/live-client/realtime-connection'

const RATE = 24_000
const PIECE = (RATE / 10) * 2

export interface TimedEvent {
  at: number
  e: Record<string, any>
}

export type StreamRun =
  | { refused: true; status: number; retryAfter: string | null }
  | { refused: false; events: TimedEvent[]; audioSeconds: number; noteId: string | null; finishedAt: number }

export interface StreamPlan {
  base: string
  key: string
  /** 24 kHz pcm16 mono */
  pcm: Uint8Array
  /** resolves when every stream of the level is configured: they all start at once */
  start: Promise<void>
  configured: () => void
}

export async function runStream(plan: StreamPlan): Promise<StreamRun> {
  let socket: RealtimeSocket
  try {
    socket = await openRealtime(plan.base, plan.key, { title: 'bench' })
  } catch (err) {
    plan.configured()
    if (err instanceof StreamRefused && err.status !== null) return { refused: true, status: err.status, retryAfter: err.retryAfterSeconds === null ? null : String(err.retryAfterSeconds) }
    throw err
  }
  const events: TimedEvent[] = []
  let t0 = performance.now()
  const waiters: Array<() => void> = []
  socket.onEvent(e => {
    events.push({ at: (performance.now() - t0) / 1000, e })
    for (const w of waiters.splice(0)) w()
  })
  const next = async (type: string) => {
    for (;;) {
      const found = events.find(x => x.e.type === type)
      if (found) return found
      await new Promise<void>(resolve => waiters.push(resolve))
    }
  }
  await next('session.created')
  socket.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: RATE }, turn_detection: { type: 'server_vad' } } } } })
  await next('session.updated')
  plan.configured()
  await plan.start
  t0 = performance.now()
  for (let at = 0, k = 0; at < plan.pcm.length; at += PIECE, k++) {
    const wait = t0 + k * 100 - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    socket.send({ type: 'input_audio_buffer.append', audio: Buffer.from(plan.pcm.subarray(at, at + PIECE)).toString('base64') })
  }
  socket.send({ type: 'notesvc.stream.finish' })
  const finished = await Promise.race([next('notesvc.stream.finished'), socket.closed.then(() => null)])
  socket.close(1000)
  return { refused: false, events, audioSeconds: plan.pcm.length / 2 / RATE, noteId: finished?.e.note?.id ?? null, finishedAt: finished?.at ?? NaN }
}
