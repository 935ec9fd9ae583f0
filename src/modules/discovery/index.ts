import { Elysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import type { Config } from '../../config'
import { completeDocument, documented } from '../../http/openapi'
import { ERROR_MEANING, ERROR_STATUS } from '../../http/errors'
import { ErrorEnvelopeSchema } from '../../http/schemas'
import { OPERATIONS, SCOPES } from '../../http/operations'
import { PLANS, publishedCosts } from '../credits/model'
import { VERSION } from '../../version'
import { commandLine } from '../../command-name'
import { ApiIndex, Health } from './model'
// The docs page's script is embedded in the binary: the page makes no request outside this server.
import scalarBundle from '../../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with { type: 'text' }

export const OPENAPI_PATH = '/v1/openapi.json'
const SCALAR_PATH = '/docs/scalar.js'

export function apiIndex(config: Config) {
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
    },
    credits: {
      unit: 'one credit per started minute of media',
      plans: PLANS,
      grantResets: '00:00 UTC on the first day of each month',
      beyondGrant: 'prepaid credits, spent after the grant, never expire',
      costs: publishedCosts(),
      perOperation: Object.fromEntries(OPERATIONS.map(o => [o.id, o.credits])),
      reads: 'free',
    },
    rateLimits: {
      windowSeconds: 60,
      countedPer: 'credential (client address for GET /v1 and GET /v1/health)',
      classes: Object.fromEntries((['read', 'write', 'processing'] as const).map(c => [c, {
        limit: config.rateLimits[c],
        operations: OPERATIONS.filter(o => o.rateClass === c).map(o => o.id),
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

function errorsPage(): string {
  const rows = Object.entries(ERROR_STATUS)
    .map(([code, status]) => `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${status}</td><td>${ERROR_MEANING[code as keyof typeof ERROR_MEANING]}</td></tr>`)
    .join('\n')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>notesvc errors</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td,th{padding:.4rem .8rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}tr:target{background:#fff6cc}</style></head>
<body><h1>notesvc errors</h1><p>Every failure returns <code>{"error": {type, code, message, doc_url, details?, retry_after_seconds?, request_id?}}</code>. Branch on <code>code</code>; <code>message</code> is for people.</p>
<table><thead><tr><th>code</th><th>HTTP</th><th>meaning and what to do</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`
}

export function discoveryRoutes(deps: { config: Config; guard: Elysia<any, any, any, any, any, any, any>; asrEngine: () => string; llmEngine: () => string }) {
  const index = apiIndex(deps.config)
  const errorsHtml = errorsPage()
  return new Elysia({ name: 'discovery-routes' })
    .use(deps.guard)
    // Registered before the plugin so that it applies to the plugin's document route.
    .onAfterHandle(({ path, response }) => (path === OPENAPI_PATH ? completeDocument(response) : undefined))
    .use(openapi({
      path: '/docs',
      specPath: OPENAPI_PATH,
      openapiVersion: '3.1.0',
      documentation: {
        info: { title: 'notesvc API', version: VERSION, description: 'Transcripts and structured summaries of audio, video and video links, and the library of notes and folders behind them. Self-hosted.' },
        servers: [{ url: deps.config.publicUrl }],
        components: {
          securitySchemes: {
            apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (svc_live_… or svc_test_…), an OAuth access token or an ID token.' },
            oauth2: {
              type: 'oauth2',
              flows: {
                authorizationCode: {
                  authorizationUrl: `${deps.config.publicUrl}/oauth/authorize`,
                  tokenUrl: `${deps.config.publicUrl}/oauth/token`,
                  refreshUrl: `${deps.config.publicUrl}/oauth/token`,
                  scopes: Object.fromEntries(SCOPES.map(s => [s.scope, s.description])),
                },
              },
            },
          },
          schemas: { Error: ErrorEnvelopeSchema as unknown as Record<string, unknown> },
        } as Record<string, unknown>,
      },
      exclude: { paths: ['/docs', '/docs/errors', SCALAR_PATH, OPENAPI_PATH] },
      scalar: { cdn: SCALAR_PATH, url: OPENAPI_PATH, withDefaultFonts: false } as never,
    }))
    .get(SCALAR_PATH, () => new Response(scalarBundle, { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400' } }), { detail: { hide: true } })
    .get('/docs/errors', () => new Response(errorsHtml, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get('/v1', () => index, { ...documented('getApiIndex', [], { 200: ApiIndex }) })
    // Which engines answer is reported without checking them: health never waits on a provider.
    .get('/v1/health', () => ({ status: 'ok', version: VERSION, engines: { asr: deps.asrEngine(), llm: deps.llmEngine() } }), { ...documented('getHealth', [], { 200: Health }) })
}
