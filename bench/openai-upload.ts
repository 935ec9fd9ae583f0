/**
 * Memory of `POST /v1/audio/transcriptions` while a large multipart upload arrives: streams a file
 * (1 GB by default, made on the fly) as the `file` part of a form to a notesvc server running as its
 * own process, with its sandbox key (the form is read and written to disk whole, then the fixed sample
 * transcript answers, so no engine time is measured), samples the server's resident memory, and
 * reports the peak and the throughput. The temporary folder must be empty afterwards.
 *
 *   bun run bench/openai-upload.ts                 # 1 GB
 *   BENCH_UPLOAD_MB=256 bun run bench/openai-upload.ts
 */
import { existsSync, readdirSync } from 'node:fs'
import { processMemory, startNotesvc } from './notesvc-process'

const MB = 1024 * 1024
const SIZE = Number(process.env.BENCH_UPLOAD_MB ?? 1024) * MB
const TARGET_PEAK_MB = 150

/** A multipart form whose `file` part is `size` bytes made in 1 MB blocks, then a `model` field. */
function generatedForm(size: number, boundary: string): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  const head = enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`)
  const tail = enc.encode(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}--\r\n`)
  const block = crypto.getRandomValues(new Uint8Array(MB))
  let sent = -1
  return new ReadableStream({
    pull(controller) {
      if (sent === -1) { controller.enqueue(head); sent = 0; return }
      if (sent >= size) { controller.enqueue(tail); return controller.close() }
      const n = Math.min(MB, size - sent)
      controller.enqueue(n === MB ? block : block.subarray(0, n))
      sent += n
    },
  })
}

const server = await startNotesvc({ NOTESVC_LLM: 'builtin' })
try {
  const boundary = `bench${crypto.randomUUID()}`
  const before = processMemory(server.pid)
  let peakSampled = before.rss
  const sampler = setInterval(() => { peakSampled = Math.max(peakSampled, processMemory(server.pid).rss) }, 20)
  const started = performance.now()
  const res = await fetch(`${server.base}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.sandboxKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: generatedForm(SIZE, boundary),
    duplex: 'half',
  } as RequestInit)
  const answer = await res.text()
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  const after = processMemory(server.pid)
  if (res.status !== 200) throw new Error(`the upload answered ${res.status}: ${answer}`)
  const tmp = `${server.dataDir}/tmp`
  const left = existsSync(tmp) ? readdirSync(tmp) : []

  console.log(`multipart POST of ${(SIZE / MB).toFixed(0)} MB to /v1/audio/transcriptions (sandbox key; bun ${Bun.version}, ${navigator.hardwareConcurrency} cores)`)
  console.log(`  answer:            ${answer.slice(0, 60)}…`)
  console.log(`  throughput:        ${(SIZE / MB / seconds).toFixed(0)} MB/s (${seconds.toFixed(2)} s)`)
  console.log(`  server RSS:        ${before.rss.toFixed(0)} MB before, ${peakSampled.toFixed(0)} MB highest sampled during, ${after.rss.toFixed(0)} MB after`)
  console.log(`  server peak (VmHWM, whole life): ${after.peak.toFixed(0)} MB -> target under ${TARGET_PEAK_MB} MB: ${after.peak < TARGET_PEAK_MB ? 'PASS' : 'MISS'}`)
  console.log(`  temporary folders left: ${left.length}`)
} finally {
  await server.stop()
}
