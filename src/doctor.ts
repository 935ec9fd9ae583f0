import { accessSync, constants, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { describeDataDir, type Config } from './config'
import { openConfiguredStore } from './db/open'
import { storeSchemaVersion } from './db/migrate-store'
import { withoutPassword } from './db/copy'
import type { Store } from './db/store'
import { createLlmSelector } from './engines/llm'
import { speechChecks } from './engines/asr'
import { createDiarizationSelector } from './engines/diarization'
import { diarizationModelPaths, sherpaModelsPresent } from './engines/diarization/models'
import { tryDiarizationModels } from './engines/diarization/model-trial'
import { commandLine } from './command-name'
import { systemClock } from './clock'
import { createJobsRepo } from './jobs/repo'
import { liveWorkerRows, thisObserver } from './jobs/presence'
import { SSO_CALLBACK_PATH } from './modules/sso/service'
import { checkStorage } from './storage'

interface Check {
  name: string
  ok: boolean
  /** true when the server cannot run without it */
  essential?: boolean
  /** works, but not as the configuration seems to intend (printed as `warn`) */
  warn?: boolean
  detail: string
  fix?: string
}

function program(configured: string | undefined, name: string): string | null {
  if (configured) return existsSync(configured) ? configured : null
  return Bun.which(name)
}

/** The database as the configuration names it: the SQLite file, or the PostgreSQL URL without its password. */
function describeDatabase(config: Pick<Config, 'databaseUrl' | 'databasePath'>): string {
  return config.databaseUrl ? `postgres, ${withoutPassword(config.databaseUrl)}` : `sqlite, ${config.databasePath}`
}

/**
 * The live worker processes (a heartbeat within two leases, and on this machine still running), each
 * with where it runs: read from the `workers` table every worker process heartbeats in, whichever
 * machine it runs on.
 */
async function describeWorkers(store: Store, leaseMs: number): Promise<string> {
  const now = systemClock.now()
  const live = await liveWorkerRows(createJobsRepo(store), now, leaseMs, thisObserver())
  if (live.length === 0) return `none live: uploads wait in the queue until \`${commandLine('serve')}\` (NOTESVC_WORKERS 1 or more) or \`${commandLine('worker')}\` runs`
  const one = (w: (typeof live)[number]) => `${w.id} pid ${Number(w.pid)} on ${w.host}, ${Number(w.slots)} at once, heartbeat ${Math.round((now.getTime() - Date.parse(w.heartbeat_at)) / 1000)} s ago`
  return `${live.length} live: ${live.map(one).join('; ')}`
}

/** What a command that needs the server's database says when the data folder has none. */
export function noDatabaseYet(config: Pick<Config, 'databasePath'>): string {
  return `no database yet at ${config.databasePath}; start \`${commandLine('serve')}\` first, or set NOTESVC_DATA_DIR (or --data-dir) to the folder the server uses`
}

/** The folder itself when it exists, else the nearest folder above it that does (where it would be created). */
function nearestExisting(path: string): string {
  let p = path
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p)
  return p
}

/**
 * Single sign-on: whether the provider's discovery document answers (with the issuer it must name),
 * and the redirect URI the operator registers at the provider.
 */
