import { expect } from 'bun:test'
import { loadConfig, type Config, type Env } from '../../src/config'
import { fixedClock, systemClock, type Clock } from '../../src/clock'
import { createIdGenerator } from '../../src/ids'
import { silentLogger, type Logger } from '../../src/log'
import type { Database } from '../../src/db/database'
import { migratedMemoryStore } from './memory-store'
import type { Store } from '../../src/db/store'
import { createServices, type CoreDeps } from '../../src/services'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, type AppDeps } from '../../src/app'
import { createWebService, type PasswordHashCost } from '../../src/modules/web/service'
import type { Scope } from '../../src/http/contract'

export interface CallResult {
  status: number
  headers: Headers
  body: any
  text: string
}

/**
 * The error envelope (SPEC "Errors") of an app made by createTestApp: the status, a JSON body whose
 * error has the code, the type invalid_request_error, a message with something in it, the code's page
 * as doc_url, and the request id, which the X-Request-Id header carries too.
 */
export function expectEnvelope(res: CallResult, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body?.error?.code).toBe(code)
  expect(res.body.error.type).toBe('invalid_request_error')
  expect(res.body.error.message).toMatch(/\S/)
  expect(res.body.error.doc_url).toBe(`http://localhost/docs/errors#${code}`)
  expect(res.headers.get('x-request-id')).toMatch(/^\S+$/)
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id')!)
}

/** argon2id's cost in test apps: 1 MiB and one pass, against Bun's 64 MiB and two. */
const TEST_PASSWORD_HASH_COST: PasswordHashCost = { memoryCost: 1024, timeCost: 1 }

/**
 * A complete app on a private in-memory database, driven through `app.handle`, with helpers to make
 * keys and call routes. `clock` may be fixed so tests can move time.
 */
export function createTestApp(opts: {
  env?: Env
  clock?: Clock
  log?: Logger
  alter?: (services: ReturnType<typeof createServices>) => void
  engines?: CoreDeps['engines']
  /** settings no environment variable reaches (such as where PocketSphinx is looked for) */
  config?: Partial<Config>
  storage?: CoreDeps['storage']
  /** the database (default: a private in-memory SQLite store); a PostgreSQL store runs the same tests there */
  store?: Store
  /** more route modules for createApp (pages, OAuth, MCP), built from the app's parts */
  /** more credential verifiers for createApp (OAuth access tokens, ID tokens), built from the app's parts */
  /** the live engine's recognizers, which serve GET /v1/realtime once the app listens (http/listen.ts) */
  liveRecognizers?: AppDeps['liveRecognizers']
  verifiers?: (parts: { config: Config; db: Database; clock: Clock; services: ReturnType<typeof createServices> }) => AppDeps['verifiers']
} = {}) {
  // Each app gets its own data folder (disk media lands there); the database stays in memory.
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-app-'))
  // The builtin summary engine unless a test asks for another: no test depends on an Ollama nearby.
  // An empty models folder of its own: no test depends on the models a developer has pulled.
  const config = {
    ...loadConfig({ NOTESVC_PUBLIC_URL: 'http://localhost', NOTESVC_DATA_DIR: dataDir, NOTESVC_MODELS_DIR: join(dataDir, 'models'), NOTESVC_LLM: 'builtin', ...opts.env }),
    ...opts.config,
  }
  const sqlite = opts.store ? null : migratedMemoryStore()
  const store: Store = opts.store ?? sqlite!
  /** the SQLite connection, for tests that look at rows directly (null on PostgreSQL) */
  const db = sqlite?.db as Database
  const clock = opts.clock ?? systemClock
  const ids = createIdGenerator(() => clock.now().getTime())
  const services = createServices({ config, store, clock, ids, engines: opts.engines, storage: opts.storage, log: opts.log, passwordHashCost: TEST_PASSWORD_HASH_COST, shareOpeningsFlushMs: 0 })
  // The same web service, with passwords hashed at a low argon2id cost: a sign-in costs milliseconds
  // instead of an argon2id at 64 MiB (0.1 s on an idle machine, seconds on a busy one), for tests that
  // sign in dozens of times. The cost itself is not what those tests look at (docs/decisions.md,
  // "The test suite's time"); `serve` processes and the CLI keep the real one.
  services.web = createWebService({ store, clock, accounts: services.accounts, secureCookies: config.publicUrl.startsWith('https:'), audit: services.audit, passwordHashCost: TEST_PASSWORD_HASH_COST })
  opts.alter?.(services)
  const app = createApp({ config, clock, ids, log: opts.log ?? silentLogger, services, verifiers: opts.verifiers?.({ config, db, clock, services }), liveRecognizers: opts.liveRecognizers })

  async function key(o: { email?: string; sandbox?: boolean; scopes?: Scope[]; plan?: 'free' | 'pro' } = {}): Promise<string> {
    return (await services.accounts.createKey({ email: o.email ?? 'user@example.com', sandbox: o.sandbox, scopes: o.scopes, plan: o.plan })).key
  }

  async function call(method: string, path: string, o: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...o.headers }
    if (o.token) headers.authorization = `Bearer ${o.token}`
    let body: string | undefined
    if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
    const text = await res.text()
    let parsed: unknown = undefined
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }

  return { app, db, store, config, services, clock, key, call }
}

export { fixedClock }
