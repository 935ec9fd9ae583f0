/**
 * Loads sherpa-onnx's prebuilt Node-API addon, `sherpa-onnx-linux-x64` 1.13.8 (the platform package
 * of `sherpa-onnx-node`; onnxruntime 1.28.2), imported only by `loadSherpaAddon` in sherpa.ts, on
 * first use.
 *
 * The addon is three files: `sherpa-onnx.node`, which needs `libsherpa-onnx-c-api.so`, which needs
 * `libonnxruntime.so`, found through the RUNPATH `$ORIGIN` (beside it). From source that just works.
 * In a `bun build --compile` binary Bun embeds the `.node` (required by a literal path, as whisper's
 * addon is) and extracts it alone to $TMPDIR, where `$ORIGIN` has no libraries. So the two libraries
 * are embedded too (`with { type: 'file' }`, 32 MB), written once to a private folder,
 * `$TMPDIR/notesvc-sherpa-onnx-<version>-<uid>/`, and loaded by path first: the dynamic linker then
 * satisfies the addon's `libsherpa-onnx-c-api.so` from the library already loaded under that name.
 * We do not use `sherpa-onnx-node`'s own loader (addon.js): it tries relative paths and
 * `$PWD/node_modules`, which a compiled binary does not have.
 */
import { dlopen } from 'bun:ffi'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import onnxruntimeLibrary from 'sherpa-onnx-linux-x64/libonnxruntime.so' with { type: 'file' }
import sherpaCApiLibrary from 'sherpa-onnx-linux-x64/libsherpa-onnx-c-api.so' with { type: 'file' }

export const SHERPA_ONNX_VERSION = '1.13.8'

// Kept so the libraries stay loaded for the life of the process.
const loaded: unknown[] = []

/**
 * A folder only this user can write, so nobody else can put a library there for us to load:
 * `$TMPDIR/notesvc-sherpa-onnx-<version>-<uid>` when it is ours and private, else a new one.
 */
function privateFolder(): string {
  const dir = join(tmpdir(), `notesvc-sherpa-onnx-${SHERPA_ONNX_VERSION}-${process.getuid?.() ?? 0}`)
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch {
    // there already: used only if it is a real folder of ours that others cannot write
  }
  const st = lstatSync(dir)
  if (st.isDirectory() && st.uid === (process.getuid?.() ?? st.uid) && (st.mode & 0o022) === 0) return dir
  return mkdtempSync(join(tmpdir(), `notesvc-sherpa-onnx-${SHERPA_ONNX_VERSION}-`))
}

/** Copies an embedded library to a real file (dlopen cannot read Bun's embedded file system). */
async function extracted(dir: string, embedded: string, name: string): Promise<string> {
  const path = join(dir, name)
  const bytes = Bun.file(embedded)
  if (existsSync(path) && statSync(path).size === bytes.size) return path
  const part = `${path}.${process.pid}.part`
  writeFileSync(part, new Uint8Array(await bytes.arrayBuffer()), { mode: 0o600 })
  renameSync(part, path)
  return path
}

export async function requireSherpaAddon(): Promise<unknown> {
  if (onnxruntimeLibrary.startsWith('/$bunfs/') && loaded.length === 0) {
    const dir = privateFolder()
    loaded.push(dlopen(await extracted(dir, onnxruntimeLibrary, 'libonnxruntime.so'), { OrtGetApiBase: { args: [], returns: 'ptr' } }))
    loaded.push(dlopen(await extracted(dir, sherpaCApiLibrary, 'libsherpa-onnx-c-api.so'), { SherpaOnnxGetVersionStr: { args: [], returns: 'ptr' } }))
  }
  // A literal path, so that `bun build --compile` embeds the addon in the binary.
  return require('sherpa-onnx-linux-x64/sherpa-onnx.node')
}
