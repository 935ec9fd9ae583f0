#!/usr/bin/env bun
import { exportAuditLog } from './modules/audit/export-command'
import { describeSweep, retentionSweepNow, unsweptNotice } from './retention-command'
import { listen, type Fetching } from './http/listen'
import { applyFlags, ConfigError, describeDataDir, loadConfig, type Config, type Env } from './config'
import { systemClock } from './clock'
import { createIdGenerator } from './ids'
import { createLogger, type Logger } from './log'
import { openConfiguredStore } from './db/open'
import { createServices, type Services } from './services'
import { createApp, createMetricsApp } from './app'
import { AccountError, parseScopes, type Plan } from './modules/accounts/service'
import { noDatabaseYet, runDoctor } from './doctor'
import { listModels } from './engines/asr/models'
import { importModel, pullModel, PullError } from './engines/asr/pull'
import { DIARIZATION_ROLES, listDiarizationModels, type DiarizationModelRole } from './engines/diarization/models'
import { DiarizationPullError, importDiarizationModel, pullDiarizationModels, type InstalledModel } from './engines/diarization/pull'
import { createProgressBar } from './progress'
import { copyToPostgres, CopyRefused, describeCopy } from './db/copy'
import { BackupRefused } from './db/backup'
import { describeBackup, runBackup } from './backup/backup'
import { describeRestore, runRestore } from './backup/restore'
import { readManifest, verifyBackup } from './backup/manifest'
import { unfinishedRestore } from './backup/marker'
import { OPERATOR } from './modules/audit/model'
import { VERSION } from './version'
import { commandLine, commandName, isCompiled } from './command-name'
import { runtimeRefusal } from './runtime-version'
import { createAsrSelector } from './engines/asr'
import { createLlmSelector } from './engines/llm'
import { STYLE_IDS, type StyleId } from './engines/llm/engine'
import { findMediaTools } from './engines/media/ffmpeg'
import { formatTranscript, TRANSCRIPT_FORMATS, type TranscriptDocument, type TranscriptFormat } from './formats/transcript'
import { LocalTranscribeError, transcribeFile } from './local/transcribe'
import { basename } from 'node:path'
import { existsSync } from 'node:fs'
import { startupMark, startupReport } from './startup-timing'
import { MODEL_TRIAL_COMMAND, runModelTrial } from './engines/diarization/model-trial-child'

const usage = () => `notesvc ${VERSION}: transcripts and summaries of audio, video and video links, self-hosted.

Usage: ${commandName()} <command> [flags]

  serve                                   start the HTTP server and NOTESVC_WORKERS job workers (the
                                          default command; NOTESVC_WORKERS=0: the API alone)
  worker                                  run NOTESVC_WORKERS job workers (default 1) and no HTTP server,
                                          beside a serve on the same data folder; stops on SIGTERM
  keys create --email E [--plan free|pro] [--sandbox] [--scopes s1,s2] [--name N]
                                          create an API key (and the account if new); prints the key
  keys list --email E                     list an account's keys
  keys revoke <key-id-or-start>           revoke a key at once
  accounts credit --email E --credits N   add N prepaid credits
  accounts plan --email E --plan free|pro set the account's plan
  audit export [--email E] [--since D]    the audit log as JSON lines on stdout, oldest first: one
                                          account's, or every account's without --email; events at or
                                          after D (2026-11-01 or an ISO date-time); counts on stderr
  accounts password --email E [--password-stdin]
                                          set the password for signing in to the settings page (and
                                          create the account if new); reads it from stdin, or asks
                                          for it without echo on a terminal
  transcribe FILE [--format txt|srt|vtt|json] [--summary] [--style S] [--language L]
                                          transcribe a local audio or video file with the server's
                                          engines, no server or database needed: the result on stdout
                                          (default txt), progress on stderr; --summary adds a summary
                                          (txt, json), in style S (note, bulletpoints, meeting-notes,
                                          transcript; default note; --style alone implies --summary)
  models list                             list the Whisper models in the models folder (and the
                                          diarization models, when present)
  models pull <name>                      download a Whisper model (tiny, base.en, small, …), resumable;
                                          \`models pull diarization\`: sherpa-onnx's two diarization models
  models import FILE [--name N]           copy a model file brought from another machine into the models
                                          folder, once checked. A Whisper ggml file (ggml-base.en.bin, or
                                          --name base.en): read through, loaded by whisper.cpp, its SHA-1
                                          compared with whisper.cpp's list. A diarization .onnx file
                                          (--name segmentation|embedding, else read from its metadata)
  retention sweep                         run one retention sweep now (what NOTESVC_RETENTION_* and each
                                          account's policy delete), progress on stderr, a summary line
  db copy --to postgres://…               copy this data folder's SQLite database into an empty
                                          PostgreSQL database and check the copy (stop serve first)
  backup DEST                             copy the database (and, with disk storage, its media) into
                                          the new or empty folder DEST, safe while serve runs, with a
                                          manifest of SHA-256 checksums; PostgreSQL: pg_dump on PATH
  backup --verify SRC                     check a backup against its manifest, changing nothing
  restore SRC                             restore a backup into an empty data folder (or an empty
                                          PostgreSQL database), after checking every checksum
  doctor                                  check what is ready and what is missing
  version                                 print the version

Configuration comes from environment variables (see docs/configuration.md); a flag of the same name in kebab
case overrides one, e.g. --port 9000 or --data-dir /srv/notesvc.`

