/**
 * Loads sherpa-onnx's prebuilt Node-API addon, `sherpa-onnx-linux-x64` 1.13.8 (the platform package
 * of `sherpa-onnx-node`; onnxruntime 1.28.2), imported only by `loadSherpaAddon` in sherpa.ts, on
 * first use.
 *
 * The addon is three files: `sherpa-onnx.node`, which needs `libsherpa-onnx-c-api.so`, which needs
 * `libonnxruntime.so`, found through the RUNPATH `$ORIGIN` (beside it). From source that just works.
 * In a `bun build --compile` binary the addon (required by a literal path, as whisper's addon is) is
 * written out on its own, where `$ORIGIN` has no libraries. So the two libraries are embedded too
 * (`with { type: 'file' }`; 32 MB, 8 MB packed by scripts/build.ts), written once to a private
 * folder, `$TMPDIR/notesvc-sherpa-onnx-<version>-<uid>/`, and loaded by path first: the dynamic
 * linker then satisfies the addon's `libsherpa-onnx-c-api.so` from the library already loaded under
 * that name (../embedded-native.ts). We do not use `sherpa-onnx-node`'s own loader (addon.js): it
 * tries relative paths and `$PWD/node_modules`, which a compiled binary does not have.
 */
import { dlopen } from 'bun:ffi'
import onnxruntimeLibrary from 'sherpa-onnx-linux-x64/libonnxruntime.so' with { type: 'file' }
import sherpaCApiLibrary from 'sherpa-onnx-linux-x64/libsherpa-onnx-c-api.so' with { type: 'file' }
import { addonFrom, extractEmbedded, isEmbedded, privateFolder } from '../embedded-native'

const SHERPA_ONNX_VERSION = '1.13.8'
const FOLDER = `notesvc-sherpa-onnx-${SHERPA_ONNX_VERSION}`

// Kept so the libraries stay loaded for the life of the process.
const loaded: unknown[] = []

export async function requireSherpaAddon(): Promise<unknown> {
  if (isEmbedded(onnxruntimeLibrary) && loaded.length === 0) {
    const dir = privateFolder(FOLDER)
    loaded.push(dlopen(extractEmbedded(onnxruntimeLibrary, dir, 'libonnxruntime.so'), { OrtGetApiBase: { args: [], returns: 'ptr' } }))
    loaded.push(dlopen(extractEmbedded(sherpaCApiLibrary, dir, 'libsherpa-onnx-c-api.so'), { SherpaOnnxGetVersionStr: { args: [], returns: 'ptr' } }))
  }
  // A literal path, so that `bun build --compile` embeds the addon in the binary.
  return addonFrom(require('sherpa-onnx-linux-x64/sherpa-onnx.node'), FOLDER, 'sherpa-onnx.node')
}
