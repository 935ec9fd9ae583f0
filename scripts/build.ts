/**
 * Compiles the single binary dist/notesvc (or the path given as the first argument), then prints on
 * stderr what each part of it costs (binary-parts.ts). Plain --minify renames identifiers that
 * Elysia's compiled validators rely on, so only whitespace and syntax are minified. The large
 * embedded files are packed (pack-embedded.ts).
 */
import { mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { runtimeRefusal } from '../src/runtime-version'
import { binaryParts, partsTable } from './binary-parts'
import { packEmbedded, type PackedFile } from './pack-embedded'

// The binary carries the Bun that builds it: refuse to make one that would refuse to start.
const refusal = runtimeRefusal()
if (refusal) {
  process.stderr.write(`${refusal}\n`)
  process.exit(2)
}

const ROOT = resolve(import.meta.dir, '..')
const outfile = resolve(process.argv[2] ?? 'dist/notesvc')
mkdirSync(dirname(outfile), { recursive: true })
const started = performance.now()
const packed: PackedFile[] = []
let result: Bun.BuildOutput
try {
  result = await Bun.build({
    // src/db/read-thread.ts: the search thread's entry point (db/read-worker.ts), and
    // src/engines/diarization/diarize-thread.ts: a builtin diarization session's (engines/diarization/thread.ts),
    // carried in the binary
    entrypoints: ['src/cli.ts', 'src/db/read-thread.ts', 'src/engines/diarization/diarize-thread.ts', 'src/engines/align/align-thread.ts', 'src/engines/live/live-thread.ts'].map(f => resolve(ROOT, f)),
    root: resolve(ROOT, 'src'),
    compile: { outfile },
    // parsed ahead of time: half the cold start (docs/decisions.md, "Cold start"); 10 MB of the binary
    bytecode: true,
    minify: { whitespace: true, syntax: true },
    sourcemap: 'none',
    metafile: true,
    plugins: [packEmbedded(ROOT, packed)],
  })
} catch (err) {
  const messages = err instanceof AggregateError ? err.errors : [err]
  for (const m of messages) process.stderr.write(`${String(m)}\n`)
  process.stderr.write('build failed; see the messages above\n')
  process.exit(1)
}
const size = statSync(outfile).size
process.stderr.write(partsTable(binaryParts(outfile, ROOT, result.metafile!, packed), size))
process.stderr.write(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
