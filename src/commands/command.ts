import type { Config, Env } from '../config'
import type { Logger } from '../log'
import type { Parsed } from './args'
import { writeStdout } from '../std-streams'

/** What the dispatcher (cli.ts) hands a command. */
export interface CommandContext {
  /** the arguments left once configuration flags are applied; positional[0] is the command's name */
  args: Parsed
  config: Config
  log: Logger
  /** the environment with the configuration flags applied */
  env: Env
}

/** A command: its exit code, or -1 to keep running (serve, worker). */
export type RunCommand = (ctx: CommandContext) => Promise<number>

/** One line of the standard output. */
export function out(line: string) {
  writeStdout(line + '\n')
}
