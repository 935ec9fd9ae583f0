/**
 * The test kit's public types (`@notesvc/client/testing`). Declarations only: scripts/build-testing.ts
 * ships this file as the entry point's index.d.ts, with `startNotesvc`'s declaration after it.
 */
import type * as clientPackage from '@notesvc/client'

/**
 * The client `createClient` of @notesvc/client makes, read from that package's own declarations, so
 * the kit's `client` is exactly the package's (whatever version is installed beside the kit).
 */
export type KitClient = typeof clientPackage extends { createClient: (...args: never[]) => infer C } ? C : never

export type KitLogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface KitOptions {
  /**
   * 'sandbox' (default): no speech engine and the builtin summary engine, nothing looked for on this
   * machine (sandbox keys answer at once; a live key's upload is refused 502). 'installed': the
   * engines the machine has (whisper.cpp or PocketSphinx, Ollama), as `serve` would choose them.
   */
  engines?: 'sandbox' | 'installed'
  /** credits and the processing rate limit (default true); false: every charge is 0 and nothing is refused 402 */
  metering?: boolean
  /**
   * A folder to keep the data in (a fixtures folder: used as it is, never deleted, its database kept).
   * Default: a new temporary folder, removed by stop().
   */
  dataDir?: string
  /** job workers (default 1) */
  workers?: number
  /** more NOTESVC_* variables (docs/configuration.md), applied last; the test process's own environment is not read */
  env?: Record<string, string>
  /** the server's log lines on stderr from this level on; default none */
  logLevel?: KitLogLevel
}

/** One delivery the kit's receiver got (its signature verified). */
export interface ReceivedWebhook {
  /** the `webhook-id` header: the same on each attempt of one event */
  id: string
  /** `note.completed`, `note.failed`, `note.updated` */
  type: string
  timestamp: string
  data: Record<string, unknown> & { noteId?: string }
  /** whether it came for the sandbox key's endpoint (else the live key's) */
  sandbox: boolean
  /** what the receiver answered: 200, or the status failNext set */
  answeredStatus: number
  /** the request's body as sent */
  rawBody: string
}

export interface KitWebhooks {
  /** the receiver's base URL on loopback */
  url: string
  /**
   * The next delivery of `type` not yet returned (deliveries come back in the order they arrived,
   * each once; failed ones included). Rejects after `timeoutMs` (default 10 s) naming what came.
   */
  next(type: string, options?: { timeoutMs?: number }): Promise<ReceivedWebhook>
  /** every delivery so far, in order */
  all(): ReceivedWebhook[]
  /** the next `count` deliveries are answered `status` (default 500), so the server sends them again */
  failNext(count: number, status?: number): void
}

export interface Kit {
  /** the server's base URL, http://127.0.0.1:<port> */
  url: string
  /** the owner's live key (`svc_live_…`) and sandbox key (`svc_test_…`), plan pro */
  liveKey: string
  sandboxKey: string
  /** clients of @notesvc/client on `url`, with the live and the sandbox key */
  client: KitClient
  sandboxClient: KitClient
  webhooks: KitWebhooks
  /** where the data is (the temporary folder, or options.dataDir) */
  dataDir: string
  /** Stops the server, its workers and webhook sender, and the receiver; closes the database; removes a temporary folder. */
  stop(): Promise<void>
}
