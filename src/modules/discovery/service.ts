import type { Config } from '../../config'
import { SCOPES, type Operation } from '../../http/contract'
import { PLANS } from '../credits/model'
import { VERSION } from '../../version'
import { commandLine } from '../../command-name'
import type { SpeechServerStatus } from '../../engines/asr/engine'
import { OPENAPI_PATH } from './docs'
import { SANDBOX_SCENARIOS, SCENARIO_OUTCOMES } from '../../http/sandbox-scenarios'

/** What the API index lists beside the configuration: the operations (from the registry) and the published cost table (from credits). */
export interface Catalogue {
  operations: readonly Operation[]
  costs: Record<string, number>
}

function apiIndex(config: Config, catalogue: Catalogue) {
  const { operations } = catalogue
  const base = config.publicUrl
  return {
    name: 'notesvc',
    version: VERSION,
    documentation: config.docsUrl,
    openapi: `${base}${OPENAPI_PATH}`,
    mcp: `${base}/mcp`,
    authentication: {
      header: 'Authorization: Bearer <credential>',
      credentials: [
        { type: 'api_key', prefixes: { live: 'svc_live_', sandbox: 'svc_test_' }, howToGet: `${commandLine('keys create --email you@example.com')} (or the account settings page)` },
        { type: 'oauth2_access_token', flow: 'authorization_code with PKCE (S256)' },
        { type: 'id_token', description: 'an ID token from the configured OpenID Connect provider' },
      ],
      settingsPage: `${base}/settings`,
      mcp: { endpoint: `${base}/mcp`, manifest: `${base}/.well-known/mcp.json`, transport: 'streamable-http' },
      oauth: {
        authorizationUrl: `${base}/oauth/authorize`,
        tokenUrl: `${base}/oauth/token`,
        registrationUrl: `${base}/oauth/register`,
        metadata: `${base}/.well-known/oauth-authorization-server`,
      },
      errors: { missingOrInvalid: '401 invalid_token', missingScope: '403 insufficient_scope' },
    },
    sandbox: {
      keyPrefix: 'svc_test_',
      rules: [
        'Every route runs against fixed sample output; no model is called.',
        'Nothing is charged: creditsCharged is 0 and X-Credits-Remaining shows the account balance.',
        'Notes and folders written with a sandbox key live in a separate sandbox library of the same account.',
        'Response shapes are identical to live ones; processing results carry a notice string.',
      ],
      scenarios: {
        howToUse: 'Name an upload\'s file (or a transcription URL\'s last segment) after a scenario, such as insufficient_credits.wav, or send the header Notesvc-Scenario: <name>. Live keys ignore both. An error scenario fires only on operations that declare its status; webhook_retry is named by the file name only.',
        names: SANDBOX_SCENARIOS.map(name => ({ name, outcome: SCENARIO_OUTCOMES[name] })),
      },
    },
    credits: {
      unit: 'one credit per started minute of media',
      plans: PLANS,
      grantResets: '00:00 UTC on the first day of each month',
      beyondGrant: 'prepaid credits, spent after the grant, never expire',
      costs: catalogue.costs,
      perOperation: Object.fromEntries(operations.map(o => [o.id, o.credits])),
      reads: 'free',
    },
    rateLimits: {
      windowSeconds: 60,
      countedPer: 'credential (client address for GET /v1 and GET /v1/health)',
      classes: Object.fromEntries((['read', 'write', 'processing'] as const).map(c => [c, {
        limit: config.rateLimits[c],
        operations: operations.filter(o => o.rateClass === c).map(o => o.id),
      }])),
      headers: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
      onLimit: '429 rate_limited with Retry-After',
    },
    scopes: SCOPES.map(s => ({ scope: s.scope, description: s.description })),
    resources: {
      notes: `${base}/v1/notes`,
      folders: `${base}/v1/folders`,
      uploads: `${base}/v1/uploads`,
      transcriptions: `${base}/v1/transcriptions`,
      summaries: `${base}/v1/summaries`,
      youtubeSummaries: `${base}/v1/youtube-summaries`,
      usage: `${base}/v1/usage`,
      health: `${base}/v1/health`,
      openapi: `${base}${OPENAPI_PATH}`,
      documentation: config.docsUrl,
      errors: `${config.docsUrl}/errors`,
      mcp: `${base}/mcp`,
      mcpManifest: `${base}/.well-known/mcp.json`,
      oauthMetadata: `${base}/.well-known/oauth-authorization-server`,
      protectedResourceMetadata: `${base}/.well-known/oauth-protected-resource`,
      signIn: `${base}/signin`,
      settings: `${base}/settings`,
    },
  }
}

/** What health reports, from where it is read. */
export interface HealthSources {
  asrEngine(): string
  /** the server the speech engine sends speech to, when it does (NOTESVC_ASR=remote): last known, never waited for */
  asrServer?(): SpeechServerStatus | undefined
  llmEngine(): string
  /** the diarization engine in use: builtin, sherpa-onnx or off (absent: not reported) */
  diarizationEngine?(): string
  /** the database: its back end, whether it answers now, and the live job worker processes */
  backend: {
    readonly database: string
    reachable(): Promise<boolean>
    workers(): Promise<number>
  }
}

const withServer = (server: SpeechServerStatus | undefined) => (server ? { asrServer: server } : {})

/** What a degraded health says, while the database does not answer. */
const DATABASE_UNREACHABLE = 'the database cannot be reached: requests that need it answer 503 service_unavailable with Retry-After until it is back'

/**
 * The health body: which engines answer is reported without checking them (health never waits on a
 * provider); whether the database answers is asked every time (one trivial statement, at most 2 s):
 * `status` is `degraded`, with a `reason`, while it does not, and `ok` again as soon as it does. The
 * answer stays 200 either way: the process is alive, and says what is wrong (docs/decisions.md,
 * "Errors and outages"). `detail` (any value but 0, false, no or off, never refused) adds the
 * database back end and the live job workers, one indexed count (left out while the database does
 * not answer).
 */
async function health(s: HealthSources, detail: unknown) {
  const wanted = detail !== undefined && !['0', 'false', 'no', 'off'].includes(String(detail).toLowerCase())
  const up = await s.backend.reachable()
  return {
    status: up ? ('ok' as const) : ('degraded' as const),
    version: VERSION,
    engines: { asr: s.asrEngine(), ...withServer(s.asrServer?.()), llm: s.llmEngine(), ...(s.diarizationEngine ? { diarization: s.diarizationEngine() } : {}) },
    ...(up ? {} : { reason: DATABASE_UNREACHABLE }),
    ...(wanted ? { database: s.backend.database, ...(up ? { workers: await s.backend.workers() } : {}) } : {}),
  }
}

export type DiscoveryService = ReturnType<typeof createDiscoveryService>

/** What the two public operations answer: the API index (made once) and health (asked each time). */
export function createDiscoveryService(deps: HealthSources & { config: Config; catalogue: Catalogue }) {
  let index: ReturnType<typeof apiIndex> | undefined
  return {
    index: () => (index ??= apiIndex(deps.config, deps.catalogue)),
    health: (detail: unknown) => health(deps, detail),
  }
}
