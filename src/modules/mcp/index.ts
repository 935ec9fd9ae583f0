import type { PeerServer } from '../../http/client-address'
import { knownCaller, requestOrigin, type Caller } from '../../http/caller'
import { BodyTooLargeError, MAX_MCP_BODY_BYTES, readTextLimited } from '../../http/body-limit'
import { jsonShapeIssue, shapeMessage } from '../../http/body-shape'
import { Elysia } from 'elysia'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Config } from '../../config'
import type { Admission, Principal } from '../../http/admission'
import { bearerToken, type authGuard } from '../../http/auth'
import { ApiError, errorEnvelope, knownApiError } from '../../http/errors'
import { SCOPES, type OperationDefinition } from '../../http/contract'
import { silentLogger, type Logger } from '../../log'
import { VERSION } from '../../version'
import { createTools, type Tool } from './tools'

const MCP_PATH = '/mcp'
const MCP_MANIFEST_PATH = '/.well-known/mcp.json'
const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource'

const DESCRIPTION = 'Transcripts and structured summaries of audio, video and video links, and the library of notes and folders behind them.'

export interface McpDeps {
  config: Config
  /** the operations registry (`src/operations.ts`), from which the tools are made */
  operations: readonly OperationDefinition[]
  /** the services the operations' handlers asked for (the composition root's) */
  services: unknown
  /** the API's admission: the same credentials, rate limits and scopes as the HTTP operations */
  admission: Admission
  log?: Logger
}

/** The manifest at /.well-known/mcp.json: what the server is, where it listens, how to authenticate. */
function mcpManifest(config: Config, tools: Tool[]) {
  const base = config.publicUrl
  return {
    name: 'notesvc',
    version: VERSION,
    description: DESCRIPTION,
    endpoint: `${base}${MCP_PATH}`,
    transport: 'streamable-http',
    transports: [{ type: 'streamable-http', url: `${base}${MCP_PATH}` }],
    authentication: {
      type: 'bearer',
      header: 'Authorization: Bearer <credential>',
      credentials: ['api_key', 'oauth2_access_token', 'id_token'],
      resource_metadata: `${base}${PROTECTED_RESOURCE_PATH}`,
      authorization_servers: [base],
      scopes: SCOPES.map(s => ({ scope: s.scope, description: s.description })),
    },
    documentation: config.docsUrl,
    api: `${base}/v1`,
    tools: tools.map(t => ({
      name: t.name,
      description: t.description,
      scopes: t.operation.scopes,
      credits: t.operation.credits,
    })),
  }
}

function toolError(err: unknown, config: Config, log: Logger, tool: string): CallToolResult {
  // an ApiError, or 503 service_unavailable for a database that cannot be reached, as over HTTP
  let apiError: ApiError
  const known = knownApiError(err)
  if (known) apiError = known
  else {
    log.error('an MCP tool failed', { tool, error: err })
    apiError = new ApiError('internal_error', 'The service failed to run this tool.')
  }
  const envelope = errorEnvelope(apiError, config.docsUrl, undefined)
  return {
    isError: true,
    content: [{ type: 'text', text: `${apiError.code}: ${apiError.message}\n${JSON.stringify(envelope, null, 2)}` }],
    structuredContent: envelope as unknown as Record<string, unknown>,
  }
}

/** The MCP SDK, loaded with the first MCP request rather than at start-up (it is a tenth of a cold start's module loading). */
let sdkLoading: Promise<[typeof import('@modelcontextprotocol/sdk/server/index.js'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), typeof import('@modelcontextprotocol/sdk/types.js')]> | undefined
const mcpSdk = () => (sdkLoading ??= Promise.all([
  import('@modelcontextprotocol/sdk/server/index.js'),
  import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  import('@modelcontextprotocol/sdk/types.js'),
]))

