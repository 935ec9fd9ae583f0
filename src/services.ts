import type { Config } from './config'
import type { Clock } from './clock'
import type { Store } from './db/store'
import { createRateWindowsRepo } from './db/rate-windows'
import { OPERATION_TABLE } from './operations'
import type { IdGenerator } from './ids'
import { lazySecret } from './db/settings'
import { silentLogger, type Logger } from './log'
import type { AsrEngine } from './engines/asr/engine'
import { createAsrSelector, speechModels } from './engines/asr'
import { createDiarizationSelector } from './engines/diarization'
import type { DiarizationEngine } from './engines/diarization/engine'
import { diarizeChannels } from './engines/diarization/channels'
import type { LlmEngine } from './engines/llm/engine'
import { createLlmSelector } from './engines/llm'
import { createYtdlp } from './engines/media/ytdlp'
import { loadContentPolicy } from './modules/processing/content-policy'
import { findMediaTools } from './engines/media/ffmpeg'
import { createStorage } from './storage'
import type { MediaStorage } from './storage/storage'
import { createJobRuntime } from './jobs/runtime'
import { createAsrScheduler } from './engines/asr/scheduler'
import { createUploadsRepo } from './modules/uploads/repo'
import { createNoteMedia } from './modules/uploads/note-media'
import { createNoteExportService } from './modules/exports/service'
import { createUploadsService } from './modules/uploads/service'
import { createStreamsService } from './modules/live/streams'
import { createStreamsRepo } from './modules/live/streams-repo'
import { createWebService } from './modules/web/service'
import { ssoLinksFor, ssoServiceFor } from './modules/sso/configured'
import { createOAuthService } from './modules/oauth'
import { createAccountsRepo } from './modules/accounts/repo'
import { createAccountsService, keyCacheFor } from './modules/accounts/service'
import { createFoldersRepo } from './modules/folders/repo'
import { createFoldersService, folderExistsIn } from './modules/folders/service'
import { createTagsRepo } from './modules/tags/repo'
import { createTagsService } from './modules/tags/service'
import type { ListCaches } from './modules/notes/repo'
import { createSqliteNotesRepo } from './modules/notes/repo.sqlite'
import { createPostgresNotesRepo } from './modules/notes/repo.postgres'
import { REVISION_STAMP_QUERY } from './modules/notes/repo'
import { RevisionCache } from './modules/notes/revision-cache'
import { createNotesService } from './modules/notes/service'
import { createSpeakersService } from './modules/notes/speakers'
import { createNoteMoves } from './modules/notes/move'
import { createSegmentTextService } from './modules/notes/segment-text'
import { createRevisionsRepo } from './modules/notes/revisions-repo'
import { createRevisionsService } from './modules/notes/revisions'
import { createSegmentAudio } from './modules/notes/segment-audio'
import { createSegmentTiming } from './modules/notes/segment-timing'
import { createSegmentEditsService } from './modules/notes/segment-edits'
import { createReplacementsService } from './modules/notes/replacements'
import { threadedAligner, type ThreadedAligner } from './engines/align/thread'
import { createSpeakersRepo } from './modules/notes/speakers-repo'
import { createProcessingService } from './modules/processing/service'
import { createLibraryQuestionsService } from './modules/library-questions/service'
import { createOllamaEmbedder } from './engines/llm/ollama-embeddings'
import { sqliteQuestionCandidates } from './modules/notes/question-candidates.sqlite'
import { postgresQuestionCandidates } from './modules/notes/question-candidates.postgres'
import { createProcessingJobs } from './modules/processing/pipeline'
import { createOpenAiService } from './modules/openai/service'
import { createCreditsRepo } from './modules/credits/repo'
import { createCreditsService } from './modules/credits/service'
import { createUsageService } from './modules/usage/service'
import { commandLine } from './command-name'
import { MemoryRateLimiter, SharedRateLimiter, withUnlimitedClasses, type RateLimiter } from './http/rate-limit'
import type { RateClass } from './config'
import { createWebhooksRepo } from './modules/webhooks/repo'
import { createWebhooksService } from './modules/webhooks/service'
import { createAuditRepo } from './modules/audit/repo'
import { createAuditService } from './modules/audit/service'
import { createRetentionRepo } from './modules/retention/repo'
import { createRetentionService } from './modules/retention/service'
import { createMetrics } from './modules/metrics/registry'
import { createDiscoveryService } from './modules/discovery/service'
import { scenarioOfFileName } from './http/sandbox-scenarios'
import { createSharesRepo } from './modules/sharing/repo'
import { createWorkspacesRepo } from './modules/workspaces/repo'
import { createWorkspacesService } from './modules/workspaces/service'
import { createSharingService } from './modules/sharing/service'

