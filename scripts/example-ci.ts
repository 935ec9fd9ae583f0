#!/usr/bin/env bun
/**
 * The example application against the client package as a user installs it (called by .ci/run after the
 * main suite): builds packages/client (`bun run prepack`: generate, build, build:testing), packs it with
 * `bun pm pack`, prints the tarball's files with their sizes, copies examples/meeting-filer (without
 * node_modules) to a temporary folder, points its `@notesvc/client` at the tarball, installs, type-checks
 * it strictly (`tsc --noEmit`) and runs its `bun test`. A file missing from the tarball or an export
 * missing from its package.json fails here, as it would for a user.
 *
 *   bun run scripts/example-ci.ts           exits 1 on any failure; bun's " N pass" / " N fail" lines last
 *   bun run scripts/example-ci.ts --keep    leaves the temporary folder (a failed run leaves it too; its path is printed)
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve, sep } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')
const CLIENT = join(ROOT, 'packages/client')
const EXAMPLE = join(ROOT, 'examples/meeting-filer')
const PACKAGE = '@notesvc/client'

class StepFailed extends Error {}

/** Runs a command with its output shown as it comes; returns that output (both streams) and the exit code. */
async function run(cmd: string[], cwd: string): Promise<{ output: string; code: number }> {
  console.log(`\n$ ${cmd.join(' ')}   (in ${cwd})`)
  const proc = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore', env: { ...process.env, FORCE_COLOR: '0' } })
  let output = ''
  const pump = async (stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      output += text
      to.write(text)
    }
  }
  await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)])
  return { output, code: await proc.exited }
}

/** Runs one step; a failure ends the script. */
async function step(name: string, cmd: string[], cwd: string): Promise<string> {
  const { output, code } = await run(cmd, cwd)
  if (code !== 0) throw new StepFailed(`${name} failed: \`${cmd.join(' ')}\` exited with ${code} (its output is above)`)
  return output
}

/** bun test's closing lines: " N pass", " N fail", " N expect() calls", "Ran N tests across M files. [t]". */
function summaryOf(output: string): string {
  return output.split('\n').filter(line => /^\s*\d+ (pass|fail|skip|todo|expect\(\) calls)$|^Ran \d+ tests?/.test(line)).join('\n')
}

const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`

/** Every file the package.json's exports map names (`./dist/index.js`, …), without the leading `./`. */
function exportedFiles(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports.replace(/^\.\//, '')]
  if (typeof exports !== 'object' || exports === null) return []
  return Object.values(exports).flatMap(exportedFiles)
}

/**
 * `tar -tzvf`: one line per entry, the size in the third column; printed as size and path, and the
 * totals. Fails when a file the exports map names is not in the tarball (a build step left out of prepack).
 */
function printContents(tarball: string): void {
  const tar = Bun.spawnSync(['tar', '-tzvf', tarball], { stderr: 'pipe' })
  if (tar.exitCode !== 0) throw new StepFailed(`tar could not list ${tarball}: ${tar.stderr.toString()}`)
  const entries = tar.stdout.toString().trim().split('\n').map(line => line.trim().split(/\s+/)).filter(f => f.length >= 6)
    .map(f => ({ size: Number(f[2]), path: f.slice(5).join(' ') }))
  console.log(`\n${PACKAGE}: ${entries.length} files in ${tarball}`)
  for (const e of entries) console.log(`${kB(e.size).padStart(12)}  ${e.path}`)
  const unpacked = entries.reduce((sum, e) => sum + e.size, 0)
  console.log(`tarball ${kB(statSync(tarball).size)}, unpacked ${kB(unpacked)}`)
  const manifest = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as { exports?: unknown }
  const packed = new Set(entries.map(e => e.path))
  const missing = [...new Set(exportedFiles(manifest.exports))].filter(file => !packed.has(`package/${file}`))
  if (missing.length) throw new StepFailed(`the tarball lacks ${missing.join(', ')}, named by packages/client/package.json's exports: make its prepack script build them`)
}

/** The example without what an install makes, with its dependency on the client pointed at the tarball. */
function copyExample(to: string, tarball: string): void {
  cpSync(EXAMPLE, to, {
    recursive: true,
    filter: source => !relative(EXAMPLE, source).split(sep).includes('node_modules') && !/bun\.lockb?$/.test(source),
  })
  const manifestPath = join(to, 'package.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { dependencies?: Record<string, string> }
  if (!manifest.dependencies?.[PACKAGE]) throw new StepFailed(`examples/meeting-filer/package.json does not depend on ${PACKAGE}`)
  manifest.dependencies[PACKAGE] = `file:${tarball}`
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`)
}

async function main(keep: boolean): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'notesvc-example-ci-'))
  let failed = true
  try {
    await step('building the client package', [process.execPath, 'run', 'prepack'], CLIENT)
    const packDir = join(work, 'pack')
    mkdirSync(packDir)
    // built just above, so not again by pack's own prepack; the file list is printed below
    await step('packing the client package', [process.execPath, 'pm', 'pack', '--quiet', '--ignore-scripts', '--destination', packDir], CLIENT)
    const tarballs = readdirSync(packDir).filter(f => f.endsWith('.tgz'))
    if (tarballs.length !== 1) throw new StepFailed(`bun pm pack left ${tarballs.length} tarballs in ${packDir}, expected one`)
    const tarball = join(packDir, tarballs[0]!)
    printContents(tarball)

    const app = join(work, 'app')
    copyExample(app, tarball)
    await step('installing the example', [process.execPath, 'install'], app)
    await step('type-checking the example', [process.execPath, 'x', 'tsc', '--noEmit', '-p', '.'], app)
    const tests = await run([process.execPath, 'test'], app)
    // printed again last, where .ci/run reads the counts
    console.log(`\nbun test in the example:\n${summaryOf(tests.output)}`)
    if (tests.code !== 0) throw new StepFailed(`testing the example failed: \`bun test\` exited with ${tests.code}`)
    console.log('example-ci: passed')
    failed = false
    return 0
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error
    console.error(`\nexample-ci: FAILED. ${error.message}`)
    return 1
  } finally {
    if (keep || failed) console.log(`(the temporary folder is kept: ${work})`)
    else rmSync(work, { recursive: true, force: true })
  }
}

process.exitCode = await main(process.argv.includes('--keep'))