/** A server for one request, acting for one caller (stateless: nothing outlives the request). */
async function serverFor(caller: Caller, tools: Tool[], byName: Map<string, Tool>, deps: McpDeps): Promise<Server> {
  const log = deps.log ?? silentLogger
  const [{ Server }, , { CallToolRequestSchema, ErrorCode: McpErrorCode, ListToolsRequestSchema, McpError }] = await mcpSdk()
  const server = new Server(
    { name: 'notesvc', version: VERSION, title: 'notesvc' },
    { capabilities: { tools: { listChanged: false } }, instructions: `${DESCRIPTION} Each tool is one operation of the HTTP API (${deps.config.publicUrl}/v1), with the same arguments, results, scopes and credits.` },
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(t => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: t.annotations,
    })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name)
    if (!tool) throw new McpError(McpErrorCode.InvalidParams, `There is no tool named ${request.params.name}; tools/list names them.`)
    const args = request.params.arguments ?? {}
    try {
      // The credential was admitted with the HTTP request; each call is counted and scope-checked as its operation.
      await deps.admission.authorize(caller.principal, deps.admission.termsForOperation(tool.name))
      tool.validate(args)
      const r = await tool.run(caller, args)
      const result: CallToolResult = {
        content: [{ type: 'text', text: JSON.stringify(r.result, null, 2) }],
        structuredContent: r.result,
      }
      if (r.creditsRemaining !== undefined) result._meta = { 'notesvc/creditsRemaining': r.creditsRemaining }
      return result
    } catch (err) {
      return toolError(err, deps.config, log, tool.name)
    }
  })
  return server
}

/** JSON-RPC's code for a message that is not a valid request object. */
const JSON_RPC_INVALID_REQUEST = -32600

function jsonRpcError(status: number, message: string, headers: Record<string, string> = {}, o: { code?: number; data?: unknown } = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: o.code ?? -32000, message, ...(o.data === undefined ? {} : { data: o.data }) }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/**
 * `{base_url}/mcp`: the Model Context Protocol over Streamable HTTP (stateless: a server and a
 * transport per request, JSON responses), authenticated by the API's bearer credentials; and the
 * manifest at `/.well-known/mcp.json`. Charges made through it are recorded with source "mcp".
 */
export function mcpRoutes(deps: McpDeps): (guard: ReturnType<typeof authGuard>) => Elysia<any, any, any, any, any, any, any> {
  // the tools (their schemas copied, about 10 ms) are made on the first MCP request, not at start-up
  let made: { tools: Tool[]; byName: Map<string, Tool>; manifest: ReturnType<typeof mcpManifest> } | undefined
  const prepared = () => {
    if (made) return made
    const tools = createTools(deps.operations, deps.services)
    return (made = { tools, byName: new Map(tools.map(t => [t.name, t])), manifest: mcpManifest(deps.config, tools) })
  }
  const challenge = `Bearer resource_metadata="${deps.config.publicUrl}${PROTECTED_RESOURCE_PATH}"`

  async function handle(request: Request, peer: PeerServer): Promise<Response> {
    // Charges made through MCP are recorded with source "mcp", whatever the credential; the request's
    // origin is each tool call's (the audit log's events).
    const principal: Principal = { ...await deps.admission.identify(bearerToken(request.headers.get('authorization') ?? undefined), challenge), source: 'mcp' }
    const caller = knownCaller(principal, requestOrigin(peer, request))
    // Stateless: no session to resume, so no standalone SSE stream (GET) and no session to end (DELETE).
    if (request.method !== 'POST') return jsonRpcError(405, 'Method not allowed: this MCP server is stateless; send JSON-RPC messages with POST.', { allow: 'POST' })
    let body: string
    try {
      body = await readTextLimited(request, MAX_MCP_BODY_BYTES)
    } catch (err) {
      if (err instanceof BodyTooLargeError) return jsonRpcError(413, `${err.message} Give audioUrl for recordings larger than 25 MB.`)
      throw err
    }
    // nested or numerous past the limits: refused before the SDK parses and walks it (http/body-shape.ts)
    const shape = jsonShapeIssue(body)
    if (shape) {
      const envelope = errorEnvelope(new ApiError('invalid_request', shapeMessage(shape)), deps.config.docsUrl, undefined)
      return jsonRpcError(400, shapeMessage(shape), {}, { code: JSON_RPC_INVALID_REQUEST, data: envelope })
    }
    const { tools, byName } = prepared()
    const server = await serverFor(caller, tools, byName, deps)
    const { WebStandardStreamableHTTPServerTransport } = (await mcpSdk())[1]
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    try {
      await server.connect(transport)
      return await transport.handleRequest(new Request(request.url, { method: 'POST', headers: request.headers, body }))
    } finally {
      await server.close().catch(() => {})
    }
  }

  return guard => new Elysia({ name: 'mcp-routes' })
    .use(guard)
    .get(MCP_MANIFEST_PATH, () => prepared().manifest)
    .post(MCP_PATH, ({ request, server }) => handle(request, server), { parse: 'none' })
    .get(MCP_PATH, ({ request, server }) => handle(request, server))
    .delete(MCP_PATH, ({ request, server }) => handle(request, server), { parse: 'none' })
}
