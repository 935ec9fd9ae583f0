import { DEFAULT_DATABASE_TIMEOUT_MS } from './db/deadline'
import { existsSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { DEFAULT_MODELS_URL } from './engines/asr/models'
import { defaultAsrSlots } from './engines/asr/scheduler'
import { POCKETSPHINX_DEFAULTS, type PocketsphinxOptions } from './engines/asr/pocketsphinx'
import { ConfigError, flag, integer, oneOf, type Env } from './environment'
import { STORAGE_VARIABLES, storageSetting } from './storage'
import { SPEECH_VARIABLES, speechSetting } from './engines/asr/registry'

export { ConfigError, type Env }

export type RateClass = 'read' | 'write' | 'processing'
export type LlmKind = 'auto' | 'ollama' | 'builtin'

export interface Config {
  port: number
  host: string
  publicUrl: string
  docsUrl: string
  dataDir: string
  /** how `dataDir` was found (resolveDataDir), for the line commands print when they create anything */
  dataDirSource: DataDirSource
  databasePath: string
  /** `postgres://…`: all state in that PostgreSQL database; unset: embedded SQLite at `databasePath` */
  databaseUrl?: string
  /** PostgreSQL: how long a statement may wait for the server's answer (ms; 0: no limit) */
  databaseTimeoutMs: number
  /** NOTESVC_STORAGE: the name a storage back end registered under (src/storage/index.ts) */
  storage: string
  /** that back end's settings, parsed by it from its own variables (NOTESVC_S3_* for s3) */
  storageSettings: unknown
  modelsDir: string
  /** where `models pull` downloads from */
  modelsUrl: string
  /**
   * NOTESVC_ASR: `auto` (whisper.cpp when its model file is present, else PocketSphinx when installed,
   * else none), or the name a speech engine registered under (src/engines/asr/registry.ts)
   */
  asr: string
  /** each engine's own settings, parsed by it from its variables, by its NOTESVC_ASR name */
  speechSettings: Record<string, unknown>
  whisperModel: string
  /** where PocketSphinx is looked for: the Debian packages' program and model (not an environment variable) */
  pocketsphinx: PocketsphinxOptions
  llm: LlmKind
  /** speaker diarization: `auto` sherpa-onnx when its model files are present, else the builtin engine; `off` none */
  diarization: 'auto' | 'builtin' | 'sherpa-onnx' | 'off'
  ollamaHost: string
  ollamaModel: string
  /** job workers this process runs: `serve` runs the API beside them (0: API only), `worker` runs only them */
  workers: number
  /** chunk transcriptions this process runs at once, shared fairly by all its jobs (NOTESVC_ASR_SLOTS) */
  asrSlots: number
  /** how long a claimed job stays with its worker without a heartbeat before another worker may take it */
  jobLeaseSeconds: number
  /** how many times a job's worker may die under it (lease run out, process gone) before the job fails instead of running again */
  jobMaxTakeovers: number
  rateLimits: Record<RateClass, number>
  /** NOTESVC_METERING: on (the interface's credits and processing rate limit) or off (charges record 0, no 402, no processing limit) */
  metering: boolean
  allowPrivateUrls: boolean
  /** webhook endpoints one account may register, live and sandbox together (NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT) */
  maxWebhooksPerAccount: number
  /** voices one account may remember, live and sandbox together (NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT) */
  maxSpeakerProfilesPerAccount: number
  ffmpeg?: string
  ffprobe?: string
  ytdlp?: string
  ownerEmail: string
  accessLog: boolean
  /** keep read results until the database changes (off: every read queries SQLite) */
  readCache: boolean
  /** a file of refused phrases or /regexes/, one per line (createSummary answers 422 on a match) */
  contentPolicyFile?: string
  /** the OpenID Connect provider whose ID tokens are accepted as bearers (off unless issuer and client id are set) */
  oidcIssuer?: string
  oidcClientId?: string
  oidcClientSecret?: string
  /** browser sign-in through that provider, and who may use it (NOTESVC_OIDC_* below; ssoConfig) */
  sso: SsoConfig
  /** NOTESVC_PASSWORD_SIGNIN: on (default) or off (only single sign-on in the browser) */
  passwordSignIn: boolean
  /** retention (docs/decisions.md "Retention"): the instance default, the sweep's schedule, the audit log's own */
  retention: RetentionConfig
  /** the bearer token of GET /metrics (NOTESVC_METRICS_TOKEN); unset: the route answers 404 */
  metricsToken?: string
  /** where `notesvc worker`, which has no API, serves GET /metrics (NOTESVC_METRICS_PORT, on HOST); unset: it does not */
  metricsPort?: number
}

export type RetentionMode = 'forever' | 'media' | 'notes'

export interface RetentionConfig {
  /** NOTESVC_RETENTION_MODE: what an account without a policy of its own keeps (default forever) */
  mode: RetentionMode
  /** NOTESVC_RETENTION_DAYS: after how many days, counted from a note's creation; null with `forever` */
  days: number | null
  /** NOTESVC_RETENTION_SWEEP_MINUTES: how often a process with workers runs the sweep (default 60) */
  sweepMinutes: number
  /** NOTESVC_AUDIT_RETENTION_DAYS: audit events older than this are pruned by the sweep; null keeps them forever (default) */
  auditDays: number | null
}

/** The longest retention period accepted, in days (100 years). */
export const MAX_RETENTION_DAYS = 36_500

function retentionConfig(env: Env): RetentionConfig {
  const mode = oneOf('NOTESVC_RETENTION_MODE', env.NOTESVC_RETENTION_MODE, ['forever', 'media', 'notes'] as const, 'forever')
  const daysSet = env.NOTESVC_RETENTION_DAYS !== undefined && env.NOTESVC_RETENTION_DAYS !== ''
  if (mode !== 'forever' && !daysSet) throw new ConfigError(`NOTESVC_RETENTION_MODE=${mode} needs NOTESVC_RETENTION_DAYS: set it to the number of days (1 to ${MAX_RETENTION_DAYS}) after which ${mode === 'media' ? 'recordings are' : 'notes are'} deleted`)
  if (mode === 'forever' && daysSet) throw new ConfigError(`NOTESVC_RETENTION_DAYS is set but NOTESVC_RETENTION_MODE is forever (the default): set NOTESVC_RETENTION_MODE=media or notes, or unset NOTESVC_RETENTION_DAYS`)
  const auditSet = env.NOTESVC_AUDIT_RETENTION_DAYS !== undefined && env.NOTESVC_AUDIT_RETENTION_DAYS !== ''
  return {
    mode,
    days: mode === 'forever' ? null : integer('NOTESVC_RETENTION_DAYS', env.NOTESVC_RETENTION_DAYS, 0, 1, MAX_RETENTION_DAYS),
    sweepMinutes: integer('NOTESVC_RETENTION_SWEEP_MINUTES', env.NOTESVC_RETENTION_SWEEP_MINUTES, 60, 1, 7 * 24 * 60),
    auditDays: auditSet ? integer('NOTESVC_AUDIT_RETENTION_DAYS', env.NOTESVC_AUDIT_RETENTION_DAYS, 0, 1, MAX_RETENTION_DAYS) : null,
  }
}

const DEFAULT_RATE_LIMITS: Record<RateClass, number> = { read: 120, write: 30, processing: 10 }

/** The variables of DECISIONS.md "Running it", with their defaults. */
export const CONFIG_VARIABLES = [
  'PORT', 'HOST', 'NOTESVC_PUBLIC_URL', 'NOTESVC_DOCS_URL', 'NOTESVC_DATA_DIR', 'NOTESVC_DATABASE_URL', 'NOTESVC_DATABASE_TIMEOUT_MS', 'NOTESVC_STORAGE',
  ...STORAGE_VARIABLES,
  'NOTESVC_MODELS_DIR', 'NOTESVC_MODELS_URL', 'NOTESVC_ASR', ...SPEECH_VARIABLES, 'NOTESVC_WHISPER_MODEL', 'NOTESVC_LLM', 'NOTESVC_DIARIZATION', 'OLLAMA_HOST',
  'NOTESVC_OLLAMA_MODEL', 'NOTESVC_WORKERS', 'NOTESVC_ASR_SLOTS', 'NOTESVC_JOB_LEASE_SECONDS', 'NOTESVC_JOB_MAX_TAKEOVERS', 'NOTESVC_RATE_LIMITS', 'NOTESVC_ALLOW_PRIVATE_URLS', 'NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT',
  'NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT',
  'NOTESVC_FFMPEG', 'NOTESVC_FFPROBE', 'NOTESVC_YTDLP', 'NOTESVC_OWNER_EMAIL', 'NOTESVC_ACCESS_LOG', 'NOTESVC_READ_CACHE', 'NOTESVC_CONTENT_POLICY', 'NOTESVC_LOG_LEVEL',
  'NOTESVC_OIDC_ISSUER', 'NOTESVC_OIDC_CLIENT_ID', 'NOTESVC_OIDC_CLIENT_SECRET', 'NOTESVC_METERING',
  'NOTESVC_OIDC_SIGNIN', 'NOTESVC_OIDC_PROVIDER_NAME', 'NOTESVC_OIDC_SCOPES', 'NOTESVC_OIDC_ALLOWED_DOMAINS', 'NOTESVC_OIDC_GROUPS_CLAIM',
  'NOTESVC_OIDC_ALLOWED_GROUPS', 'NOTESVC_OIDC_DEFAULT_PLAN', 'NOTESVC_PASSWORD_SIGNIN',
  'NOTESVC_RETENTION_MODE', 'NOTESVC_RETENTION_DAYS', 'NOTESVC_RETENTION_SWEEP_MINUTES', 'NOTESVC_AUDIT_RETENTION_DAYS',
  'NOTESVC_METRICS_TOKEN', 'NOTESVC_METRICS_PORT',
]

/** `set`: NOTESVC_DATA_DIR (or --data-dir); `legacy`: ./data holding a notesvc.db; `default`: the per-user folder */
export type DataDirSource = 'set' | 'legacy' | 'default'

/**
 * The data folder every command uses, found the same way by each: NOTESVC_DATA_DIR when set (relative
 * to `cwd`); else `./data` when it already holds a notesvc.db (installations from before the per-user
 * default); else `$XDG_DATA_HOME/notesvc`, i.e. `~/.local/share/notesvc` (a relative XDG_DATA_HOME is
 * ignored, as the XDG Base Directory specification says).
 */
export function resolveDataDir(env: Env, cwd: string): { path: string; source: DataDirSource } {
  if (env.NOTESVC_DATA_DIR) return { path: resolve(cwd, env.NOTESVC_DATA_DIR), source: 'set' }
  const legacy = resolve(cwd, 'data')
  if (existsSync(join(legacy, 'notesvc.db'))) return { path: legacy, source: 'legacy' }
  const xdg = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(env.HOME || homedir(), '.local', 'share')
  return { path: join(xdg, 'notesvc'), source: 'default' }
}

/**
 * The models folder: NOTESVC_MODELS_DIR when set; else `./models` of the folder the command runs in
 * when it holds a model (a `ggml-*.bin`, or `diarization/`: where models were pulled before the data
 * folder moved); else `models` inside the data folder, so `serve`, `doctor` and `models pull` run from
 * anywhere find the same models.
 */
export function resolveModelsDir(env: Env, cwd: string, dataDir: string): string {
  if (env.NOTESVC_MODELS_DIR) return resolve(cwd, env.NOTESVC_MODELS_DIR)
  const local = resolve(cwd, 'models')
  let holdsModels = false
  try {
    holdsModels = readdirSync(local).some(f => /^ggml-.+\.bin$/.test(f) || f === 'diarization')
  } catch {
    holdsModels = false
  }
  return holdsModels ? local : join(dataDir, 'models')
}

/** The line a command prints (on stderr) when it uses the data folder: where, and why that one. */
export function describeDataDir(config: Pick<Config, 'dataDir' | 'dataDirSource'>): string {
  const why = {
    set: 'set by NOTESVC_DATA_DIR or --data-dir',
    legacy: './data of this folder holds a notesvc.db, so it is kept; NOTESVC_DATA_DIR overrides',
    default: 'default; NOTESVC_DATA_DIR overrides',
  }[config.dataDirSource]
  return `data folder: ${config.dataDir} (${why})`
}

/**
 * Flags override variables: `--port 9000`, `--data-dir ./x` and `--notesvc-data-dir ./x` all work.
 * Returns the environment with the flags applied and the arguments that were not flags of that kind.
 */
export function applyFlags(env: Env, args: string[]): { env: Env; rest: string[] } {
  const out: Env = { ...env }
  const rest: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg)
    const name = m ? variableForFlag(m[1]!) : undefined
    if (!m || !name) { rest.push(arg); continue }
    let value = m[2]
    if (value === undefined) {
      const next = args[i + 1]
      if (next === undefined || next.startsWith('--')) value = '1'
      else { value = next; i++ }
    }
    out[name] = value
  }
  return { env: out, rest }
}

