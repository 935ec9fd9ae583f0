import { DEFAULT_DATABASE_TIMEOUT_MS } from './db/deadline'
import { resolve } from 'node:path'
import { resolveDataDir, resolveModelsDir, type DataDirSource } from './data-dir'
import { retentionConfig, type RetentionConfig } from './retention-config'
import { oidcIssuer, passwordSignIn, ssoConfig, type SsoConfig } from './sign-in-config'
import { DEFAULT_MODELS_URL } from './engines/asr/models'
import { defaultAsrSlots } from './engines/asr/scheduler'
import { POCKETSPHINX_DEFAULTS, type PocketsphinxOptions } from './engines/asr/pocketsphinx'
import { ConfigError, flag, integer, oneOf, type Env } from './environment'
import { STORAGE_VARIABLES, storageSetting } from './storage'
import { SPEECH_VARIABLES, speechSetting } from './engines/asr/registry'
import { LIVE_ENGINE_SETTINGS, type LiveEngineSetting } from './engines/live/engines'

export { ConfigError, type Env }
export { describeDataDir } from './data-dir'
export { MAX_RETENTION_DAYS, type RetentionConfig, type RetentionMode } from './retention-config'
export { type SsoConfig } from './sign-in-config'

export type RateClass = 'read' | 'write' | 'processing'
type LlmKind = 'auto' | 'ollama' | 'builtin'

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
  /** askLibrary re-ranks its passages with this Ollama embedding model (NOTESVC_ASK_EMBED_MODEL); null: off */
  askEmbedModel: string | null
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
  /** live transcription streams (/v1/realtime): at most this many at once on this server and per account; closed after this many seconds without a client event; their engine (NOTESVC_LIVE_ENGINE) */
  live: { maxStreams: number; maxStreamsPerAccount: number; idleSeconds: number; resumeSeconds: number; engine: LiveEngineSetting }
}

const DEFAULT_RATE_LIMITS: Record<RateClass, number> = { read: 120, write: 30, processing: 10 }

/** The variables of DECISIONS.md "Running it", with their defaults. */
const CONFIG_VARIABLES = [
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
  'NOTESVC_LIVE_MAX_STREAMS', 'NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT', 'NOTESVC_LIVE_IDLE_SECONDS', 'NOTESVC_LIVE_RESUME_SECONDS', 'NOTESVC_LIVE_ENGINE',
]

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

function parseRateLimits(value: string | undefined): Record<RateClass, number> {
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
    askEmbedModel: env.NOTESVC_ASK_EMBED_MODEL?.trim() || null,
    // twice the chunk slots for `serve` (shared/DECISIONS.md), so a short recording's chunks are in
    // flight beside a long one's and the fair slot scheduler sees both; `worker` takes 1 (commands/worker.ts)
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
    live: {
      maxStreams: integer('NOTESVC_LIVE_MAX_STREAMS', env.NOTESVC_LIVE_MAX_STREAMS, 8, 1, 1000),
      maxStreamsPerAccount: integer('NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT', env.NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT, 2, 1, 1000),
      idleSeconds: integer('NOTESVC_LIVE_IDLE_SECONDS', env.NOTESVC_LIVE_IDLE_SECONDS, 30, 1, 3600),
      resumeSeconds: integer('NOTESVC_LIVE_RESUME_SECONDS', env.NOTESVC_LIVE_RESUME_SECONDS, 60, 1, 3600),
      engine: oneOf('NOTESVC_LIVE_ENGINE', env.NOTESVC_LIVE_ENGINE, LIVE_ENGINE_SETTINGS, 'auto'),
    },
  }
}