/** List items kept in memory (about 600 characters each): some 200,000 notes' worth at most. */
const LIST_ITEM_CACHE_CHARS = 128 * 1024 * 1024

export interface CoreDeps {
  config: Config
  /** the database: embedded SQLite or PostgreSQL (src/db/store.ts) */
  store: Store
  clock: Clock
  ids: IdGenerator
  log?: Logger
  /** the engines; by default the ones the configuration names (tests pass their own) */
  engines?: { asr?: () => AsrEngine; llm?: () => LlmEngine | Promise<LlmEngine>; diarization?: () => DiarizationEngine | null }
  storage?: MediaStorage
  /** argon2id's cost for share links' passphrases (tests lower it, as they do for passwords) */
  passwordHashCost?: { memoryCost?: number; timeCost?: number }
  /** how long share pages' openings wait to be written together (modules/sharing/openings.ts; default 1 s, 0: at once) */
  shareOpeningsFlushMs?: number
}

/**
 * The notes repository of the store's back end: the one place the per-back-end repository files are
 * chosen (the queries that differ, listing and search, are in `repo.sqlite.ts` and `repo.postgres.ts`).
 */
export function notesRepoFor(store: Store, caches: ListCaches = {}) {
  return store.choose({
    sqlite: s => createSqliteNotesRepo(s, caches),
    postgres: s => createPostgresNotesRepo(s, caches),
  })
}

/**
 * The rate limiter the store calls for: where one `serve` uses the database (SQLite), windows are
 * counted in its memory; where several nodes share it (`sql.sharedByNodes`), in the database, where
 * every node sees every request. `alongside`: a scalar query the shared statement also reads, in the
 * same round trip, for a later step of the request (Admitted.alongside).
 */
export function rateLimiterFor(store: Store, limits: Record<RateClass, number>, clock: Clock, alongside?: string): RateLimiter {
  if (!store.sql.sharedByNodes) return new MemoryRateLimiter(limits, clock)
  return new SharedRateLimiter(limits, clock, createRateWindowsRepo(store, alongside))
}

/** The limiter of `rateLimiterFor`, without the processing class when metering is off (NOTESVC_METERING=off). */
function configuredRateLimiter(store: Store, config: Pick<Config, 'rateLimits' | 'metering'>, clock: Clock, alongside?: string): RateLimiter {
  return withUnlimitedClasses(rateLimiterFor(store, config.rateLimits, clock, alongside), config.metering ? [] : ['processing'])
}