function variableForFlag(flag: string): string | undefined {
  const upper = flag.toUpperCase().replaceAll('-', '_')
  for (const candidate of [upper, `NOTESVC_${upper}`]) {
    if (CONFIG_VARIABLES.includes(candidate)) return candidate
  }
  return undefined
}

export function parseRateLimits(value: string | undefined): Record<RateClass, number> {
  const limits = { ...DEFAULT_RATE_LIMITS }
  if (!value) return limits
  for (const part of value.split(',')) {
    const [key, raw] = part.split('=').map(s => s.trim())
    if (!key || !(key in limits)) {
      throw new ConfigError(`NOTESVC_RATE_LIMITS: unknown class "${key ?? ''}"; write it as read=120,write=30,processing=10`)
    }
    limits[key as RateClass] = integer(`NOTESVC_RATE_LIMITS ${key}`, raw, 0, 1, 1_000_000_000)
  }
  return limits
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

function databaseUrl(value: string | undefined): string | undefined {
  if (!value) return undefined
  if (!/^postgres(ql)?:\/\/./.test(value)) {
    throw new ConfigError(`NOTESVC_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@db.example:5432/notesvc; unset it to keep the embedded SQLite database in NOTESVC_DATA_DIR`)
  }
  try {
    new URL(value)
  } catch {
    throw new ConfigError('NOTESVC_DATABASE_URL is not a valid URL; write it as postgres://user:password@host:5432/database (percent-encode special characters in the password)')
  }
  return value
}

function oidcIssuer(value: string | undefined): string | undefined {
  if (!value) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(`NOTESVC_OIDC_ISSUER=${value} is not a URL; set it to the provider's issuer, e.g. https://accounts.example.com`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`NOTESVC_OIDC_ISSUER=${value} is not an http(s) URL; set it to the provider's issuer, e.g. https://accounts.example.com`)
  }
  // Kept as written (not trimmed): the "iss" claim must equal it exactly.
  return value
}

