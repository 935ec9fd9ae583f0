/**
 * Builds `@notesvc/client/testing`: src/testing/index.ts and the server under it bundled into one
 * file, packages/client/dist/testing/index.js (or the folder given as the first argument), with its
 * index.d.ts. The server's source cannot ship as it is: its Bun macro (db/sqlite-snapshot.ts, the
 * migrated schema's image) runs only from the project, and docs.ts imports a file of node_modules by
 * its relative path; bundled, the macro's result and the files are in the output.
 *
 * - target bun (the kit runs inside `bun test`); identifiers kept (Elysia's compiled validators rely
 *   on them, as scripts/build.ts says).
 * - external: @notesvc/client itself (the kit's clients and the application's are the same module,
 *   so its error classes are the same classes) and the package's own dependencies.
 * - the native engines' addons are not carried (the tarball would be 30 MB): whisper.cpp's is
 *   required from node_modules when installed; sherpa-onnx's libraries, imported statically by
 *   engines/diarization/sherpa-native.ts, become a note that they are absent. The sandbox, and
 *   `engines: 'installed'` with PocketSphinx or the whisper.cpp addon, do not need them.
 * - the API reference's script (@scalar, 3.5 MB) is written gzipped beside the bundle (docs.ts sends it
 *   gzipped as it is).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { BunPlugin } from 'bun'

const ROOT = resolve(import.meta.dir, '..')
const outdir = resolve(process.argv[2] ?? join(ROOT, 'packages/client/dist/testing'))
const clientPackage = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> }

const SCALAR = /\/node_modules\/@scalar\/api-reference\/dist\/browser\/standalone\.js$/
const SCALAR_OUT = 'scalar-standalone.js.gz'
const SHERPA = /^sherpa-onnx-linux-x64\//

/** The two files the bundle cannot carry as they are (see above). */
const kitAssets: BunPlugin = {
  name: 'notesvc-testing-assets',
  setup(build) {
    build.onLoad({ filter: SCALAR }, async args => {
      writeFileSync(join(outdir, SCALAR_OUT), Bun.gzipSync(await Bun.file(args.path).bytes(), { level: 9 }))
      return { loader: 'js', contents: `export default Bun.fileURLToPath(new URL('./${SCALAR_OUT}', import.meta.url))` }
    })
    build.onResolve({ filter: SHERPA }, args => ({ path: args.path, namespace: 'absent-native' }))
    build.onLoad({ filter: /.*/, namespace: 'absent-native' }, args => ({
      loader: 'js',
      contents: `export default ${JSON.stringify(`/nonexistent/${args.path} (not carried by @notesvc/client/testing: use NOTESVC_DIARIZATION=builtin or off)`)}`,
    }))
  },
}

rmSync(outdir, { recursive: true, force: true })
mkdirSync(outdir, { recursive: true })
const started = performance.now()
const result = await Bun.build({
  entrypoints: [join(ROOT, 'src/testing/index.ts')],
  outdir,
  naming: { entry: '[name].[ext]', asset: '[name]-[hash].[ext]' },
  target: 'bun',
  format: 'esm',
  minify: { whitespace: true, syntax: true },
  sourcemap: 'none',
  external: [clientPackage.name, ...Object.keys(clientPackage.dependencies ?? {}), '@fugood/node-whisper-linux-x64'],
  plugins: [kitAssets],
  throw: false,
})
if (!result.success) {
  for (const log of result.logs) process.stderr.write(`${String(log)}\n`)
  process.stderr.write('build of the test kit failed; see the messages above\n')
  process.exit(1)
}
// the declarations: src/testing/types.ts holds only types, so it is its own declaration file
const types = readFileSync(join(ROOT, 'src/testing/types.ts'), 'utf8')
writeFileSync(join(outdir, 'index.d.ts'), `${types}\n/** Starts a real notesvc in this process (see Kit). */\nexport declare function startNotesvc(options?: KitOptions): Promise<Kit>\n`)
for (const output of result.outputs) process.stderr.write(`${output.path.slice(outdir.length + 1)} ${(output.size / 1024).toFixed(0)} KB\n`)
process.stderr.write(`built the test kit into ${outdir} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
