import { Elysia } from 'elysia'
import type { Config } from '../../config'
import { ERROR_MEANING, ERROR_STATUS } from '../../http/errors'
import type { Operation } from '../../http/contract'
import { openApiDocument } from '../../http/openapi'
import { jsonText } from '../../http/responses'
import { VERSION } from '../../version'
// The docs page's script is embedded in the binary (gzipped by scripts/build.ts): the page makes no
// request outside this server.
import scalarBundle from '../../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with { type: 'file' }
import { escapeHtml } from '../../http/html'
import { pageHeaders } from '../../http/security-headers'

export const OPENAPI_PATH = '/v1/openapi.json'
const SCALAR_PATH = '/docs/scalar.js'
const SETUP_PATH = '/docs/setup.js'
/**
 * Run before Scalar's bundle. Its copy of zod tries `Function('')` to learn whether it may compile
 * validators, which the page's CSP (no 'unsafe-eval') blocks and reports as a violation; `jitless` is
 * zod's own setting for pages under a CSP (what `z.config({ jitless: true })` sets, on the global
 * every copy of zod reads), so it does not try.
 */
const SETUP_SCRIPT = 'globalThis.__zod_globalConfig = Object.assign(globalThis.__zod_globalConfig || {}, { jitless: true })\n'
const TITLE = 'notesvc API'
const DESCRIPTION = 'Transcripts and structured summaries of audio, video and video links, and the library of notes and folders behind them. Self-hosted.'

/**
 * How the API reference page is set up. The reference offers services hosted elsewhere ("Ask AI",
 * "Generate MCP", and in its developer tools "Share" and "Deploy"), which upload the document or call
 * out; a self-hosted, offline server switches them off (the MCP server is this server's own `/mcp`).
 */
const SCALAR_CONFIGURATION = {
  url: OPENAPI_PATH,
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  telemetry: false,
} as const

const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b
let gzippedScript: Promise<Uint8Array<ArrayBuffer>> | undefined
/** The reference's script (4.4 MB), gzipped: as embedded by the build, or gzipped here once (from source). */
function scalarScript(): Promise<Uint8Array<ArrayBuffer>> {
  gzippedScript ??= Bun.file(scalarBundle).bytes().then(bytes => isGzip(bytes) ? bytes : Bun.gzipSync(bytes, { level: 9 }))
  return gzippedScript
}

const SCRIPT_HEADERS = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }

/** Sent gzipped (1.3 MB) to a client that takes gzip, as every browser does; unpacked for one that does not. */
async function scalarResponse(acceptEncoding: string | null): Promise<Response> {
  const gzipped = await scalarScript()
  const headers = { ...SCRIPT_HEADERS, vary: 'accept-encoding' }
  if (/\bgzip\b/.test(acceptEncoding ?? '')) return new Response(gzipped, { headers: { ...headers, 'content-encoding': 'gzip' } })
  return new Response(Bun.gunzipSync(gzipped), { headers })
}

function referencePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${TITLE}</title>
<meta name="description" content="${escapeHtml(DESCRIPTION)}">
<style>body{margin:0}</style>
</head>
<body>
<script id="api-reference" data-configuration="${escapeHtml(JSON.stringify(SCALAR_CONFIGURATION))}"></script>
<script src="${SETUP_PATH}"></script>
<script src="${SCALAR_PATH}"></script>
</body>
</html>`
}

/**
 * The reference page's Content-Security-Policy, the tightest Scalar (1.72) renders under in Chromium
 * with no violation (test/modules/discovery/docs-page.test.ts): scripts from this server only, no
 * eval, the document and "Test request" calls to this server (and its public URL, if another origin);
 * but inline styles, which Scalar sets as style elements and attributes as it renders (nothing on
 * the page is a user's, and no script can be added through a style).
 */
function referencePolicy(publicUrl: string): string {
  const origin = new URL(publicUrl).origin
  return [
    "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
    `connect-src 'self' ${origin}`, "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
  ].join('; ')
}

const ERRORS_STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td,th{padding:.4rem .8rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}tr:target{background:#fff6cc}'
/** The errors page's policy: no script, its one style element allowed by its hash. */
const ERRORS_POLICY = `default-src 'none'; style-src 'sha256-${new Bun.CryptoHasher('sha256').update(ERRORS_STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`

function errorsPage(): string {
  const rows = Object.entries(ERROR_STATUS)
    .map(([code, status]) => `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${status}</td><td>${ERROR_MEANING[code as keyof typeof ERROR_MEANING]}</td></tr>`)
    .join('\n')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>notesvc errors</title>
<style>${ERRORS_STYLE}</style></head>
<body><h1>notesvc errors</h1><p>Every failure returns <code>{"error": {type, code, message, doc_url, details?, retry_after_seconds?, request_id?}}</code>. Branch on <code>code</code>; <code>message</code> is for people.</p>
<table><thead><tr><th>code</th><th>HTTP</th><th>meaning and what to do</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`
}

const script = (text: string) => new Response(text, { headers: SCRIPT_HEADERS })
const html = (body: string, policy: string) => new Response(body, { headers: pageHeaders(policy) })

/**
 * The OpenAPI document (built from the operations table on first request, then kept as text), the API
 * reference page that renders it, and the errors page that every `doc_url` points into.
 */
export function docsRoutes(config: Config, operations: readonly Operation[]) {
  let document: string | undefined
  const reference = referencePage()
  const errors = errorsPage()
  const referenceCsp = referencePolicy(config.publicUrl)
  return new Elysia({ name: 'docs-routes' })
    .get(OPENAPI_PATH, ({ set }) => jsonText(set, document ??= JSON.stringify(openApiDocument({
      title: TITLE, description: DESCRIPTION, version: VERSION, publicUrl: config.publicUrl, docsUrl: config.docsUrl,
    }, operations))))
    .get('/docs', () => html(reference, referenceCsp))
    .get(SETUP_PATH, () => script(SETUP_SCRIPT))
    .get(SCALAR_PATH, ({ request }) => scalarResponse(request.headers.get('accept-encoding')))
    .get('/docs/errors', () => html(errors, ERRORS_POLICY))
}