/** Browser sign-in through the organisation's OpenID Connect provider (src/modules/sso). */
export interface SsoConfig {
  /** on when NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID are set, unless NOTESVC_OIDC_SIGNIN=off */
  enabled: boolean
  /** the button's "Sign in with …" (NOTESVC_OIDC_PROVIDER_NAME; default the issuer's host) */
  providerName: string
  /** the scopes asked for (NOTESVC_OIDC_SCOPES; default `openid email profile`) */
  scopes: string
  /** lower-case domains an email must be in (NOTESVC_OIDC_ALLOWED_DOMAINS); empty: any */
  allowedDomains: string[]
  /** the claim that lists a person's groups (NOTESVC_OIDC_GROUPS_CLAIM; `groups` when only the groups are set) */
  groupsClaim?: string
  /** a person must be in one of these (NOTESVC_OIDC_ALLOWED_GROUPS); empty: any */
  allowedGroups: string[]
  /** the plan of an account made at its first sign-in (NOTESVC_OIDC_DEFAULT_PLAN; default free) */
  defaultPlan: 'free' | 'pro'
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map(s => s.trim()).filter(Boolean)
}

/** The SSO settings; a value that cannot work stops the start with what to set. */
export function ssoConfig(env: Env, issuer: string | undefined): SsoConfig {
  const clientId = env.NOTESVC_OIDC_CLIENT_ID || undefined
  const signIn = oneOf('NOTESVC_OIDC_SIGNIN', env.NOTESVC_OIDC_SIGNIN, ['on', 'off'] as const, 'on')
  const allowedDomains = list(env.NOTESVC_OIDC_ALLOWED_DOMAINS).map(d => d.toLowerCase().replace(/^@/, ''))
  for (const d of allowedDomains) {
    if (!DOMAIN.test(d)) throw new ConfigError(`NOTESVC_OIDC_ALLOWED_DOMAINS: "${d}" is not a domain; write the domains people's emails end in, comma-separated, e.g. example.com,example.org`)
  }
  const allowedGroups = list(env.NOTESVC_OIDC_ALLOWED_GROUPS)
  const groupsClaim = env.NOTESVC_OIDC_GROUPS_CLAIM?.trim() || (allowedGroups.length ? 'groups' : undefined)
  if (env.NOTESVC_OIDC_GROUPS_CLAIM?.trim() && allowedGroups.length === 0) {
    throw new ConfigError(`NOTESVC_OIDC_GROUPS_CLAIM=${env.NOTESVC_OIDC_GROUPS_CLAIM} is set but NOTESVC_OIDC_ALLOWED_GROUPS is empty; set NOTESVC_OIDC_ALLOWED_GROUPS to the groups that may sign in (comma-separated), or unset NOTESVC_OIDC_GROUPS_CLAIM`)
  }
  const scopes = (env.NOTESVC_OIDC_SCOPES || 'openid email profile').trim().split(/\s+/)
  if (!scopes.includes('openid')) throw new ConfigError(`NOTESVC_OIDC_SCOPES=${env.NOTESVC_OIDC_SCOPES} lacks "openid"; set it to space-separated scopes that include openid and email, e.g. "openid email profile"`)
  const restricted = allowedDomains.length > 0 || allowedGroups.length > 0
  if (restricted && (!issuer || !clientId)) {
    throw new ConfigError('NOTESVC_OIDC_ALLOWED_DOMAINS and NOTESVC_OIDC_ALLOWED_GROUPS restrict single sign-on, which is off; set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID too, or unset them')
  }
  return {
    enabled: Boolean(issuer && clientId) && signIn === 'on',
    providerName: env.NOTESVC_OIDC_PROVIDER_NAME?.trim() || (issuer ? new URL(issuer).host : ''),
    scopes: scopes.join(' '),
    allowedDomains,
    groupsClaim,
    allowedGroups,
    defaultPlan: oneOf('NOTESVC_OIDC_DEFAULT_PLAN', env.NOTESVC_OIDC_DEFAULT_PLAN, ['free', 'pro'] as const, 'free'),
  }
}

