import { mkdir, open, rename, rm, stat } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import type { LocalCopy, MediaStorage, StoredObject, UploadTarget } from './storage'
import { TooLargeError } from './storage'
import { uploadUrl } from './signed-url'

export interface DiskStorage extends MediaStorage {
  readonly kind: 'disk'
  /**
   * Streams `body` to `key` with constant memory: written to a temporary name beside it and renamed
   * into place only when complete, so a failed or oversized upload leaves nothing behind.
   */
  write(key: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number): Promise<number>
  pathOf(key: string): string
}

export function createDiskStorage(opts: { root: string; publicUrl: string; secret: string }): DiskStorage {
  const root = resolve(opts.root)

  function pathOf(key: string): string {
    const p = resolve(root, key)
    if (!p.startsWith(root + sep)) throw new Error(`storage key escapes the media folder: ${key}`)
    return p
  }

  return {
    kind: 'disk',
    pathOf,

    async uploadTarget(key: string, contentType: string, expiresAt: Date): Promise<UploadTarget> {
      const noteId = key.split('/').at(-1)!
      return { url: uploadUrl(opts.publicUrl, opts.secret, noteId, expiresAt), headers: { 'Content-Type': contentType } }
    },

    async stat(key: string): Promise<StoredObject | null> {
      try {
        const s = await stat(pathOf(key))
        return s.isFile() ? { size: s.size } : null
      } catch {
        return null
      }
    },

    async localCopy(key: string): Promise<LocalCopy> {
      return { path: pathOf(key), release: async () => {} }
    },

    async delete(key: string): Promise<void> {
      await rm(pathOf(key), { force: true })
    },

    async write(key: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number): Promise<number> {
      const final = pathOf(key)
      await mkdir(dirname(final), { recursive: true })
      const temp = join(dirname(final), `.${key.split('/').at(-1)}.${crypto.randomUUID()}.part`)
      const file = await open(temp, 'w')
      let written = 0
      try {
        for await (const chunk of body) {
          written += chunk.byteLength
          if (written > maxBytes) throw new TooLargeError(`the file is larger than ${maxBytes} bytes`)
          await file.write(chunk)
        }
        await file.sync()
        await file.close()
        await rename(temp, final)
        return written
      } catch (err) {
        await file.close().catch(() => {})
        await rm(temp, { force: true })
        throw err
      }
    },
  }
}
