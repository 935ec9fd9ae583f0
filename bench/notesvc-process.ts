import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/**
 * A notesvc server as its own process on a fresh data folder: waits for its first-start live key and
 * for /v1/health; stop() ends it and removes the folder.
 */
export async function startNotesvc(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-bench-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const proc = Bun.spawn(['bun', 'run', join(ROOT, 'src/cli.ts'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), NOTESVC_DATA_DIR: dataDir },
    stdout: 'pipe',
    stderr: 'ignore',
  })
  const stop = async () => {
    proc.kill()
    await proc.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const reader = proc.stdout.getReader()
    let out = ''
    while (!/sandbox key: +\S+/.test(out)) {
      const { value, done } = await reader.read()
      if (done) throw new Error('notesvc exited before printing its first key')
      out += new TextDecoder().decode(value)
    }
    const key = /live key: +(\S+)/.exec(out)![1]!
    const sandboxKey = /sandbox key: +(\S+)/.exec(out)![1]!
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/v1/health`)).ok) break
      } catch {
        if (i > 500) throw new Error('notesvc did not answer /v1/health')
        await Bun.sleep(20)
      }
    }
    return { base, key, sandboxKey, dataDir, pid: proc.pid, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
