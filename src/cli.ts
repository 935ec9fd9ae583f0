#!/usr/bin/env bun
/**
 * The entry point: finds the command in the table below and runs it (src/commands/<name>.ts, one
 * file per command). What every command shares is done here once: the Bun version check, the
 * configuration flags, the configuration, and the refusal while a restore is unfinished.
 */
import { applyFlags, loadConfig, type Env } from './config'
import { createLogger } from './log'
import { BackupRefused } from './db/backup'
import { unfinishedRestore } from './backup/marker'
import { isCompiled } from './command-name'
import { runtimeRefusal } from './runtime-version'
import { startupMark } from './startup-timing'
import { MODEL_TRIAL_COMMAND, runModelTrial } from './engines/diarization/model-trial-child'
import { parseArgs, UsageError } from './commands/args'
import type { RunCommand } from './commands/command'
import { reportFailure, RuntimeError } from './commands/failure'
import { helpCommand } from './commands/help'
import { versionCommand } from './commands/version'
import { serveCommand } from './commands/serve'
import { workerCommand } from './commands/worker'
import { keysCommand } from './commands/keys'
import { accountsCommand } from './commands/accounts'
import { auditCommand } from './commands/audit'
import { transcribeCommand } from './commands/transcribe'
import { modelsCommand } from './commands/models'
import { dbCommand } from './commands/db'
import { backupCommand } from './commands/backup'
import { restoreCommand } from './commands/restore'
import { retentionCommand } from './commands/retention'
import { doctorCommand } from './commands/doctor'

interface Command {
  run: RunCommand
  /** what it does, in one line (the full usage is commands/help.ts) */
  help: string
  /** uses the data folder, so it is refused while a restore into it is unfinished (src/backup/marker.ts) */
  dataFolder?: true
}

const COMMANDS: Record<string, Command> = {
  serve: { run: serveCommand, dataFolder: true, help: 'the HTTP server and the job workers (the default command)' },
  worker: { run: workerCommand, dataFolder: true, help: 'job workers beside a serve, no HTTP server' },
  keys: { run: keysCommand, dataFolder: true, help: 'create, list and revoke API keys' },
  accounts: { run: accountsCommand, dataFolder: true, help: "an account's credits, plan and password" },
  audit: { run: auditCommand, dataFolder: true, help: 'the audit log as JSON lines' },
  transcribe: { run: transcribeCommand, help: 'one local file, without a server or a database' },
  models: { run: modelsCommand, help: 'list, pull and import Whisper and diarization models' },
  db: { run: dbCommand, dataFolder: true, help: 'copy the SQLite database into PostgreSQL' },
  backup: { run: backupCommand, dataFolder: true, help: 'a backup with checksums, or check one (--verify)' },
  restore: { run: restoreCommand, help: 'a backup into an empty data folder' },
  retention: { run: retentionCommand, dataFolder: true, help: 'one retention sweep now' },
  doctor: { run: doctorCommand, dataFolder: true, help: 'what is ready and what is missing' },
  help: { run: helpCommand, help: 'the commands and their flags' },
  version: { run: versionCommand, help: 'the version' },
}

async function dispatch(argv: string[], env: Env): Promise<number> {
  startupMark('runtime and modules')
  const refusal = runtimeRefusal(process.versions.bun, undefined, isCompiled)
  if (refusal) throw new RuntimeError(refusal)
  const { env: withFlags, rest } = applyFlags(env, argv)
  const args = parseArgs(rest)
  const named = args.positional[0] ?? 'serve'
  // help and version need no configuration: they answer even when it is wrong
  if (args.flags.help || named === 'help') return helpCommand()
  if (named === 'version' || args.flags.version) return versionCommand()
  const config = loadConfig(withFlags)
  const log = createLogger((withFlags.NOTESVC_LOG_LEVEL as 'info') || 'info')
  const command = Object.hasOwn(COMMANDS, named) ? COMMANDS[named]! : null
  if (command?.dataFolder && args.flags.verify === undefined) {
    const unfinished = unfinishedRestore(config.dataDir)
    if (unfinished) throw new BackupRefused(unfinished)
  }
  if (!command) throw new UsageError(`unknown command "${named}"`)
  return command.run({ args, config, log, env: withFlags })
}

if (import.meta.main && process.argv[2] === MODEL_TRIAL_COMMAND) {
  // the binary as the child that tries diarization model files (engines/diarization/model-trial.ts)
  runModelTrial(process.argv.slice(3)).then(code => process.exit(code), err => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
} else if (import.meta.main) {
  dispatch(process.argv.slice(2), process.env)
    .then(code => { if (code >= 0) process.exit(code) })
    .catch(err => process.exit(reportFailure(err)))
}
