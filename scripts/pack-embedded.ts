/**
 * The build's plugin that embeds the large files of the binary packed, not as they are: the native
 * libraries and addons of sherpa-onnx and whisper.cpp with zstd (unpacked on first use by
 * src/engines/embedded-native.ts, which also takes them unpacked, as a plain `bun build --compile`
 * embeds them), and the API reference's script with gzip (src/modules/discovery/docs.ts sends it
 * as it is, `Content-Encoding: gzip`). 37 MB become 10 MB; nothing is unpacked at start-up.
 *
 * zstd at level 19 takes about 20 s for onnxruntime, so each packed file is kept in
 * node_modules/.cache/notesvc-build/, named by the hash of what it packs, and made again only when
 * that changes (a new version of the package).
 */
import { mkdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import type { BunPlugin } from 'bun'

type Codec = 'zstd' | 'gzip'

/** What is packed: each matched file is embedded packed, whichever way it is imported. */
const PACKED: { files: RegExp; codec: Codec }[] = [
  // sherpa-native.ts and whisper.ts load these through embedded-native.ts
  { files: /\/node_modules\/sherpa-onnx-linux-x64\/[^/]+\.(so|node)$/, codec: 'zstd' },
  { files: /\/node_modules\/@fugood\/node-whisper-linux-x64\/index\.node$/, codec: 'zstd' },
  // docs.ts serves it gzipped; every browser takes gzip (not all take zstd or, over plain HTTP, brotli)
  { files: /\/node_modules\/@scalar\/api-reference\/dist\/browser\/standalone\.js$/, codec: 'gzip' },
]

const LEVEL = { zstd: 19, gzip: 9 } as const

/** A packed file: its path in the project, its size before and after. */
export interface PackedFile { path: string; codec: Codec; original: number; packed: number }

async function pack(bytes: Uint8Array<ArrayBuffer>, codec: Codec): Promise<Uint8Array> {
  if (codec === 'gzip') return Bun.gzipSync(bytes, { level: LEVEL.gzip })
  return Bun.zstdCompress(bytes, { level: LEVEL.zstd })
}

/** The packed bytes of a file, from the cache when it has them. */
async function packedBytes(path: string, codec: Codec, cacheDir: string): Promise<{ original: number; bytes: Uint8Array }> {
  const bytes = await Bun.file(path).bytes()
  const hash = new Bun.CryptoHasher('sha256').update(bytes).digest('hex').slice(0, 32)
  const cached = Bun.file(join(cacheDir, `${hash}.${codec}${LEVEL[codec]}`))
  if (await cached.exists()) return { original: bytes.length, bytes: await cached.bytes() }
  const packed = await pack(bytes, codec)
  mkdirSync(cacheDir, { recursive: true })
  const part = `${cached.name}.${process.pid}.part`
  await Bun.write(part, packed)
  renameSync(part, cached.name!)
  return { original: bytes.length, bytes: packed }
}

/** The plugin; `packed` receives each file it packed, for the build's table of parts. */
export function packEmbedded(root: string, packed: PackedFile[]): BunPlugin {
  const cacheDir = join(root, 'node_modules', '.cache', 'notesvc-build')
  return {
    name: 'pack-embedded',
    setup(build) {
      for (const { files, codec } of PACKED) {
        build.onLoad({ filter: files }, async args => {
          const { original, bytes } = await packedBytes(args.path, codec, cacheDir)
          packed.push({ path: args.path.slice(root.length + 1), codec, original, packed: bytes.length })
          return { contents: bytes, loader: 'file' }
        })
      }
    },
  }
}
