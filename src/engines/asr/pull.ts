import { createReadStream, existsSync, statSync } from 'node:fs'
import { copyFile, mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { commandLine } from '../../command-name'
import { checkGgmlModel, GgmlModelError } from './ggml-file'
import { DEFAULT_MODELS_URL } from './models'
import { loadsInWhisper } from './whisper'

/**
 * SHA-1 of the published ggml models, from whisper.cpp's models/README.md (commit f0d2bfb, April 2025).
 * whisper.cpp publishes SHA-1 only, no SHA-256 list; Hugging Face sends a file's SHA-256 with a
 * download, which an offline import cannot ask for.
 */
const KNOWN_SHA1: Record<string, string> = {
  'tiny': 'bd577a113a864445d4c299885e0cb97d4ba92b5f',
  'tiny.en': 'c78c86eb1a8faa21b369bcd33207cc90d64ae9df',
  'base': '465707469ff3a37a2b9b8d8f89f2f99de7299dac',
  'base.en': '137c40403d78fd54d454da0f9bd998f78703390c',
  'small': '55356645c2b361a969dfd0ef2c5a50d530afd8d5',
  'small.en': 'db8a495a91d927739e50b3fc1cc4c6b8f6c2d022',
  'small.en-tdrz': 'b6c6e7e89af1a35c08e6de56b66ca6a02a2fdfa1',
  'medium': 'fd9727b6e1217c2f614f9b698455c4ffd82463b4',
  'medium.en': '8c30f0e44ce9560643ebd10bbe50cd20eafd3723',
  'large-v1': 'b1caaf735c4cc1429223d5a74f0f4d0b9b59a299',
  'large-v2': '0f4c8e34f21cf1a914c59d8b3ce882345ad349d6',
  'large-v2-q5_0': '00e39f2196344e901b3a2bd5814807a769bd1630',
  'large-v3': 'ad82bf6a9043ceed055076d0fd39f5f186ff8062',
  'large-v3-q5_0': 'e6e2ed78495d403bef4b7cff42ef4aaadcfea8de',
  'large-v3-turbo': '4af2b29d7ec73d781377bfd1758ca957a807e941',
  'large-v3-turbo-q5_0': 'e050f7970618a659205450ad97eb95a18d69c9ee',
}

/**
 * A model did not arrive. `network`: the host could not be reached or answered an error (exit 1, the
 * message names `models import`); `input`: the name or file given is wrong (exit 2); `check`: what
 * arrived failed its check (exit 1).
 */
export class PullError extends Error {
  constructor(message: string, readonly kind: 'network' | 'input' | 'check') {
    super(message)
  }
}

/** What to do on a host that cannot download: the file, fetched elsewhere, and `models import`. */
export function offlineAdvice(name: string, baseUrl = DEFAULT_MODELS_URL): string {
  const file = `ggml-${name}.bin`
  return `on a host without internet, download ${baseUrl.replace(/\/+$/, '')}/${file} on another machine, copy it here and run \`${commandLine(`models import ${file}`)}\``
}

export interface PullProgress {
  received: number
  total: number | null
}

export interface PullResult {
  path: string
  bytes: number
  resumed: boolean
  /** how the file was checked: against the server's SHA-256, the published SHA-1, or not at all */
  verified: 'sha256' | 'sha1' | 'none'
}

async function hashFile(path: string): Promise<{ sha1: string; sha256: string }> {
  const sha1 = new Bun.CryptoHasher('sha1')
  const sha256 = new Bun.CryptoHasher('sha256')
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    sha1.update(chunk as Buffer)
    sha256.update(chunk as Buffer)
  }
  return { sha1: sha1.digest('hex'), sha256: sha256.digest('hex') }
}