/** NOTESVC_PASSWORD_SIGNIN; off only when single sign-on is on, or nobody could sign in to the browser. */
function passwordSignIn(env: Env, sso: SsoConfig): boolean {
  const on = oneOf('NOTESVC_PASSWORD_SIGNIN', env.NOTESVC_PASSWORD_SIGNIN, ['on', 'off'] as const, 'on') === 'on'
  if (!on && !sso.enabled) {
    throw new ConfigError('NOTESVC_PASSWORD_SIGNIN=off leaves no way to sign in to the browser: set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID (single sign-on) first, or set NOTESVC_PASSWORD_SIGNIN=on')
  }
  return on
}

/** The metrics token: unset, or a secret long enough not to be guessed. */
function metricsToken(value: string | undefined): string | undefined {
  if (!value) return undefined
  if (value.trim() !== value || /\s/.test(value)) throw new ConfigError('NOTESVC_METRICS_TOKEN must not contain spaces; set it to a random secret such as the output of `openssl rand -hex 32`')
  if (value.length < 16) throw new ConfigError(`NOTESVC_METRICS_TOKEN is ${value.length} characters long; use at least 16 random characters, such as the output of \`openssl rand -hex 32\`, or unset it to turn GET /metrics off`)
  return value
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const port = integer('PORT', env.PORT, 8080, 0, 65535)
  const host = env.HOST || '127.0.0.1'
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host
  const publicUrl = trimSlash(env.NOTESVC_PUBLIC_URL || `http://${urlHost}:${port}`)
  try {
    new URL(publicUrl)
  } catch {
    throw new ConfigError(`NOTESVC_PUBLIC_URL=${publicUrl} is not a URL; set it to the address clients use, e.g. https://notes.example.com`)
  }
  const data = resolveDataDir(env, cwd)
  const dataDir = data.path
  const issuer = oidcIssuer(env.NOTESVC_OIDC_ISSUER)
  const sso = ssoConfig(env, issuer)
  const asrSlots = integer('NOTESVC_ASR_SLOTS', env.NOTESVC_ASR_SLOTS, defaultAsrSlots(), 1, 64)
  return {
    port,
    host,
    publicUrl,
    docsUrl: trimSlash(env.NOTESVC_DOCS_URL || `${publicUrl}/docs`),
    dataDir,
    dataDirSource: data.source,
    databasePath: resolve(dataDir, 'notesvc.db'),
    databaseUrl: databaseUrl(env.NOTESVC_DATABASE_URL),
    databaseTimeoutMs: integer('NOTESVC_DATABASE_TIMEOUT_MS', env.NOTESVC_DATABASE_TIMEOUT_MS, DEFAULT_DATABASE_TIMEOUT_MS, 0, 600_000),
    ...storageSetting(env),
    modelsDir: resolveModelsDir(env, cwd, dataDir),
    modelsUrl: trimSlash(env.NOTESVC_MODELS_URL || DEFAULT_MODELS_URL),
    ...speechSetting(env),
    whisperModel: env.NOTESVC_WHISPER_MODEL || 'base.en',
    pocketsphinx: { ...POCKETSPHINX_DEFAULTS },
    llm: oneOf('NOTESVC_LLM', env.NOTESVC_LLM, ['auto', 'ollama', 'builtin'] as const, 'auto'),
    diarization: oneOf('NOTESVC_DIARIZATION', env.NOTESVC_DIARIZATION, ['auto', 'builtin', 'sherpa-onnx', 'off'] as const, 'auto'),
    ollamaHost: trimSlash(env.OLLAMA_HOST || 'http://127.0.0.1:11434'),
    ollamaModel: env.NOTESVC_OLLAMA_MODEL || 'llama3.2',
    // twice the chunk slots for `serve` (shared/DECISIONS.md), so a short recording's chunks are in
    // flight beside a long one's and the fair slot scheduler sees both; `worker` takes 1 (cli.ts)
    workers: integer('NOTESVC_WORKERS', env.NOTESVC_WORKERS, 2 * asrSlots, 0, 64),
    asrSlots,
    jobLeaseSeconds: integer('NOTESVC_JOB_LEASE_SECONDS', env.NOTESVC_JOB_LEASE_SECONDS, 60, 2, 3600),
    jobMaxTakeovers: integer('NOTESVC_JOB_MAX_TAKEOVERS', env.NOTESVC_JOB_MAX_TAKEOVERS, 3, 1, 100),
    rateLimits: parseRateLimits(env.NOTESVC_RATE_LIMITS),
    metering: oneOf('NOTESVC_METERING', env.NOTESVC_METERING, ['on', 'off'] as const, 'on') === 'on',
    allowPrivateUrls: flag(env.NOTESVC_ALLOW_PRIVATE_URLS),
    // 25: DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT of modules/webhooks/service.ts
    maxWebhooksPerAccount: integer('NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT', env.NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT, 25, 1, 1000),
    // 500: DEFAULT_MAX_SPEAKER_PROFILES_PER_ACCOUNT of modules/notes/speakers.ts
    maxSpeakerProfilesPerAccount: integer('NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT', env.NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT, 500, 1, 100_000),
    ffmpeg: env.NOTESVC_FFMPEG || undefined,
    ffprobe: env.NOTESVC_FFPROBE || undefined,
    ytdlp: env.NOTESVC_YTDLP || undefined,
    ownerEmail: env.NOTESVC_OWNER_EMAIL || 'owner@localhost',
    accessLog: flag(env.NOTESVC_ACCESS_LOG),
    contentPolicyFile: env.NOTESVC_CONTENT_POLICY || undefined,
    readCache: oneOf('NOTESVC_READ_CACHE', env.NOTESVC_READ_CACHE, ['on', 'off'] as const, 'on') === 'on',
    oidcIssuer: issuer,
    oidcClientId: env.NOTESVC_OIDC_CLIENT_ID || undefined,
    oidcClientSecret: env.NOTESVC_OIDC_CLIENT_SECRET || undefined,
    sso,
    passwordSignIn: passwordSignIn(env, sso),
    retention: retentionConfig(env),
    metricsToken: metricsToken(env.NOTESVC_METRICS_TOKEN),
    metricsPort: env.NOTESVC_METRICS_PORT ? integer('NOTESVC_METRICS_PORT', env.NOTESVC_METRICS_PORT, 0, 0, 65535) : undefined,
  }
}