/** A mistake in how the command was called; printed with a hint, exit code 2. */
class UsageError extends Error {}

/** What `transcribe` was given cannot be transcribed (no such file, not media); exit code 2. */
class InputError extends Error {}

/** This Bun is older than package.json's engines.bun; exit code 2. */
class RuntimeError extends Error {}

interface Parsed {
  positional: string[]
  flags: Record<string, string | true>
}

/** Flags that never take a value, so `--summary talk.wav` leaves the file a positional argument. */
const SWITCHES = new Set(['summary'])

function parseArgs(args: string[]): Parsed {
  const positional: string[] = []
  const flags: Record<string, string | true> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (!a.startsWith('--')) { positional.push(a); continue }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
    if (inline !== undefined) flags[name] = inline
    else if (SWITCHES.has(name)) flags[name] = true
    else if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) flags[name] = args[++i]!
    else flags[name] = true
  }
  return { positional, flags }
}

function stringFlag(p: Parsed, name: string, required: true): string
function stringFlag(p: Parsed, name: string, required?: false): string | undefined
function stringFlag(p: Parsed, name: string, required = false): string | undefined {
  const v = p.flags[name]
  if (v === true) throw new UsageError(`--${name} needs a value`)
  if (v === undefined && required) throw new UsageError(`--${name} is required`)
  return v
}

/**
 * Says on stderr which data folder a command uses, when the user did not name it: the default
 * (~/.local/share/notesvc) or an existing ./data. A folder set with NOTESVC_DATA_DIR or --data-dir is
 * the one the user named, and scripts that set it get clean output.
 */
function announceDataDir(config: Config): void {
  if (config.dataDirSource !== 'set') process.stderr.write(`${describeDataDir(config)}\n`)
}

/**
 * The services on the data folder's database, for the commands that manage accounts and keys. Says on
 * stderr which data folder it is; a command that only reads or changes what exists (`mayCreate`
 * false) is refused rather than creating an empty database where the server's is not.
 */
async function openServices(config: Config, mayCreate: boolean, log?: Logger): Promise<{ services: Services; close(): Promise<void> }> {
  announceDataDir(config)
  if (!mayCreate && !config.databaseUrl && !existsSync(config.databasePath)) throw new AccountError(noDatabaseYet(config))
  const store = await openConfiguredStore(config, { poolSize: 2 })
  const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator(), log })
  return { services, close: () => store.close() }
}

/** Writes to stdout, waiting while its buffer is full (a long export piped to a slow reader). */
function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.stdout.write(text, err => (err ? reject(err) : undefined))) resolve()
    else process.stdout.once('drain', resolve)
  })
}

/** One line typed on the terminal, not echoed. */
async function promptHidden(prompt: string): Promise<string> {
  process.stderr.write(prompt)
  const stty = (arg: string) => Bun.spawnSync(['stty', arg], { stdin: 'inherit', stdout: 'ignore', stderr: 'ignore' })
  stty('-echo')
  try {
    for await (const line of console) return line
    return ''
  } finally {
    stty('echo')
    process.stderr.write('\n')
  }
}

/** The new password: all of stdin (one trailing newline dropped) when piped, else asked twice. */
async function readNewPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin || !process.stdin.isTTY) {
    const text = await new Response(Bun.stdin.stream()).text()
    return text.replace(/\r?\n$/, '')
  }
  const first = await promptHidden('New password: ')
  const again = await promptHidden('Repeat it: ')
  if (first !== again) throw new AccountError('the two passwords differ; nothing was changed')
  return first
}

function out(line: string) {
  process.stdout.write(line + '\n')
}

