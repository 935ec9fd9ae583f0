/**
 * Native files (Node-API addons and the shared libraries they need) inside a compiled binary, written
 * out to a real folder before they are loaded: the dynamic linker cannot read the binary's embedded
 * file system (`/$bunfs/…`). scripts/build.ts embeds them packed with zstd (onnxruntime's 27 MB
 * become 6.5 MB of binary), so they are unpacked here, on first use; a binary built without that step
 * (a plain `bun build --compile`) embeds them as they are, which works too.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** True for a path inside a compiled binary's embedded file system. */
export const isEmbedded = (path: string): boolean => path.startsWith('/$bunfs/')

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd]
const isZstd = (bytes: Uint8Array) => ZSTD_MAGIC.every((b, i) => bytes[i] === b)

/**
 * A folder only this user can write, so nobody else can put a library there for us to load:
 * `$TMPDIR/<name>-<uid>` when it is ours and private, else a new one.
 */
export function privateFolder(name: string): string {
  const uid = process.getuid?.() ?? 0
  const dir = join(tmpdir(), `${name}-${uid}`)
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch {
    // there already: used only if it is a real folder of ours that others cannot write
  }
  const st = lstatSync(dir)
  if (st.isDirectory() && st.uid === (process.getuid?.() ?? st.uid) && (st.mode & 0o022) === 0) return dir
  return mkdtempSync(join(tmpdir(), `${name}-`))
}

/**
 * Writes an embedded file, unpacked, to `dir/name` and returns that path; a file already there with
 * the same size is kept (another process of the same binary may have it loaded). Synchronous, for
 * the synchronous `require`; unpacking onnxruntime takes about 0.1 s, once per process.
 */
export function extractEmbedded(embedded: string, dir: string, name: string): string {
  const stored = readFileSync(embedded)
  const bytes = isZstd(stored) ? Bun.zstdDecompressSync(stored) : stored
  const path = join(dir, name)
  if (existsSync(path) && statSync(path).size === bytes.length) return path
  const part = `${path}.${process.pid}.part`
  writeFileSync(part, bytes, { mode: 0o600 })
  renameSync(part, path)
  return path
}

/**
 * The addon from what `require('….node')` returned: the addon itself from source (or from a plain
 * `bun build --compile`, which writes it out on its own), or, in a binary from scripts/build.ts,
 * which embeds it packed as a file, that file's path: unpacked to `$TMPDIR/<folder>-<uid>/<name>`
 * and loaded from there.
 */
export function addonFrom(required: unknown, folder: string, name: string): unknown {
  return typeof required === 'string' ? require(extractEmbedded(required, privateFolder(folder), name)) : required
}
