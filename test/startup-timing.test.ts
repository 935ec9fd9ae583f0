import { expect, test } from 'bun:test'
import { freePort, startServer, tempDir } from './helpers/process'

/** What bench/cold-start.ts reads: with NOTESVC_STARTUP_TIMING=1, `serve` says where its start went. */
async function serveStderr(env: Record<string, string>): Promise<string> {
  const d = tempDir('notesvc-timing-')
  const port = await freePort()
  const server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port}/v1/health`, { env: { NOTESVC_DATA_DIR: d.path, PORT: String(port), ...env } })
  // the job workers start a moment after the server answers: the report comes once they run
  for (let i = 0; i < 200; i++) {
    const health = await (await fetch(`http://127.0.0.1:${port}/v1/health?detail=1`)).json() as { workers?: number }
    if ((health.workers ?? 0) >= 1) break
    await Bun.sleep(25)
  }
  await server.stop()
  d.remove()
  return new Response(server.proc.stderr).text()
}

test('NOTESVC_STARTUP_TIMING=1: serve prints each start phase with its milliseconds, in order', async () => {
  const stderr = await serveStderr({ NOTESVC_STARTUP_TIMING: '1' })
  const phases = [...stderr.matchAll(/^startup: (.+?) \d+\.\d ms \(at \d+\.\d ms\)$/gm)].map(m => m[1])
  expect(phases).toEqual([
    'runtime and modules', 'config', 'database: open and pragmas', 'database: migrations', 'database: planner statistics',
    'database: read thread', 'services', 'first start: owner and keys', 'sweep temporary files', 'speech engine check',
    'app', 'listen', 'answering waiting requests first', 'workers',
  ])
})

test('without it, serve prints no timing lines', async () => {
  expect(await serveStderr({ NOTESVC_STARTUP_TIMING: '' })).not.toContain('startup:')
})
