import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** Temporary folders of dead processes are removed at start; a live process's only after this long. */
const STALE_TEMP_MS = 24 * 3600 * 1000

/**
 * The temporary folders of the OpenAI-compatible requests, in `<data>/tmp`, each named after the
 * process that made it (`openai-<pid>-…`) so a sweep can tell whose it is.
 */
export function createRequestTempDirs(deps: { dataDir: string; log?: { info(msg: string, fields?: Record<string, unknown>): void } }) {
  const root = join(deps.dataDir, 'tmp')

  return {
    /** A temporary folder for one request, removed when `fn` ends. */
    async withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
      await mkdir(root, { recursive: true })
      const dir = await mkdtemp(join(root, `openai-${process.pid}-`))
      try {
        return await fn(dir)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },

    /**
     * Removes the temporary folders a killed process left (its pid no longer runs, or they are older
     * than a day), never those of a process still serving: several processes may share the data folder.
     */
    async sweepTemporaryFiles(now = Date.now()): Promise<{ folders: number }> {
      let names: string[]
      try {
        names = await readdir(root)
      } catch {
        return { folders: 0 }
      }
      let folders = 0
      for (const name of names) {
        const m = /^openai-(\d+)-/.exec(name)
        if (!m) continue
        const dir = join(root, name)
        const pid = Number(m[1])
        const info = await stat(dir).catch(() => null)
        const stale = !info || now - info.mtimeMs > STALE_TEMP_MS
        if (pid !== process.pid && (stale || !isRunning(pid))) {
          await rm(dir, { recursive: true, force: true })
          folders++
        }
      }
      if (folders) deps.log?.info('removed the temporary files of interrupted OpenAI-compatible transcriptions', { folders })
      return { folders }
    },
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
