/**
 * How a person types a notesvc command on this machine, as this process was started: the compiled
 * binary by its name when it is on PATH (`notesvc`), else by its path (`dist/notesvc`); from source
 * `bun run cli` in the project folder, else `bun <path>/src/cli.ts`. Every hint that names a command
 * (doctor, start-up, errors, the sign-in page) asks here, so what it prints works when pasted.
 */
import { realpathSync } from 'node:fs'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'

export interface Started {
  /** true inside a `bun build --compile` binary */
  compiled: boolean
  /** the binary (compiled) */
  execPath: string
  /** the project folder, holding package.json and src/ (from source) */
  projectDir: string
  cwd: string
  /** where PATH finds a program of this name, or null */
  which(name: string): string | null
}

/**
 * The compiled binary's entry point lives under Bun's embedded file system. Bun.main, not
 * import.meta: a binary built with --bytecode (scripts/build.ts) keeps the source's build-time path
 * in import.meta.
 */
export const isCompiled = Bun.main.startsWith('/$bunfs/') || Bun.main.includes('~BUN')

function thisProcess(): Started {
  return { compiled: isCompiled, execPath: process.execPath, projectDir: resolve(import.meta.dir, '..'), cwd: process.cwd(), which: name => Bun.which(name) }
}

function sameFile(a: string, b: string): boolean {
  try { return realpathSync(a) === realpathSync(b) } catch { return false }
}

function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`
}

/** `path` as typed from `cwd`: relative below it (with ./ when bare), else absolute. */
function pathFrom(cwd: string, path: string): string {
  const rel = relative(cwd, path)
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return path
  return rel.includes('/') ? rel : `./${rel}`
}

let cached: string | undefined

/** The words that run notesvc, e.g. `notesvc`, `dist/notesvc` or `bun run cli`; this process's unless told. */
export function commandName(started?: Started): string {
  if (!started) return (cached ??= commandName(thisProcess()))
  if (started.compiled) {
    const name = basename(started.execPath)
    const onPath = started.which(name)
    if (onPath && sameFile(onPath, started.execPath)) return shellWord(name)
    return shellWord(pathFrom(started.cwd, started.execPath))
  }
  if (sameFile(started.cwd, started.projectDir)) return 'bun run cli'
  return `bun ${shellWord(pathFrom(started.cwd, join(started.projectDir, 'src', 'cli.ts')))}`
}

/** A whole command line for this process: commandLine('models pull base.en') → `bun run cli models pull base.en`. */
export function commandLine(args: string): string {
  return `${commandName()} ${args}`
}