async function singleSignOn(config: Config): Promise<Check> {
  const passwords = `password sign-in ${config.passwordSignIn ? 'on' : 'off'}`
  if (!config.sso.enabled || !config.oidcIssuer) {
    return { name: 'single sign-on', ok: true, detail: `off; ${passwords} (set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID for "Sign in with" your identity provider)` }
  }
  const redirect = `${config.publicUrl}${SSO_CALLBACK_PATH}`
  const url = `${config.oidcIssuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  let problem: string | null = null
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(3000) })
    const doc = res.status === 200 ? await res.json() as { issuer?: unknown } : null
    if (!doc) problem = `${url} answered ${res.status}`
    else if (doc.issuer !== config.oidcIssuer) problem = `${url} names issuer ${String(doc.issuer)}, not ${config.oidcIssuer}`
  } catch (err) {
    problem = `${url} cannot be reached (${(err as Error).message})`
  }
  return {
    name: 'single sign-on', ok: problem === null,
    detail: problem ?? `"Sign in with ${config.sso.providerName}" (${config.oidcIssuer}); the redirect URI to register at the provider: ${redirect}; ${passwords}`,
    fix: problem ? 'set NOTESVC_OIDC_ISSUER to the issuer exactly as the provider names it, and let this machine reach it' : undefined,
  }
}

/** One line per check: what is ready, what is missing, and the command that fixes it. Creates nothing. */
export async function runDoctor(config: Config, out: (line: string) => void): Promise<boolean> {
  const checks: Check[] = []

  // Checked without creating it: serve creates it, doctor only looks.
  const existing = nearestExisting(config.dataDir)
  try {
    accessSync(existing, constants.W_OK)
    checks.push({ name: 'data dir', ok: true, essential: true, detail: `${describeDataDir(config).replace(/^data folder: /, '')}${existing === config.dataDir ? '' : ', not created yet'}` })
  } catch (err) {
    checks.push({ name: 'data dir', ok: false, essential: true, detail: `${config.dataDir} is not writable (${(err as Error).message})`, fix: 'set NOTESVC_DATA_DIR to a folder this user can write' })
  }

  // The store the server would open (PostgreSQL when NOTESVC_DATABASE_URL is set, migrations included);
  // never an empty SQLite database where there is none.
  if (!config.databaseUrl && !existsSync(config.databasePath)) {
    checks.push({ name: 'database', ok: false, detail: noDatabaseYet(config) })
  } else try {
    const store = await openConfiguredStore(config, { poolSize: 1 })
    try {
      const v = await storeSchemaVersion(store)
      const workers = await describeWorkers(store, config.jobLeaseSeconds * 1000)
      checks.push({ name: 'database', ok: true, essential: true, detail: `${describeDatabase(config)} (schema ${v})` })
      checks.push({ name: 'job workers', ok: true, detail: workers })
    } finally {
      await store.close()
    }
  } catch (err) {
    checks.push({
      name: 'database', ok: false, essential: true, detail: `${describeDatabase(config)}: ${(err as Error).message}`,
      fix: config.databaseUrl
        ? 'check NOTESVC_DATABASE_URL (host, port, user, password, database) and that this PostgreSQL accepts connections from here'
        : 'check NOTESVC_DATA_DIR, or restore the database from a backup',
    })
  }

  checks.push({ name: 'storage', essential: true, ...checkStorage(config) })

  for (const [name, configured, fix] of [
    ['ffmpeg', config.ffmpeg, 'apt-get install ffmpeg (or set NOTESVC_FFMPEG); without it only WAV uploads work'],
    ['ffprobe', config.ffprobe, 'apt-get install ffmpeg (or set NOTESVC_FFPROBE)'],
    ['yt-dlp', config.ytdlp, 'install yt-dlp (apt-get install yt-dlp, or set NOTESVC_YTDLP); needed for video links'],
  ] as const) {
    const found = program(configured, name)
    checks.push({ name, ok: Boolean(found), detail: found ?? 'not found', fix: found ? undefined : fix })
  }

  // Each speech engine's own lines, then the one in use: with NOTESVC_ASR=auto any one is enough.
  checks.push(...(await speechChecks(config)))

  {
    const models = sherpaModelsPresent(config.modelsDir)
    // the model files as the server would load them: tried in a child process (a broken graph would end it)
    const refused = models.ready && config.diarization !== 'off' && config.diarization !== 'builtin'
      ? await tryDiarizationModels(diarizationModelPaths(config.modelsDir)).then(() => false, () => true)
      : false
    const d = createDiarizationSelector(config).describe()
    checks.push({
      name: 'diarization', ok: !refused || config.diarization === 'auto', warn: refused, detail: d.detail,
      fix: refused
        ? `replace the model file named above: ${commandLine('models pull diarization')} (or models import FILE --name segmentation|embedding offline)`
        : d.engine === 'builtin' && !models.ready ? `for the neural engine: ${commandLine('models pull diarization')} (or models import FILE --name segmentation|embedding offline)` : undefined,
    })
  }

  const llm = await createLlmSelector(config).describe()
  const ollamaWanted = config.llm === 'ollama'
  const ollamaBroken = llm.detail.includes('not reachable') || llm.detail.includes('has no model')
  checks.push({
    name: 'llm engine',
    ok: !(ollamaWanted && ollamaBroken),
    detail: llm.detail,
    fix: !ollamaBroken ? undefined : llm.detail.includes('has no model')
      ? `ollama pull ${config.ollamaModel}`
      : ollamaWanted ? 'start Ollama (ollama serve), set OLLAMA_HOST, or set NOTESVC_LLM=auto to fall back to the builtin engine' : `for model-written summaries install Ollama and run: ollama pull ${config.ollamaModel}`,
  })

  checks.push(await singleSignOn(config))

  for (const c of checks) {
    out(`${!c.ok ? 'missing' : c.warn ? 'warn   ' : 'ok     '}  ${c.name.padEnd(14)} ${c.detail}${c.fix ? `  → fix: ${c.fix}` : ''}`)
  }
  return checks.every(c => c.ok || !c.essential)
}
