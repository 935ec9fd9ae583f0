/**
 * Memory and speed of the disk PUT target: streams a large file (1 GB by default) to a notesvc server
 * running as its own process, samples the server's resident memory while it arrives, and reports the
 * peak and the throughput.
 *
 *   bun run bench/upload.ts                 # 1 GB
 *   BENCH_UPLOAD_MB=256 bun run bench/upload.ts
 */
import { processMemory, startNotesvc } from './notesvc-process'

const MB = 1024 * 1024
const SIZE = Number(process.env.BENCH_UPLOAD_MB ?? 1024) * MB
const TARGET_PEAK_MB = 150

/** `size` bytes made on the fly in 1 MB blocks, so the client holds no more than a block either. */
function generatedBody(size: number): ReadableStream<Uint8Array> {
  const block = crypto.getRandomValues(new Uint8Array(MB))
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close()
      const n = Math.min(MB, size - sent)
      controller.enqueue(n === MB ? block : block.subarray(0, n))
      sent += n
    },
  })
}

const server = await startNotesvc()
const base = server.base
try {
  const auth = server.headers
  const upload = (await (await fetch(`${base}/v1/uploads`, { method: 'POST', headers: auth, body: JSON.stringify({ fileName: 'big.mp4', contentType: 'video/mp4', fileSize: SIZE }) })).json()) as { uploadUrl: string; headers: Record<string, string> }

  const before = processMemory(server.pid)
  let peakSampled = before.rss
  const sampler = setInterval(() => { peakSampled = Math.max(peakSampled, processMemory(server.pid).rss) }, 20)
  const started = performance.now()
  const res = await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.headers, body: generatedBody(SIZE), duplex: 'half' } as RequestInit)
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  const after = processMemory(server.pid)
  const answer = await res.text()
  if (res.status !== 200) throw new Error(`the PUT answered ${res.status}: ${answer}`)

  console.log(`PUT of ${(SIZE / MB).toFixed(0)} MB to disk storage through notesvc (bun ${Bun.version}, ${navigator.hardwareConcurrency} cores)`)
  console.log(`  answer:            ${answer}`)
  console.log(`  throughput:        ${(SIZE / MB / seconds).toFixed(0)} MB/s (${seconds.toFixed(2)} s)`)
  console.log(`  server RSS:        ${before.rss.toFixed(0)} MB before, ${peakSampled.toFixed(0)} MB highest sampled during, ${after.rss.toFixed(0)} MB after`)
  console.log(`  server peak (VmHWM, whole life): ${after.peak.toFixed(0)} MB -> target under ${TARGET_PEAK_MB} MB: ${after.peak < TARGET_PEAK_MB ? 'PASS' : 'MISS'}`)
} finally {
  await server.stop()
}
