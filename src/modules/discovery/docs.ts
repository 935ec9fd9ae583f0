import { Elysia } from 'elysia'
import type { Config } from '../../config'
import { ERROR_MEANING, ERROR_STATUS } from '../../http/errors'
import type { Operation } from '../../http/contract'
import { openApiDocument } from '../../http/openapi'
import { jsonText } from '../../http/responses'
import { VERSION } from '../../version'
// The docs page's script is embedded in the binary: the page makes no request outside this server.
import scalarBundle from '../../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with { type: 'text' }
import { escapeHtml } from '../../http/html'

export const OPENAPI_PATH = '/v1/openapi.json'
const SCALAR_PATH = '/docs/scalar.js'
const TITLE = 'notesvc API'
const DESCRIPTION = 'Transcripts and structured summaries of audio, video and video links, and the library of notes and folders behind them. Self-hosted.'

/**
 * How the API reference page is set up. The reference offers services hosted elsewhere ("Ask AI",
 * "Generate MCP", and in its developer tools "Share" and "Deploy"), which upload the document or call
 * out; a self-hosted, offline server switches them off (the MCP server is this server's own `/mcp`).
 */
export const SCALAR_CONFIGURATION = {
  url: OPENAPI_PATH,
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  telemetry: false,
} as const


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
<script src="${SCALAR_PATH}"></script>
</body>
</html>`
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

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })

/**
 * The OpenAPI document (built from the operations table on first request, then kept as text), the API
 * reference page that renders it, and the errors page that every `doc_url` points into.
 */
export function docsRoutes(config: Config, operations: readonly Operation[]) {
  let document: string | undefined
  const reference = referencePage()
  const errors = errorsPage()
  return new Elysia({ name: 'docs-routes' })
    .get(OPENAPI_PATH, ({ set }) => jsonText(set, document ??= JSON.stringify(openApiDocument({
      title: TITLE, description: DESCRIPTION, version: VERSION, publicUrl: config.publicUrl, docsUrl: config.docsUrl,
    }, operations))))
    .get('/docs', () => html(reference))
    .get(SCALAR_PATH, () => new Response(scalarBundle, { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400' } }))
    .get('/docs/errors', () => html(errors))
}
