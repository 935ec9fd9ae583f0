/**
 * Live streams against real `notesvc serve` processes (test/helpers/cluster.ts: media in S3 through
 * s3rver, one worker process), on SQLite (one node) and PostgreSQL (two nodes):
 * - kill -9 of the node holding a stream mid-stream: the audio kept up to its last part becomes the
 *   note (after a restart on SQLite; by the other node's sweep on PostgreSQL), Done through the usual
 *   stages, charged once;
 * - PostgreSQL: a stream resumed on the second node after the first was killed continues the same
 *   stream (its state in the database, its audio in the shared storage): the recording is every byte
 *   once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { speechWav } from '../fixtures/speech'
import { startCluster, type Cluster, type ClusterBackEnd } from '../helpers/cluster'
import { apiClient, until } from '../helpers/process'
import { postgresUnavailable } from '../helpers/postgres'

const PCM = speechWav(20).subarray(44)
const RATE = 16000
const bytesOf = (seconds: number) => Math.round(seconds * RATE) * 2
const pgSkip = postgresUnavailable()

interface Stream { ws: WebSocket; events: any[]; next(type: string, pred?: (e: any) => boolean): Promise<any> }

async function connect(base: string, key: string, query = ''): Promise<Stream> {
  const ws = new WebSocket(`${base.replace('http:', 'ws:')}/v1/realtime?intent=transcription${query}`, { protocols: ['realtime', `openai-insecure-api-key.${key}`] } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  ws.onerror = () => {}
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onclose = reject)))
  const next = (type: string, pred: (e: any) => boolean = () => true) => until(`a ${type} event`, () => events.find(e => e.type === type && pred(e)), 60_000)
  await next('session.created')
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: RATE } } } } }))
  await next('session.updated')
  return { ws, events, next }
}

/** sends PCM[from, to) at 4× real time in 100-ms appends */
async function send(ws: WebSocket, from: number, to: number) {
  for (let at = from; at < to; at += 3200) {
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(PCM.subarray(at, Math.min(to, at + 3200))).toString('base64') }))
    await Bun.sleep(25)
  }
}

for (const backEnd of ['sqlite', 'postgres'] as ClusterBackEnd[]) {
  describe.skipIf(backEnd === 'postgres' && pgSkip !== null)(`live streams on real servers (${backEnd})`, () => {
    let c: Cluster
    let key: string
    let s3: S3Client
    beforeAll(async () => {
      c = await startCluster({ backEnd, nodes: backEnd === 'postgres' ? 2 : 1, workers: 1, env: { NOTESVC_LIVE_RESUME_SECONDS: '60' } })
      key = (await c.cli(['keys', 'create', '--email', 'live@cluster.test', '--plan', 'pro'])).stdout.trim()
      s3 = new S3Client({ endpoint: c.s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } })
    }, 90_000)
    afterAll(async () => {
      await c?.stop()
    })

    const recording = async (noteId: string) => {
      const res = await s3.send(new GetObjectCommand({ Bucket: c.s3.bucket, Key: `uploads/${noteId}` }))
      return new Uint8Array(await res.Body!.transformToByteArray()).subarray(44)
    }
    const status = (noteId: string) => apiClient(c.nodes.at(-1)!.base, key)('GET', `/v1/notes/${noteId}/status`)

    test('kill -9 of the node holding a stream: the audio kept up to its last part becomes the note, Done, charged once', async () => {
      const s = await connect(c.nodes[0]!.base, key)
      const { stream } = await s.next('notesvc.stream.created')
      await send(s.ws, 0, bytesOf(6))
      const kept = (await s.next('notesvc.stream.kept', e => e.audio_seconds >= 4)).audio_seconds
      const victim = c.nodes[0]!
      victim.proc.kill('SIGKILL')
      await victim.proc.exited
      const killedAt = performance.now()
      // SQLite: the node comes back and its sweep finds the stream; PostgreSQL: the other node's sweep does
      if (backEnd === 'sqlite') await c.restartNode(0)
      const done = await until('the note Done', async () => {
        const st = (await status(stream.note_id)).body
        return st?.status === 'Done' || st?.status === 'Error' ? st : undefined
      }, 120_000, 500)
      const seconds = (performance.now() - killedAt) / 1000
      if (done.status !== "Done") console.log(JSON.stringify(done))
      expect(done.status).toBe("Done")
      const audio: Uint8Array = await recording(stream.note_id)
      // every part the node had written, and nothing it had not: at least what it confirmed, at most what was sent
      expect(audio.length).toBeGreaterThanOrEqual(bytesOf(kept))
      expect(audio.length).toBeLessThanOrEqual(bytesOf(6))
      expect(audio).toEqual(new Uint8Array(PCM.subarray(0, audio.length)))
      const usage = (await apiClient(c.nodes.at(-1)!.base, key)('GET', '/v1/usage')).body
      expect(usage.recent.filter((r: any) => r.noteId === stream.note_id).map((r: any) => [r.operation, r.credits])).toEqual([['liveTranscription', 1]])
      const note = (await apiClient(c.nodes.at(-1)!.base, key)('GET', `/v1/notes/${stream.note_id}`)).body
      expect(note.originalTranscription.split(' ').length).toBeGreaterThan(5)
      console.log(`${backEnd}: kill -9 with ${kept} s confirmed kept; the note made from ${(audio.length / 2 / RATE).toFixed(2)} s, Done ${seconds.toFixed(1)} s after the kill, charged ${JSON.stringify(usage.recent.filter((r: any) => r.noteId === stream.note_id).map((r: any) => r.credits))}`)
      if (backEnd === 'postgres') await c.restartNode(0)
    }, 180_000)

    test.skipIf(backEnd !== 'postgres')('a stream resumed on the second node after its first node was killed continues the same stream: every byte once', async () => {
      const s = await connect(c.nodes[0]!.base, key)
      const { stream } = await s.next('notesvc.stream.created')
      await send(s.ws, 0, bytesOf(5))
      await s.next('notesvc.stream.kept', e => e.audio_seconds >= 3)
      c.nodes[0]!.proc.kill('SIGKILL')
      await c.nodes[0]!.proc.exited
      const again = await connect(c.nodes[1]!.base, key, `&resume=${stream.resume_token}`)
      const resumed = (await again.next('notesvc.stream.resumed')).stream
      expect(resumed).toMatchObject({ id: stream.id, note_id: stream.note_id, sample_rate: RATE })
      expect(resumed.audio_seconds).toBeGreaterThanOrEqual(3)
      await send(again.ws, bytesOf(resumed.audio_seconds), bytesOf(10))
      again.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
      const finished = await again.next('notesvc.stream.finished')
      expect(finished).toMatchObject({ note: { id: stream.note_id }, audio_seconds: 10, credits_charged: 1 })
      expect(await recording(stream.note_id)).toEqual(new Uint8Array(PCM.subarray(0, bytesOf(10))))
      console.log(`postgres: killed node A after ${resumed.audio_seconds} s kept; resumed on node B, finished with 10 s, every byte once`)
      await c.restartNode(0)
    }, 120_000)
  })
}
