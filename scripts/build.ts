/**
 * Compiles the single binary dist/notesvc (or the path given as the first argument). Plain --minify renames identifiers that Elysia's compiled
 * validators rely on, so only whitespace and syntax are minified.
 */
import { mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { runtimeRefusal } from '../src/runtime-version'

// The binary carries the Bun that builds it: refuse to make one that would refuse to start.
const refusal = runtimeRefusal()
if (refusal) {
  process.stderr.write(`${refusal}\n`)
  process.exit(2)
}

const outfile = process.argv[2] ?? 'dist/notesvc'
mkdirSync(dirname(outfile), { recursive: true })
const started = performance.now()
// src/db/read-thread.ts: the search thread's entry point (db/read-worker.ts), and
// src/engines/diarization/diarize-thread.ts: a builtin diarization session's (engines/diarization/thread.ts),
// carried in the binary
const proc = Bun.spawn(['bun', 'build', '--compile', '--bytecode', '--minify-whitespace', '--minify-syntax', '--sourcemap=none', 'src/cli.ts', 'src/db/read-thread.ts', 'src/engines/diarization/diarize-thread.ts', '--outfile', outfile], {
  stdout: 'inherit',
  stderr: 'inherit',
})
const code = await proc.exited
if (code !== 0) {
  process.stderr.write(`build failed (exit ${code}); see the messages above\n`)
  process.exit(code)
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1)
process.stderr.write(`built ${outfile} (${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
