import { ConfigError } from '../config'
import { AccountError } from '../modules/accounts/service'
import { CopyRefused } from '../db/copy'
import { BackupRefused } from '../db/backup'
import { commandLine } from '../command-name'
import { UsageError } from './args'

/** What `transcribe` was given cannot be transcribed (no such file, not media); exit code 2. */
export class InputError extends Error {}

/** This Bun is older than package.json's engines.bun; exit code 2. */
export class RuntimeError extends Error {}

/**
 * Says on stderr why a command failed and returns its exit code: 2 for a mistake of the caller's (how
 * the command was called, its input, the configuration, this Bun), 1 for anything else.
 */
export function reportFailure(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`notesvc: ${err.message}\nRun ${commandLine('help')} for the commands and their flags.\n`)
    return 2
  }
  if (err instanceof RuntimeError) {
    process.stderr.write(`${err.message}\n`)
    return 2
  }
  if (err instanceof ConfigError || err instanceof AccountError || err instanceof CopyRefused || err instanceof BackupRefused || err instanceof InputError) {
    process.stderr.write(`notesvc: ${err.message}\n`)
    return 2
  }
  process.stderr.write(`notesvc: ${err instanceof Error ? err.message : String(err)}\n`)
  return 1
}