/** Hugging Face sends the SHA-256 of large files as (X-Linked-)ETag. */
function serverSha256(res: Response): string | null {
  for (const h of ['x-linked-etag', 'etag']) {
    const v = res.headers.get(h)?.replace(/^W\//, '').replaceAll('"', '').toLowerCase()
    if (v && /^[0-9a-f]{64}$/.test(v)) return v
  }
  return null
}

/**
 * Downloads `ggml-<name>.bin` into the models folder: into a `.part` file that a later run resumes
 * with a Range request, checked against the server's SHA-256 or the published SHA-1, then renamed
 * into place. A file that fails the check is removed.
 */
const MODEL_NAME = /^[A-Za-z0-9._-]+$/

export async function pullModel(o: {
  name: string
  modelsDir: string
  baseUrl?: string
  onProgress?: (p: PullProgress) => void
  fetch?: typeof fetch
}): Promise<PullResult> {
  if (!MODEL_NAME.test(o.name)) throw new PullError(`"${o.name}" is not a model name; try one of: ${Object.keys(KNOWN_SHA1).join(', ')}`, 'input')
  const doFetch = o.fetch ?? fetch
  const file = `ggml-${o.name}.bin`
  const dest = join(o.modelsDir, file)
  const part = `${dest}.part`
  await mkdir(o.modelsDir, { recursive: true })
  const url = `${(o.baseUrl ?? DEFAULT_MODELS_URL).replace(/\/+$/, '')}/${file}`

  const have = existsSync(part) ? statSync(part).size : 0
  let res: Response
  try {
    res = await doFetch(url, { headers: have ? { range: `bytes=${have}-` } : {}, redirect: 'follow' })
  } catch (err) {
    throw new PullError(`could not reach ${url} (${(err as Error).message}); check the network, set NOTESVC_MODELS_URL to a mirror, or ${offlineAdvice(o.name, o.baseUrl)}`, 'network')
  }
  if (res.status === 404) throw new PullError(`there is no model "${o.name}" at ${url}; known names: ${Object.keys(KNOWN_SHA1).join(', ')}`, 'input')
  if (res.status === 416 && have) {
    // The part file is already whole.
  } else if (res.status !== 200 && res.status !== 206) {
    throw new PullError(`${url} answered HTTP ${res.status}; try again later, set NOTESVC_MODELS_URL to a mirror, or ${offlineAdvice(o.name, o.baseUrl)}`, 'network')
  }
  const resumed = res.status === 206
  const length = Number(res.headers.get('content-length') ?? NaN)
  const total = res.status === 416 ? have : Number.isFinite(length) ? length + (resumed ? have : 0) : null
  const expected256 = serverSha256(res)

  if (res.status !== 416) {
    const out = await open(part, resumed ? 'a' : 'w')
    let received = resumed ? have : 0
    let lastReport = 0
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        await out.write(chunk)
        received += chunk.byteLength
        const now = performance.now()
        if (now - lastReport > 100) {
          lastReport = now
          o.onProgress?.({ received, total })
        }
      }
    } finally {
      await out.close()
    }
    o.onProgress?.({ received, total })
    if (total !== null && received !== total) {
      throw new PullError(`the download stopped at ${received} of ${total} bytes; run the same command again to resume, or ${offlineAdvice(o.name, o.baseUrl)}`, 'network')
    }
  }

  const { sha1, sha256 } = await hashFile(part)
  let verified: PullResult['verified'] = 'none'
  if (expected256) {
    if (sha256 !== expected256) {
      await rm(part, { force: true })
      throw new PullError(`the downloaded ${file} does not match the server's checksum (SHA-256 ${sha256}, expected ${expected256}); it was removed, run the command again`, 'check')
    }
    verified = 'sha256'
  } else if (KNOWN_SHA1[o.name]) {
    if (sha1 !== KNOWN_SHA1[o.name]) {
      await rm(part, { force: true })
      throw new PullError(`the downloaded ${file} does not match the published checksum (SHA-1 ${sha1}, expected ${KNOWN_SHA1[o.name]}); it was removed, run the command again`, 'check')
    }
    verified = 'sha1'
  }
  await rename(part, dest)
  return { path: dest, bytes: statSync(dest).size, resumed, verified }
}

export interface ImportResult {
  name: string
  path: string
  bytes: number
  sha256: string
  /** checked against whisper.cpp's published SHA-1 (the name is a known one), or not (an unknown name) */
  verified: 'sha1' | 'none'
  /** whisper.cpp loaded it, or its addon cannot run on this host (the file's structure was still checked) */
  loaded: 'loaded' | 'unavailable'
  tensors: number
}

/**
 * Copies a ggml model brought from another machine into the models folder as `ggml-<name>.bin` (the
 * name given, else the file's own `ggml-<name>.bin` name). The file is checked where it is first —
 * read through as whisper.cpp reads it (ggml-file.ts) and its SHA-1 compared with whisper.cpp's
 * published one when the name is known — so a bad file costs no copy; then copied to a temporary name
 * in the folder, loaded with whisper.cpp, and renamed into place.
 */
export async function importModel(o: { file: string; modelsDir: string; name?: string }): Promise<ImportResult> {
  if (!existsSync(o.file) || !statSync(o.file).isFile()) throw new PullError(`there is no file ${o.file}; name a ggml model file such as ggml-base.en.bin`, 'input')
  const name = o.name ?? /^ggml-(.+)\.bin$/.exec(basename(o.file))?.[1]
  if (!name) throw new PullError(`${basename(o.file)} is not named ggml-<name>.bin; say which model it is with --name, for example --name base.en`, 'input')
  if (!MODEL_NAME.test(name)) throw new PullError(`"${name}" is not a model name (letters, digits, dots, dashes); for example --name base.en`, 'input')
  let tensors: number
  try {
    tensors = checkGgmlModel(o.file).tensors
  } catch (err) {
    if (err instanceof GgmlModelError) throw new PullError(`${o.file} is not a whole whisper.cpp model: ${err.message}; nothing was copied. Copy the file again, or download it again`, 'input')
    throw err
  }
  const { sha1, sha256 } = await hashFile(o.file)
  const known = KNOWN_SHA1[name]
  if (known && sha1 !== known) {
    throw new PullError(`${o.file} is not whisper.cpp's published ${name} model (SHA-1 ${sha1}, expected ${known}); nothing was copied. Copy or download it again, or import it under another name with --name`, 'input')
  }
  await mkdir(o.modelsDir, { recursive: true })
  const dest = join(o.modelsDir, `ggml-${name}.bin`)
  const staged = join(o.modelsDir, `.import-${process.pid}-${Date.now()}.part`)
  try {
    await copyFile(o.file, staged)
    const loaded = await loadsInWhisper(staged).catch((err: Error) => {
      throw new PullError(`whisper.cpp could not load ${o.file} (${err.message}); nothing was copied`, 'input')
    })
    await rename(staged, dest)
    return { name, path: dest, bytes: statSync(dest).size, sha256, verified: known ? 'sha1' : 'none', loaded, tensors }
  } finally {
    await rm(staged, { force: true })
  }
}
