import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { diarizationModelPaths } from '../../src/engines/diarization/models'
import { tinyEmbeddingModel, tinySegmentationModel } from '../fixtures/onnx-model'
import { speechWav } from '../fixtures/speech'
import { apiClient, firstStartKey, freePort, startServer, tempDir, until } from '../helpers/process'

/**
 * `notesvc serve` with a diarization model whose metadata is sound and whose graph is broken (issue
 * 29, item 10c), as a file copied in by hand (not through `models import`) would be: the first job
 * tries the files in a child process, which dies instead of the server; the server goes on with the
 * builtin engine, the note gets its speakers, health names the engine in use, and the log says
 * which file and what to do.
 */
const dir = tempDir('notesvc-broken-models-')
let server: Awaited<ReturnType<typeof startServer>> | null = null
afterAll(async () => {
  await server?.stop()
  dir.remove()
})

test('serve lives on with the builtin engine; the note has its speakers', async () => {
  const modelsDir = join(dir.path, 'models')
  mkdirSync(join(modelsDir, 'diarization'), { recursive: true })
  const paths = diarizationModelPaths(modelsDir)
  writeFileSync(paths.segmentation, tinySegmentationModel({ unknownOperator: true }))
  writeFileSync(paths.embedding, tinyEmbeddingModel())
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, {
    env: { PORT: String(port), NOTESVC_DATA_DIR: join(dir.path, 'data'), NOTESVC_MODELS_DIR: modelsDir, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_WORKERS: '1', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' },
    timeoutMs: 30_000,
  })
  let said = ''
  void (async () => { for await (const chunk of server!.proc.stderr as unknown as AsyncIterable<Uint8Array>) said += new TextDecoder().decode(chunk) })()
  const call = apiClient(base, await firstStartKey(server.proc.stdout))
  expect((await (await fetch(`${base}/v1/health`)).json()).engines.diarization).toBe('sherpa-onnx')

  const wav = speechWav(12)
  const up = (await call('POST', '/v1/uploads', { fileName: 'talk.wav', contentType: 'audio/wav', fileSize: wav.length })).body
  expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
  expect((await call('POST', `/v1/uploads/${up.noteId}/complete`)).status).toBe(202)
  const end = await until('the note ends', async () => {
    if (server!.proc.exitCode !== null || server!.proc.signalCode !== null) throw new Error(`serve ended (${server!.proc.exitCode ?? server!.proc.signalCode}):\n${said.slice(-1500)}`)
    const s = (await call('GET', `/v1/notes/${up.noteId}/status`)).body
    return s.status === 'Summarizing' ? null : s
  }, 90_000, 200)
  expect({ status: end.status, errorCode: end.errorCode }).toEqual({ status: 'Done', errorCode: null })
  expect((await call('GET', `/v1/notes/${up.noteId}/speakers`)).body.data.length).toBeGreaterThan(0)
  expect((await (await fetch(`${base}/v1/health`)).json()).engines.diarization).toBe('builtin')
  expect(said).toContain('sherpa-onnx cannot run here; the builtin diarization engine is used instead')
  expect(said).toContain(`${paths.segmentation} is not a segmentation model it can run`)
  expect([server.proc.exitCode, server.proc.signalCode]).toEqual([null, null])
}, 150_000)