/** Says which speech engine jobs will use, or warns that there is none and what that means here. */
function logSpeechEngine(services: Services, log: Logger, withoutOne: string) {
  const speech = services.asrSelector.describe()
  if (speech.engine === 'none') log.warn(`no speech engine: ${withoutOne} until one is installed`, { detail: speech.detail })
  else log.info('speech engine', { engine: speech.engine, detail: speech.detail })
}

/** Runs `stop` once on SIGINT or SIGTERM, then exits 0. */
function onStopSignal(log: Logger, stop: () => Promise<void>) {
  let stopping = false
  const handle = (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    void stop().then(() => process.exit(0))
  }
  process.on('SIGINT', () => handle('SIGINT'))
  process.on('SIGTERM', () => handle('SIGTERM'))
}

/**
 * `worker`: job workers only, on the data folder's database beside a `serve` (and other workers).
 * On SIGTERM or SIGINT the jobs under way are interrupted and go back to the queue at once.
 */
async function worker(config: Config, log: Logger) {
  if (config.workers === 0) throw new UsageError('NOTESVC_WORKERS=0 runs no job workers; `worker` needs 1 to 64 (for the API alone, run serve with NOTESVC_WORKERS=0)')
  announceDataDir(config)
  const store = await openConfiguredStore(config)
  const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator(), log })
  logSpeechEngine(services, log, 'upload jobs fail with engine_unavailable (and are refunded)')
  await services.workers.start()
  const metrics = serveWorkerMetrics(config, log, services)
  const fields = { workerId: services.workers.id, workers: config.workers, pid: process.pid, dataDir: config.dataDir, database: store.sql.name, leaseSeconds: config.jobLeaseSeconds, version: VERSION, ...(metrics ? { metrics: metrics.url } : {}) }
  log.info('notesvc worker started', fields)
  onStopSignal(log, async () => {
    await metrics?.server.stop()
    await services.workers.stop()
    await store.close()
    log.info('notesvc worker stopped', { workerId: fields.workerId })
  })
}

/**
 * A worker's own GET /metrics (its jobs, engine time and webhook deliveries), on HOST and
 * NOTESVC_METRICS_PORT when NOTESVC_METRICS_TOKEN is set too; a line saying how, when only the token is.
 */
