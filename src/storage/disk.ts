import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import type { LocalCopy, MediaStorage, PartialWrite, StorageBackend, StoredObject, UploadBody, UploadTarget } from './storage'
import { TooLargeError } from './storage'
import { uploadUrl } from './signed-url'

/**
 * Media on this machine's disk, under `<data>/media`: the upload PUT comes to this server (a URL it
 * signs) and is streamed to a temporary name beside its key, renamed into place only when complete,
 * so a failed or oversized upload leaves nothing behind; a process killed mid-write leaves the
 * temporary file, which start-up reclaims (`partialWrites`). A backup copies the files.
 */
interface DiskStorage extends MediaStorage {
  readonly receiveUpload: NonNullable<MediaStorage['receiveUpload']>
  pathOf(key: string): string
}

/** `receiveUpload`'s temporary name: hidden, beside the final file, unique per write. */
const partialName = (name: string) => `.${name}.${crypto.randomUUID()}.part`
const PARTIAL_NAME = /^\.(.+)\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.part$/

/** Writes a stream of unknown length, counting as it goes and stopping past `maxBytes`. */
async function writeCounting(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number): Promise<number> {
  const sink = Bun.file(path).writer({ highWaterMark: 1 << 20 })
  let written = 0
  let unflushed = 0
  try {
    for await (const chunk of body) {
      written += chunk.byteLength
      if (written > maxBytes) throw new TooLargeError(`the file is larger than ${maxBytes} bytes`)
      sink.write(chunk)
      unflushed += chunk.byteLength
      // Wait for the disk every 8 MB, so a fast sender cannot fill memory.
      if (unflushed >= 8 << 20) {
        await sink.flush()
        unflushed = 0
      }
    }
  } finally {
    await sink.end()
  }
  return written
}

/** `secret` signs upload URLs: the key itself, or how to read it (kept in the database, read when first needed). */
export function createDiskStorage(opts: { root: string; publicUrl: string; secret: string | (() => Promise<string>) }): DiskStorage {
  const root = resolve(opts.root)

  function pathOf(key: string): string {
    const p = resolve(root, key)
    if (!p.startsWith(root + sep)) throw new Error(`storage key escapes the media folder: ${key}`)
    return p
  }

  return {
    name: 'disk',
    pathOf,
    browserOrigins: [],

    async uploadTarget(key: string, contentType: string, expiresAt: Date): Promise<UploadTarget> {
      const noteId = key.split('/').at(-1)!
      const secret = typeof opts.secret === 'string' ? opts.secret : await opts.secret()
      return { url: uploadUrl(opts.publicUrl, secret, noteId, expiresAt), headers: { 'Content-Type': contentType } }
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

    async read(key: string, range?: { start: number; end: number }): Promise<Blob> {
      const file = Bun.file(pathOf(key))
      return range ? file.slice(range.start, range.end + 1) : file
    },

    async delete(key: string): Promise<void> {
      await rm(pathOf(key), { force: true })
    },

    async put(key: string, body: Uint8Array | { path: string }): Promise<void> {
      const final = pathOf(key)
      await mkdir(dirname(final), { recursive: true })
      const temp = join(dirname(final), partialName(basename(final)))
      try {
        await Bun.write(temp, body instanceof Uint8Array ? body : Bun.file(body.path))
        const file = await open(temp, 'r+')
        await file.sync()
        await file.close()
        await rename(temp, final)
      } catch (err) {
        await rm(temp, { force: true })
        throw err
      }
    },

    async partialWrites(): Promise<PartialWrite[]> {
      let names: string[]
      try {
        names = await readdir(root, { recursive: true })
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
        throw err
      }
      const found: PartialWrite[] = []
      for (const name of names) {
        const m = PARTIAL_NAME.exec(basename(name))
        if (!m) continue
        const path = join(root, name)
        const s = await stat(path).catch(() => null)
        if (!s?.isFile()) continue
        found.push({ key: relative(root, join(dirname(path), m[1]!)).split(sep).join('/'), path, bytes: s.size, modifiedAt: s.mtime })
      }
      return found
    },

    async removePartialWrite(write: PartialWrite): Promise<void> {
      await rm(write.path, { force: true })
    },

    async receiveUpload(key: string, body: UploadBody, maxBytes: number, declaredLength?: number): Promise<number> {
      const final = pathOf(key)
      await mkdir(dirname(final), { recursive: true })
      const temp = join(dirname(final), partialName(basename(final)))
      try {
        let written: number
        if (declaredLength !== undefined && body instanceof ReadableStream) {
          // The length is known and within the limit (HTTP framing stops the body there): Bun copies
          // the stream to the file natively, a few MB of memory whatever the size.
          await Bun.write(temp, new Response(body))
          written = (await stat(temp)).size
          if (written !== declaredLength) throw new TooLargeError(`the body was ${written} bytes, not the ${declaredLength} announced`)
        } else {
          written = await writeCounting(temp, body as AsyncIterable<Uint8Array>, maxBytes)
        }
        if (written > maxBytes) throw new TooLargeError(`the file is larger than ${maxBytes} bytes`)
        const file = await open(temp, 'r+')
        await file.sync()
        await file.close()
        await rename(temp, final)
        return written
      } catch (err) {
        await rm(temp, { force: true })
        throw err
      }
    },
  }
}

/** `NOTESVC_STORAGE=disk` (the default): no variables of its own; the folder is the data folder's `media`. */
export const diskBackend: StorageBackend<Record<string, never>> = {
  name: 'disk',
  variables: [],
  sharedByMachines: false,
  settings: () => ({}),
  open: (_settings, place) => createDiskStorage({ root: join(place.dataDir, 'media'), publicUrl: place.publicUrl, secret: place.uploadSecret }),
  check: (_settings, place) => ({ ok: true, detail: `disk, under ${place.dataDir}` }),
  backup(_settings, dataDir) {
    const media = createDiskStorage({ root: join(dataDir, 'media'), publicUrl: 'http://localhost', secret: '' })
    return { copied: true, folder: join(dataDir, 'media'), fileOf: media.pathOf }
  },
}