/** The services behind the routes and the CLI, built once from what varies (store, clock, ids, config). */
export function createServices(deps: CoreDeps) {
  const { store, clock, ids, config } = deps
  const credits = createCreditsService({ repo: createCreditsRepo(store), clock, ids, operations: OPERATION_TABLE, metering: config.metering, topUpCommand: `the operator adds prepaid credits with: ${commandLine('accounts credit --email <email> --credits <N>')}` })
  /** the audit log (src/modules/audit): modules record their events through it */
  const audit = createAuditService({ repo: createAuditRepo(store), clock, ids, log: deps.log })
  const accounts = createAccountsService({ repo: createAccountsRepo(store), clock, ids, keyCache: keyCacheFor(store, config.readCache), credits, audit })
  const usage = createUsageService({ credits, clock })
  // Folders and notes refer to each other (a note's folder must exist; deleting a folder unfiles its
  // notes): notes get the folders module's existence check, then the folders service gets notes.
  const foldersRepo = createFoldersRepo(store)
  const log = deps.log ?? silentLogger
  const uploadSecret = lazySecret(store, 'upload_signing_key')
  const storage = deps.storage ?? createStorage(config, { dataDir: config.dataDir, publicUrl: config.publicUrl, uploadSecret })
  const uploadsRepo = createUploadsRepo(store)
  const media = createNoteMedia({ repo: uploadsRepo, storage, log })
  /** this process's metrics (GET /metrics); the queues' depth is read when scraped */
  const metrics = createMetrics({
    queues: () => jobs.depths({ webhook_outbox: webhooks.outboxDepth }),
    database: () => store.activity(),
    now: () => jobs.now().getTime(),
  })
  /** the job queue, its workers, and the recurring tasks and loops beside them: the modules register their work */
  const jobs = createJobRuntime({
    store, clock, ids, log, workers: config.workers, leaseMs: config.jobLeaseSeconds * 1000, maxTakeovers: config.jobMaxTakeovers, onOutcome: metrics.job,
  })
  const webhooks = createWebhooksService({
    repo: createWebhooksRepo(store), clock, ids, log, allowPrivateUrls: config.allowPrivateUrls, maxPerAccount: config.maxWebhooksPerAccount, onDelivery: metrics.webhookDelivery,
    // the sandbox scenario is named by the upload's file name, which is stored (no column of its own)
    webhookRetryScenario: async noteId => {
      const upload = await uploadsRepo.byNote(noteId)
      return upload !== null && Number(upload.sandbox) === 1 && scenarioOfFileName(upload.file_name) === 'webhook_retry'
    },
  })
  // Every process that runs workers also sends webhook events (NOTESVC_WORKERS=0: neither).
  jobs.alongside(webhooks)
  const speakersRepo = createSpeakersRepo(store)
  const notesRepo = notesRepoFor(store, config.readCache ? { items: new RevisionCache(LIST_ITEM_CACHE_CHARS), pages: true } : {})
  const revisionsRepo = createRevisionsRepo(store)
  const notes = createNotesService({
    repo: notesRepo, clock, ids, store, folderExists: folderExistsIn(foldersRepo),
    mediaOf: media.of,
    removeMedia: media.remove,
    revisions: revisionsRepo,
    onSettled: e => webhooks.noteSettled(e),
    onEdited: e => webhooks.noteUpdated(e),
    audit,
  })
  const speakers = createSpeakersService({ repo: speakersRepo, notes: notesRepo, store, clock, ids, readable: notes.readableTranscript, editTranscript: notes.editTranscript, maxProfilesPerAccount: config.maxSpeakerProfilesPerAccount })
  /** a note as Markdown or DOCX (its own module: the notes module is being restructured, issue 30) */
  const exports = createNoteExportService({ notes, fileNameOf: async id => (await media.recording(id))?.fileName ?? null, audit })
  /** share links of notes (modules/sharing): their rows, and what their page shows */
  const sharing = createSharingService({
    repo: createSharesRepo(store), notes, audit, clock, ids, store, enabled: config.sharing, publicUrl: config.publicUrl, openingsFlushMs: deps.shareOpeningsFlushMs,
    recordingType: async id => { const u = await uploadsRepo.byNote(id); return u?.received_at ? u.content_type : null },
    signingKey: lazySecret(store, 'share_signing_key'), passphraseHashCost: deps.passwordHashCost,
  })
  const folders = createFoldersService({ repo: foldersRepo, clock, ids, store, unfileNotes: id => notes.unfileFolder(id), audit })
  const tags = createTagsService({ repo: createTagsRepo(store), clock, ids, store })

  const tools = findMediaTools(config)
  /** one aligner thread per process, its PocketSphinx decoder opened on the first corrected segment */
  let aligner: ThreadedAligner | null = null
  const revisions = createRevisionsService({ repo: revisionsRepo, notes })
  const timeWords = createSegmentTiming({ segmentAudio: createSegmentAudio({ recording: media.recording, storage, tools }), aligner: () => (aligner ??= threadedAligner()) })
  const segmentText = createSegmentTextService({ notes, timeWords })
  const segmentEdits = createSegmentEditsService({ notes })
  const replacements = createReplacementsService({ notes, timeWords })
  const asrSelector = createAsrSelector(config, log)
  const llmSelector = createLlmSelector(config, log)
  const diarizationSelector = createDiarizationSelector(config, log)
  const diarization = deps.engines?.diarization ?? (() => diarizationSelector.current())
  const channels = (path: string, signal: AbortSignal) => diarizeChannels(path, tools, signal)
  const engines = {
    asr: deps.engines?.asr ?? (() => asrSelector.current()),
    llm: async () => (deps.engines?.llm ? deps.engines.llm() : llmSelector.current()),
  }
  /** the ASR slots of this process, shared fairly by upload jobs, the synchronous routes and live streams (openLiveRecognizer's `slots`) */
  const asrSlots = createAsrScheduler(config.asrSlots)
  const processing = createProcessingService({
    notes, credits, llm: engines.llm, asr: engines.asr, tools, ytdlp: createYtdlp({ program: config.ytdlp }),
    contentPolicy: loadContentPolicy(config.contentPolicyFile), allowPrivateUrls: config.allowPrivateUrls, scheduler: asrSlots,
    diarization, channels, log,
  })
  /** questions across the library (askLibrary): the notes module's query of the index for each back end */
  const libraryQuestions = createLibraryQuestionsService({
    candidates: store.choose({ sqlite: sqliteQuestionCandidates, postgres: postgresQuestionCandidates }),
    segmentsOf: note => notes.namedSegmentsOf(note), llm: engines.llm, credits, log,
    embed: config.askEmbedModel ? createOllamaEmbedder({ host: config.ollamaHost, model: config.askEmbedModel, log }) : null,
  })
  /** an upload's processing and a summary made again, as jobs (registered with the runtime) */
  const pipeline = createProcessingJobs({
    jobs, notes, credits, transaction: fn => store.transaction(fn), storage, tools, asr: engines.asr, llm: engines.llm, recording: media.recording, scheduler: asrSlots, log,
    diarization, channels, speakerProfiles: speakers.rememberedVoices, onEngineTime: metrics.engine,
  })
  const openai = createOpenAiService({
    processing, dataDir: config.dataDir, log,
    catalog: () => ({ models: speechModels(config, engines.asr().name), diarization: config.diarization !== 'off' }),
  })
  const uploads = createUploadsService({
    repo: uploadsRepo, notes, credits, storage, tools, clock, ids, transaction: fn => store.transaction(fn), asr: engines.asr,
    publicUrl: config.publicUrl, uploadSecret, queueJob: pipeline.queueUpload, queueSandboxSlow: pipeline.queueSandboxSlow, wakeWorkers: jobs.wake,
  })
  /** live transcription streams (/v1/realtime): their rows, audio parts and notes (modules/live/streams.ts) */
  const live = createStreamsService({
    repo: createStreamsRepo(store), uploads: uploads.recordings, notes, credits, storage, clock, ids, log, transaction: fn => store.transaction(fn),
    queueJob: pipeline.queueUpload, wakeWorkers: jobs.wake, resumeSeconds: config.live.resumeSeconds, maxStreamsPerAccount: config.live.maxStreamsPerAccount,
  })
  /** retention (docs/decisions.md "Retention"): the policies, and the sweep it registers as a recurring task */
  const retention = createRetentionService({
    repo: createRetentionRepo(store), clock, log, config: config.retention, notes, audit, transaction: fn => store.transaction(fn, 'write'),
    accountIdsAfter: accounts.accountIdsAfter, mediaOf: media.of, deleteObject: media.deleteStored, jobs,
  })
  const web = createWebService({ store, clock, accounts, secureCookies: config.publicUrl.startsWith('https:'), audit })
  /** workspaces' own tables (members, invitations, SSO group mappings): the service of src/modules/workspaces builds on it */
  const workspacesRepo = createWorkspacesRepo(store)
  const oauth = createOAuthService({ store, clock, ids, config, audit, memberships: workspacesRepo.membershipsOf })
  /** browser sign-in through the organisation's OpenID Connect provider; null when it is not configured */
  const ssoLinks = ssoLinksFor({ store, config, accounts, audit, clock, log: deps.log, workspaces: workspacesRepo })
  const sso = ssoServiceFor({ config, links: ssoLinks, clock, log: deps.log })
  // The shared limiter's statement also reads the notes' revision counter, which a cached
  // GET /v1/notes then needs no round trip of its own for (the notes route takes it as `alongside`).
  const rateLimiter = configuredRateLimiter(store, config, clock, REVISION_STAMP_QUERY)
  /** the database for health: its back end, whether it answers (within 2 s), the worker processes that heartbeat in it */
  const backend = {
    database: store.sql.name,
    reachable: () => store.reachable(2000),
    workers: jobs.liveWorkers,
  }
  /** what the two public operations answer: the API index and health */
  const discovery = createDiscoveryService({
    config, catalogue: { operations: OPERATION_TABLE.all, costs: credits.publishedCosts() }, backend,
    asrEngine: () => engines.asr().name, asrServer: () => engines.asr().server?.(), llmEngine: () => llmSelector.lastKnown(), diarizationEngine: () => diarizationSelector.describe().engine,
  })
  /** workspaces: the person's list, team workspaces, their members, invitations and keys */
  const workspaces = createWorkspacesService({ repo: workspacesRepo, accounts, credits, audit, clock, ids, publicUrl: config.publicUrl })
  /** moveNote: a note to another workspace of the same person (modules/notes/move.ts) */
  const noteMoves = createNoteMoves({ store, clock, requireNote: notes.requireNote, roleOf: workspacesRepo.roleOf, audit })
  return {
    workspacesRepo, workspaces, noteMoves,
    discovery, metrics, audit, retention, recurring: jobs.recurring, accounts, credits, usage, notes, sharing, speakers, segmentText, segmentEdits, replacements, revisions, exports, folders, tags, processing, libraryQuestions, pipeline, openai, uploads, storage, live,
    workers: jobs.workers, jobs: jobs.jobs, backend, asr: engines.asr, asrSlots, asrSelector, llmSelector, diarizationSelector, web, oauth, sso, ssoLinks, rateLimiter, webhooks,
  }
}

export type Services = ReturnType<typeof createServices>
