/**
 * `@notesvc/client/testing`: startNotesvc(), a real notesvc inside the test process (docs/decisions.md,
 * "The test kit"): its own data folder, SQLite database, loopback port, keys, clients and webhook
 * receiver. Bundled with the server by scripts/build-testing.ts.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import * as clientPackage from '@notesvc/client'
import type { Config } from '../config'
import { createLogger, silentLogger } from '../log'
import { runtimeRefusal } from '../runtime-version'
import { openConfiguredStore } from '../db/open'
import type { Store } from '../db/store'
import { startServer, type StartedServer } from '../server-start'
import { kitConfig } from './options'
import { startWebhookReceiver, type EndpointKind, type WebhookReceiver } from './webhook-receiver'
import type { Kit, KitClient, KitOptions } from './types'

export type { Kit, KitClient, KitLogLevel, KitOptions, KitWebhooks, ReceivedWebhook } from './types'

const WEBHOOK_EVENTS = ['note.completed', 'note.failed', 'note.updated']

/**
 * The kit's database: SQLite in its folder (PostgreSQL with NOTESVC_DATABASE_URL in options.env), without
 * the read thread `serve` gives searches (db/read-worker.ts): that thread is started from a file
 * beside the module, which a bundle of the kit does not have; a test's searches run on its own thread.
 */
const openKitStore = (config: Config): Promise<Store> => openConfiguredStore(config, { poolSize: 4, readThread: false })

/** A client of @notesvc/client, or, where the installed package has no createClient, one that says so when used. */
function clientFor(baseUrl: string, apiKey: string): KitClient {
  const create = (clientPackage as unknown as { createClient?: (o: { baseUrl: string; apiKey: string }) => KitClient }).createClient
  if (create) return create({ baseUrl, apiKey })
  return new Proxy({}, {
    get: (_, name) => {
      // (inspection and `await` look for these; they are not calls)
      if (typeof name === 'symbol' || name === 'then' || name === 'toJSON') return undefined
      throw new Error(`kit.client.${String(name)}: the installed @notesvc/client has no createClient; install the @notesvc/client of the kit's own version`)
    },
  }) as KitClient
}

/** Registers the receiver as an endpoint of `key` for every event, through the API, and trusts its secret. */
async function registerEndpoint(url: string, key: string, kind: EndpointKind, receiver: WebhookReceiver): Promise<string> {
  const res = await fetch(`${url}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.endpointUrl(kind), events: WEBHOOK_EVENTS, description: 'notesvc test kit receiver' }),
  })
  const body = await res.json() as { id?: string; secret?: string; error?: { message?: string } }
  if (res.status !== 201 || !body.secret || !body.id) throw new Error(`startNotesvc: could not register the kit's webhook receiver (${res.status}: ${body.error?.message ?? 'no secret in the answer'})`)
  receiver.trust(kind, body.secret)
  return body.id
}

/** The owner's keys: the first start's, or two new ones when the data folder's database already had them. */
async function ownerKeys(started: StartedServer, config: Config): Promise<{ live: string; sandbox: string }> {
  if (started.firstStartKeys) return started.firstStartKeys
  const accounts = started.services.accounts
  const live = await accounts.createKey({ email: config.ownerEmail, plan: 'pro', name: 'test kit (live)' })
  const sandbox = await accounts.createKey({ email: config.ownerEmail, plan: 'pro', sandbox: true, name: 'test kit (sandbox)' })
  return { live: live.key, sandbox: sandbox.key }
}

/**
 * Starts a real notesvc on 127.0.0.1 in this process, ready when the promise settles: its URL, the
 * owner's live and sandbox keys, a client for each, a receiver of its webhooks, and stop().
 */
export async function startNotesvc(options: KitOptions = {}): Promise<Kit> {
  const refusal = runtimeRefusal()
  if (refusal) throw new Error(refusal)
  const kept = options.dataDir !== undefined
  const dataDir = kept ? resolve(options.dataDir!) : mkdtempSync(join(tmpdir(), 'notesvc-kit-'))
  if (kept) mkdirSync(dataDir, { recursive: true })
  // The public URL (upload URLs, poll links) names the port, so one is reserved before the services
  // are made and freed just before the server listens on it.
  const reservation = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null, { status: 503 }) })
  const receiver = startWebhookReceiver()
  const cleanups: (() => Promise<unknown> | unknown)[] = [() => receiver.stop(), () => reservation.stop(true)]
  const removeFolder = () => { if (!kept) rmSync(dataDir, { recursive: true, force: true }) }
  try {
    const config = kitConfig(options, dataDir, reservation.port!)
    const store = await openKitStore(config)
    cleanups.unshift(() => store.close())
    const log = options.logLevel ? createLogger(options.logLevel) : silentLogger
    const started = await startServer(config, { log, store, beforeListen: () => reservation.stop(true), workersAfterMs: 0 })
    cleanups.splice(0, 1, () => started.stop({ closeConnections: true }))
    await started.workersStarted
    const keys = await ownerKeys(started, config)
    const endpoints = [
      { key: keys.live, id: await registerEndpoint(started.url, keys.live, 'live', receiver) },
      { key: keys.sandbox, id: await registerEndpoint(started.url, keys.sandbox, 'sandbox', receiver) },
    ]
    let stopped: Promise<void> | null = null
    return {
      url: started.url,
      liveKey: keys.live,
      sandboxKey: keys.sandbox,
      client: clientFor(started.url, keys.live),
      sandboxClient: clientFor(started.url, keys.sandbox),
      webhooks: { url: receiver.url, next: receiver.next, all: receiver.all, failNext: receiver.failNext },
      dataDir,
      stop: () => (stopped ??= (async () => {
        // a kept folder does not gather one pair of endpoints per run (an account has at most 25)
        if (kept) await Promise.all(endpoints.map(e => fetch(`${started.url}/v1/webhooks/${e.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${e.key}` } }).catch(() => {})))
        for (const cleanup of cleanups) await cleanup()
        removeFolder()
      })()),
    }
  } catch (err) {
    for (const cleanup of cleanups) await Promise.resolve().then(cleanup).catch(() => {})
    removeFolder()
    throw err
  }
}
