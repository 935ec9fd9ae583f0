/**
 * Builds the published client: dist/index.js (one ES module for browsers, Node and Bun, its two
 * dependencies left as imports) and its declarations dist/*.d.ts, emitted by TypeScript 5's tsc
 * (the `typescript5` devDependency: TypeScript 7's declaration emit is not relied on).
 * dist/testing/ (the test kit) is built by its own script and left alone here.
 *
 *   bun packages/client/scripts/build.ts              builds packages/client/dist
 *   bun packages/client/scripts/build.ts --out DIR    builds DIR instead (the tests' builds)
 */
import { readdirSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

const PACKAGE = resolve(import.meta.dir, '..')
const outAt = process.argv.indexOf('--out')
const DIST = outAt >= 0 ? resolve(process.argv[outAt + 1] ?? '') : join(PACKAGE, 'dist')
const TSC = resolve(PACKAGE, '../../node_modules/typescript5/bin/tsc')

/** The client's own files in dist (everything but the kit's testing/), removed before a build. */
function cleanDist() {
  let names: string[] = []
  try {
    names = readdirSync(DIST)
  } catch {
    return
  }
  for (const name of names) if (name !== 'testing') rmSync(join(DIST, name), { recursive: true, force: true })
}

async function build() {
  cleanDist()
  const bundle = await Bun.build({
    entrypoints: [join(PACKAGE, 'src/index.ts')],
    outdir: DIST,
    target: 'browser',
    format: 'esm',
    external: ['openapi-fetch', 'standardwebhooks'],
    naming: 'index.js',
  })
  if (!bundle.success) throw new AggregateError(bundle.logs, 'Bun.build of the client failed')
  const tsc = Bun.spawnSync(['bun', TSC, '-p', join(PACKAGE, 'tsconfig.json'), '--outDir', DIST], { stdout: 'pipe', stderr: 'pipe' })
  if (tsc.exitCode !== 0) throw new Error(`tsc (typescript5) failed to emit the declarations:\n${tsc.stdout.toString()}${tsc.stderr.toString()}`)
  const listed = (dir: string, prefix = ''): string[] => readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? listed(path, `${prefix}${name}/`) : [`${prefix}${name}  ${statSync(path).size} B`]
  })
  console.log(listed(DIST).filter(line => !line.startsWith('testing/')).join('\n'))
}

await build()