function serveWorkerMetrics(config: Config, log: Logger, services: Services) {
  if (!config.metricsToken) return null
  if (config.metricsPort === undefined) {
    log.info('this worker\'s metrics are not served: set NOTESVC_METRICS_PORT to a free port to serve its GET /metrics (its jobs, engine time, webhook deliveries)')
    return null
  }
  const app = createMetricsApp({ config, log, services })
  const server = listen(app as unknown as Fetching, { port: config.metricsPort, hostname: config.host })
  return { server, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${server.port}/metrics` }
}

/**
 * What `metering` in force means, the rate limits of this start (NOTESVC_RATE_LIMITS; without
 * metering the processing class has none), and how to change them: one line of the first start.
 */
function describeMetering(config: Config): string {
  const { read, write, processing } = config.rateLimits
  const limits = `requests a minute per key: ${read} reads, ${write} writes`
  return config.metering
    ? `metering: on (credits per minute of media); ${limits}, ${processing} processing calls (NOTESVC_RATE_LIMITS); for a single-user install start with NOTESVC_METERING=off`
    : `metering: off (NOTESVC_METERING=off): nothing is charged and processing calls are not rate-limited; ${limits} (NOTESVC_RATE_LIMITS); unset NOTESVC_METERING to meter again`
}

/**
 * The first start's message: the keys alone on stdout (shown this once), then on stderr where the
 * browser is, how to set the owner's password and whether metering is on (serve has already said
 * which data folder it uses).
 */
function printFirstStart(config: Config, keys: { live: string; sandbox: string }, browser: string) {
  process.stderr.write(`\nFirst start: created the owner account ${config.ownerEmail} (plan pro) and two API keys.\n` +
    'They are shown this once and stored only as hashes; copy them now (stdout carries them alone).\n\n')
  out(`live key:    ${keys.live}`)
  out(`sandbox key: ${keys.sandbox}`)
  // with password sign-in off, the owner signs in through the provider (with the owner's email there)
  const how = config.passwordSignIn
    ? `(sign in as ${config.ownerEmail} once it has a password:\n             ${commandLine(`accounts password --email ${config.ownerEmail}`)})`
    : `(sign in with ${config.sso.providerName} as ${config.ownerEmail}; password sign-in is off)`
  process.stderr.write(`browser:     ${browser} ${how}\n${describeMetering(config)}\n\n`)
}

async function serve(config: Config, log: Logger) {
  announceDataDir(config)
  startupMark('config')
  const store = await openConfiguredStore(config)
  startupMark('database: read thread')
  const ids = createIdGenerator()
  const services = createServices({ config, store, clock: systemClock, ids, log })
  startupMark('services')
  const firstStart = await services.accounts.createFirstStartOwner(config.ownerEmail)
  if (firstStart) startupMark('first start: owner and keys')
  // Before serving, so that no upload of this process is under way.
  const reclaimed = await services.uploads.reclaimInterruptedUploads().catch((err: unknown) => {
    log.warn('could not remove the temporary files of interrupted uploads (check that this user may write the media folder); starting anyway', { error: err })
    return { files: 0, bytes: 0 }
  })
  if (reclaimed.files > 0) log.info('removed the temporary files of interrupted uploads', reclaimed)
  await services.openai.sweepTemporaryFiles().catch((err: unknown) => log.warn('could not remove the temporary files of interrupted OpenAI-compatible transcriptions; starting anyway', { error: err }))
  startupMark('sweep temporary files')
  logSpeechEngine(services, log, 'uploads and transcriptions are refused (502, nothing charged)')
  startupMark('speech engine check')
  const app = createApp({ config, clock: systemClock, ids, log, services })
  startupMark('app')
  const server = listen(app as unknown as Fetching, { port: config.port, hostname: config.host, maxRequestBodySize: 6 * 1024 ** 3 })
  startupMark('listen')
  await services.workers.start()
  startupMark('workers')
  startupReport()
  // Find out now which summary engine answers, so health can say so from the first request.
  void services.llmSelector.describe().catch(() => {})
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${server.port}`
  // PORT=0 (any free port): the public URL's port is not the one listened on
  if (firstStart) printFirstStart(config, firstStart, `${config.port === 0 ? url.replace('//0.0.0.0:', '//127.0.0.1:') : config.publicUrl}/`)
  log.info('notesvc listening', { url, publicUrl: config.publicUrl, dataDir: config.dataDir, database: store.sql.name, workers: config.workers, metering: config.metering ? 'on' : 'off', version: VERSION })
  if (services.sso) log.info('single sign-on', { provider: config.sso.providerName, issuer: config.oidcIssuer, redirectUri: services.sso.redirectUri, passwordSignIn: config.passwordSignIn ? 'on' : 'off' })
  onStopSignal(log, async () => {
    await app.stop()
    await services.workers.stop()
    await store.close()
  })
}

/** The summary style `transcribe` was asked for: --style S (which implies --summary), --summary alone → note, else none. */
function summaryStyle(p: Parsed): StyleId | null {
  const style = stringFlag(p, 'style')
  const summary = p.flags.summary
  if (summary !== undefined && summary !== true) throw new UsageError(`--summary takes no value (the style is --style ${STYLE_IDS.join('|')})`)
  if (style === undefined) return summary ? 'note' : null
  if (!(STYLE_IDS as readonly string[]).includes(style)) throw new UsageError(`--style must be one of ${STYLE_IDS.join(', ')}`)
  return style as StyleId
}

/** A summary in plain text, before the transcript: its title, the summary, then the transcript under a rule. */
function txtWithSummary(doc: TranscriptDocument): string {
  const s = doc.summary!
  return `${s.title}\n\n${s.summary.trim()}\n\n---\n\n${doc.transcript}\n`
}

/**
 * `transcribe FILE`: the engines the server would use (NOTESVC_ASR, NOTESVC_LLM, the media tools), on
 * one local file, without a server or a database. The result on stdout, progress on stderr.
 */
async function transcribe(config: Config, p: Parsed, file: string | undefined): Promise<number> {
  if (!file) throw new UsageError(`name the file to transcribe: ${commandLine('transcribe talk.m4a --format srt')}`)
  if (p.positional.length > 2) throw new UsageError(`transcribe takes one file; got ${p.positional.length - 1} (${p.positional.slice(1).join(' ')})`)
  const format = (stringFlag(p, 'format') ?? 'txt') as TranscriptFormat
  if (!TRANSCRIPT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${TRANSCRIPT_FORMATS.join(', ')}`)
  const styleId = summaryStyle(p)
  if (styleId && (format === 'srt' || format === 'vtt')) throw new UsageError(`subtitles have no place for a summary; use --format json or txt with --summary/--style`)
  const language = stringFlag(p, 'language') ?? null
  if (language !== null && !/^[a-z]{2}$/i.test(language)) throw new UsageError('--language takes a two-letter ISO 639-1 code such as en or de (leave it out to detect the language)')

  const asr = createAsrSelector(config).current()
  const llm = createLlmSelector(config)
  const bar = createProgressBar(basename(file), undefined, undefined, 'seconds')
  let last: Parameters<typeof bar.update>[0] = { received: 0, total: null }
  // a terminal sees the bar move (elapsed rate) between chunks, which take minutes on long files
  const tick = process.stderr.isTTY ? setInterval(() => bar.update(last), 1000) : null
  const controller = new AbortController()
  const interrupt = () => controller.abort(new Error('interrupted'))
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)
  try {
    const doc = await transcribeFile(file, { asr, tools: findMediaTools(config), llm: () => llm.current() }, {
      language,
      styleId,
      signal: controller.signal,
      onProgress: ({ seconds, total, stage }) => {
        if (stage === 'summarizing') {
          bar.update({ received: total ?? seconds, total: total ?? seconds })
          bar.done()
          process.stderr.write(`summarizing (${styleId})…\n`)
          return
        }
        last = { received: seconds, total }
        bar.update(last)
      },
    })
    if (!styleId) bar.update({ received: doc.duration ?? 0, total: doc.duration })
    bar.done()
    process.stdout.write(format === 'txt' && doc.summary ? txtWithSummary(doc) : formatTranscript(format, doc))
    return 0
  } catch (err) {
    bar.done()
    if (controller.signal.aborted) {
      process.stderr.write('notesvc: interrupted; nothing was written\n')
      return 130
    }
    if (err instanceof LocalTranscribeError) {
      if (err.kind === 'input') throw new InputError(err.message)
      throw new Error(err.message)
    }
    throw err
  } finally {
    if (tick) clearInterval(tick)
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
}

function keyLine(k: { id: string; start: string; sandbox: boolean; name: string | null; scopes: string[]; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }) {
  return [k.id, `${k.start}…`, k.sandbox ? 'sandbox' : 'live', k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.name ?? '-', k.scopes.join(','), `created ${k.createdAt}`, `last used ${k.lastUsedAt ?? 'never'}`].join('\t')
}

/** Files and bytes done, on stderr: redrawn on a terminal, a line every 10% otherwise. */
function filesProgress(label: string) {
  let lastDecile = -1
  const tty = Boolean(process.stderr.isTTY)
  return (done: { files: number; bytes: number }, total: { files: number; bytes: number }) => {
    const line = `${label}: ${done.files}/${total.files} files, ${(done.bytes / 1e6).toFixed(1)}/${(total.bytes / 1e6).toFixed(1)} MB`
    const decile = total.files ? Math.floor((done.files * 10) / total.files) : 10
    if (tty) process.stderr.write(`\r${line}${done.files === total.files ? '\n' : ''}`)
    else if (decile > lastDecile) {
      lastDecile = decile
      process.stderr.write(`${line}\n`)
    }
  }
}

/** `backup DEST`, `backup --verify SRC` and `restore SRC` (src/backup/). */
async function backupCommand(command: 'backup' | 'restore', config: Config, p: Parsed, folder: string | undefined): Promise<number> {
  const say = (line: string) => process.stderr.write(`${line}\n`)
  const verify = p.flags.verify
  if (command === 'backup' && verify !== undefined) {
    if (verify === true) throw new UsageError(`name the backup to check: ${commandLine('backup --verify /backups/notesvc-2026-11-26')}`)
    const manifest = await readManifest(verify)
    const r = await verifyBackup(verify, manifest, filesProgress('checking'))
    out(`${verify}: complete and intact, ${r.files} files (${r.bytes} bytes) match the manifest; taken ${manifest.createdAt}, ${manifest.backEnd}, schema version ${manifest.schemaVersion}, ${manifest.counts.notes} notes`)
    return 0
  }
  if (!folder) throw new UsageError(command === 'backup' ? `name a new or empty folder for the backup: ${commandLine('backup /backups/notesvc-2026-11-26')}` : `name the backup folder to restore: ${commandLine('restore /backups/notesvc-2026-11-26')}`)
  announceDataDir(config)
  const common = { dataDir: config.dataDir, databasePath: config.databasePath, databaseUrl: config.databaseUrl, storage: config.storage, storageSettings: config.storageSettings, say }
  if (command === 'backup') {
    const r = await runBackup({ ...common, dest: folder, onMedia: filesProgress('media') })
    const m = r.manifest
    // in the live database; never the folder or the database URL (they may hold a password)
    await recordOperatorEvent(config, 'backup.created', { backEnd: m.backEnd, storage: m.storage, createdAt: m.createdAt, notes: m.counts.notes, files: m.files.length })
    out(describeBackup(r))
    return 0
  }
  const r = await runRestore({ ...common, src: folder, onVerify: filesProgress('checking'), onMedia: filesProgress('media') })
  // in the restored database (brought to this build's schema by opening it, as serve would)
  await recordOperatorEvent(config, 'backup.restored', { createdAt: r.manifest.createdAt, backupVersion: r.manifest.notesvcVersion, notesvcVersion: VERSION, notes: r.manifest.counts.notes, files: r.files })
  out(describeRestore(r, config.databaseUrl ? 'the PostgreSQL database' : config.dataDir))
  return 0
}

/**
 * Records an event of the operator's (no account) after a backup or restore completed. The copy is
 * done whatever happens here, so a failure is a warning on stderr, not the command's failure.
 */
async function recordOperatorEvent(config: Config, action: 'backup.created' | 'backup.restored', details: Record<string, string | number>): Promise<void> {
  try {
    const store = await openConfiguredStore(config, { poolSize: 1 })
    try {
      const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator() })
      await services.audit.recordBy(OPERATOR, { accountId: null, action, target: null, details })
    } finally {
      await store.close()
    }
  } catch (err) {
    process.stderr.write(`warning: the ${action} event could not be written to the audit log (${err instanceof Error ? err.message : String(err)}); the ${action === 'backup.created' ? 'backup' : 'restore'} itself is complete\n`)
  }
}

/** The commands that use the data folder, refused while a restore into it is unfinished (src/backup/marker.ts). */
const DATA_FOLDER_COMMANDS = new Set(['serve', 'worker', 'keys', 'accounts', 'audit', 'db', 'backup', 'retention', 'doctor'])

async function run(argv: string[], env: Env): Promise<number> {
  startupMark('runtime and modules')
  const refusal = runtimeRefusal(process.versions.bun, undefined, isCompiled)
  if (refusal) throw new RuntimeError(refusal)
  const { env: withFlags, rest } = applyFlags(env, argv)
  const p = parseArgs(rest)
  const [command = 'serve', sub, arg] = p.positional
  if (p.flags.help || command === 'help') { out(usage()); return 0 }
  if (command === 'version' || p.flags.version) { out(VERSION); return 0 }
  const config = loadConfig(withFlags)
  const log = createLogger((withFlags.NOTESVC_LOG_LEVEL as 'info') || 'info')
  if (DATA_FOLDER_COMMANDS.has(command) && p.flags.verify === undefined) {
    const unfinished = unfinishedRestore(config.dataDir)
    if (unfinished) throw new BackupRefused(unfinished)
  }

  switch (command) {
    case 'serve':
      await serve(config, log)
      return -1 // keep running
    case 'worker':
      // one job at a time unless NOTESVC_WORKERS says otherwise (shared/DECISIONS.md); serve's default is twice the slots
      await worker(withFlags.NOTESVC_WORKERS ? config : { ...config, workers: 1 }, log)
      return -1
    case 'keys': {
      const { services, close } = await openServices(config, sub === 'create')
      try {
        if (sub === 'create') {
          const plan = stringFlag(p, 'plan') as Plan | undefined
          if (plan && plan !== 'free' && plan !== 'pro') throw new UsageError('--plan must be free or pro')
          const created = await services.accounts.createKey({
            email: stringFlag(p, 'email', true),
            plan,
            sandbox: p.flags.sandbox === true || p.flags.sandbox === 'true',
            scopes: parseScopes(stringFlag(p, 'scopes')),
            name: stringFlag(p, 'name'),
          })
          out(created.key)
          process.stderr.write(`created ${created.info.sandbox ? 'sandbox' : 'live'} key ${created.info.id} for ${created.account.email} with scopes ${created.info.scopes.join(',')}; it is shown only this once\n`)
          return 0
        }
        if (sub === 'list') {
          for (const k of await services.accounts.listKeys(stringFlag(p, 'email', true))) out(keyLine(k))
          return 0
        }
        if (sub === 'revoke') {
          if (!arg) throw new UsageError(`name the key to revoke: ${commandLine('keys revoke <key-id-or-start>')}`)
          const k = await services.accounts.revokeKey(arg)
          out(keyLine(k))
          return 0
        }
        throw new UsageError('keys needs a subcommand: create, list or revoke')
      } finally {
        await close()
      }
    }
    case 'accounts': {
      const { services, close } = await openServices(config, sub === 'password')
      try {
        const email = stringFlag(p, 'email', true)
        if (sub === 'credit') {
          const raw = stringFlag(p, 'credits', true)
          const credits = Number(raw)
          const account = await services.accounts.addPurchasedCredits(email, credits)
          const b = await services.credits.balance(account.id)
          out(`${account.email}\tplan ${b.plan}\tgrant ${b.grantRemaining}/${b.grantTotal}\tprepaid ${b.purchasedRemaining}\ttotal ${b.totalRemaining}`)
          return 0
        }
        if (sub === 'plan') {
          const plan = stringFlag(p, 'plan', true) as Plan
          const account = await services.accounts.setPlan(email, plan)
          const b = await services.credits.balance(account.id)
          out(`${account.email}\tplan ${b.plan}\tgrant ${b.grantRemaining}/${b.grantTotal}\tprepaid ${b.purchasedRemaining}\ttotal ${b.totalRemaining}`)
          return 0
        }
        if (sub === 'password') {
          const password = await readNewPassword(p.flags['password-stdin'] === true)
          const r = await services.web.setPassword(email, password)
          out(`${r.email}\tpassword set${r.created ? '\taccount created' : ''}`)
          if (!config.passwordSignIn) process.stderr.write(`warning: password sign-in is off (NOTESVC_PASSWORD_SIGNIN=off), so this password cannot be used to sign in to the browser; people sign in with ${config.sso.providerName}. Set NOTESVC_PASSWORD_SIGNIN=on to use passwords again.\n`)
          return 0
        }
        throw new UsageError('accounts needs a subcommand: credit, plan or password')
      } finally {
        await close()
      }
    }
    case 'audit': {
      if (sub !== 'export') throw new UsageError('audit needs a subcommand: export')
      const since = stringFlag(p, 'since')
      if (since !== undefined && Number.isNaN(Date.parse(since))) throw new UsageError(`--since must be a date or date-time such as 2026-11-01 or 2026-11-01T09:00:00Z, not "${since}"`)
      const { services, close } = await openServices(config, false)
      try {
        await exportAuditLog({ audit: services.audit, accountOf: e => services.accounts.requireAccount(e) }, { email: stringFlag(p, 'email'), since: since === undefined ? undefined : new Date(since).toISOString() }, writeStdout, line => process.stderr.write(`${line}\n`))
        return 0
      } finally {
        await close()
      }
    }
    case 'transcribe':
      return transcribe(config, p, sub)
    case 'models': {
      if (sub === 'list' || sub === undefined) {
        const models = listModels(config.modelsDir)
        if (models.length === 0) process.stderr.write(`no models in ${config.modelsDir}; get one with: ${commandLine('models pull base.en')}\n`)
        for (const m of models) out(`${m.name}\t${m.sizeBytes}\t${m.path}`)
        for (const m of listDiarizationModels(config.modelsDir)) out(`${m.name}\t${m.sizeBytes}\t${m.path}`)
        return 0
      }
      // Diarization models: a failed download exits 1 (the README keeps 2 for a wrong command or input).
      const installed = (m: InstalledModel & { kept?: boolean }) => {
        process.stderr.write(`${m.role}: ${m.kept ? 'already there' : `${(m.bytes / 1e6).toFixed(1)} MB, an ONNX model with the metadata sherpa-onnx reads`}; SHA-256 ${m.sha256}\n`)
        out(m.path)
      }
      if (sub === 'pull' && arg === 'diarization') {
        const done = await pullDiarizationModels({ modelsDir: config.modelsDir, onFile: (role, url) => process.stderr.write(`${role}: downloading ${url}\n`) })
        for (const m of done) installed(m)
        return 0
      }
      if (sub === 'import') {
        if (!arg) throw new UsageError(`name the file to import, for example: ${commandLine('models import ggml-base.en.bin')} or ${commandLine('models import model.onnx --name segmentation')}`)
        // --name (shared/DECISIONS.md); --as, its first spelling, is still read for diarization models
        const as = stringFlag(p, 'name') ?? stringFlag(p, 'as')
        // an ONNX file is a diarization model whatever it is named; a role name marks one too
        const diarization = arg.endsWith('.onnx') || (as !== undefined && DIARIZATION_ROLES.includes(as as DiarizationModelRole))
        if (diarization && as !== undefined && !DIARIZATION_ROLES.includes(as as DiarizationModelRole)) throw new UsageError(`--name must be ${DIARIZATION_ROLES.join(' or ')} for a diarization model (.onnx)`)
        try {
          if (!diarization) {
            const r = await importModel({ file: arg, modelsDir: config.modelsDir, name: as })
            process.stderr.write(
              `${r.name}: ${(r.bytes / 1e6).toFixed(1)} MB, ${r.tensors} tensors read through; ` +
                `${r.loaded === 'loaded' ? 'loaded by whisper.cpp' : 'not loaded (whisper.cpp cannot run on this host)'}; ` +
                `${r.verified === 'sha1' ? "SHA-1 matches whisper.cpp's published one" : 'no published checksum for this name, not compared'}; SHA-256 ${r.sha256}\n`,
            )
            out(r.path)
            return 0
          }
          installed(await importDiarizationModel({ file: arg, modelsDir: config.modelsDir, as: as as DiarizationModelRole | undefined }))
        } catch (err) {
          if (err instanceof DiarizationPullError) throw new InputError(err.message)
          if (err instanceof PullError) throw err.kind === 'input' ? new InputError(err.message) : new Error(err.message)
          throw err
        }
        return 0
      }
      if (sub === 'pull') {
        if (!arg) throw new UsageError(`name the model to pull, for example: ${commandLine('models pull base.en')} (or diarization)`)
        const progress = createProgressBar(`ggml-${arg}.bin`)
        try {
          const r = await pullModel({ name: arg, modelsDir: config.modelsDir, baseUrl: config.modelsUrl, onProgress: progress.update })
          progress.done()
          process.stderr.write(`${r.resumed ? 'resumed and ' : ''}downloaded ${(r.bytes / 1e6).toFixed(1)} MB; checksum ${r.verified === 'none' ? 'not published for this model, not checked' : `${r.verified.toUpperCase()} verified`}\n`)
          out(r.path)
          return 0
        } catch (err) {
          progress.done()
          // a wrong name exits 2; an unreachable host or a failed check exits 1 (README, exit status)
          if (err instanceof PullError) throw err.kind === 'input' ? new InputError(err.message) : new Error(err.message)
          throw err
        }
      }
      throw new UsageError('models needs a subcommand: list, pull or import')
    }
    case 'db': {
      if (sub !== 'copy') throw new UsageError('db needs a subcommand: copy')
      announceDataDir(config)
      const report = await copyToPostgres({
        sqlitePath: config.databasePath,
        targetUrl: stringFlag(p, 'to', true),
        progress: (table, total) => {
          const bar = createProgressBar(table.padEnd(18), undefined, undefined, 'rows')
          return { update: copied => bar.update({ received: copied, total }), done: bar.done }
        },
      })
      for (const line of describeCopy(report)) out(line)
      return 0
    }
    case 'backup':
    case 'restore':
      return backupCommand(command, config, p, sub)
    case 'retention': {
      if (sub !== 'sweep') throw new UsageError('retention needs a subcommand: sweep')
      // with the log: a note the sweep cannot delete is named there, with the storage's error
      const { services, close } = await openServices(config, false, log)
      try {
        const summary = await retentionSweepNow(services, { leaseMs: config.jobLeaseSeconds * 1000, everyMs: config.retention.sweepMinutes * 60_000, log, progress: line => process.stderr.write(`${line}\n`) })
        out(describeSweep(summary))
        const notice = unsweptNotice(summary)
        if (notice) {
          process.stderr.write(`notesvc: retention sweep: ${notice}\n`)
          return 1
        }
      } finally {
        await close()
      }
      return 0
    }
    case 'doctor': {
      const ok = await runDoctor(config, out)
      return ok ? 0 : 1
    }
    default:
      throw new UsageError(`unknown command "${command}"`)
  }
}

if (import.meta.main && process.argv[2] === MODEL_TRIAL_COMMAND) {
  // the binary as the child that tries diarization model files (engines/diarization/model-trial.ts)
  runModelTrial(process.argv.slice(3)).then(code => process.exit(code), err => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
} else if (import.meta.main) {
  run(process.argv.slice(2), process.env)
    .then(code => { if (code >= 0) process.exit(code) })
    .catch(err => {
      if (err instanceof UsageError) {
        process.stderr.write(`notesvc: ${err.message}\nRun ${commandLine('help')} for the commands and their flags.\n`)
        process.exit(2)
      }
      if (err instanceof RuntimeError) {
        process.stderr.write(`${err.message}\n`)
        process.exit(2)
      }
      if (err instanceof ConfigError || err instanceof AccountError || err instanceof CopyRefused || err instanceof BackupRefused || err instanceof InputError) {
        process.stderr.write(`notesvc: ${err.message}\n`)
        process.exit(2)
      }
      process.stderr.write(`notesvc: ${err instanceof Error ? err.message : String(err)}\n`)
      process.exit(1)
    })
}

export { run }
