import { t } from 'elysia'
import { Integer } from '../../http/schemas'

const Free = t.Record(t.String(), t.Unknown())

export const ApiIndex = t.Object(
  {
    name: t.String(),
    version: t.String(),
    documentation: t.String({ format: 'uri' }),
    openapi: t.String({ format: 'uri' }),
    mcp: t.String({ format: 'uri' }),
    authentication: Free,
    sandbox: Free,
    credits: Free,
    rateLimits: Free,
    scopes: t.Array(t.Object({ scope: t.String(), description: t.String() })),
    resources: t.Record(t.String(), t.String()),
  },
  { title: 'ApiIndex', description: 'What the service offers and how to use it.' },
)

export const Health = t.Object(
  {
    status: t.Union([t.Literal('ok'), t.Literal('degraded')], { description: '`ok`; `degraded` while the database cannot be reached (requests that need it then answer 503)' }),
    version: t.String(),
    engines: t.Optional(t.Object({
      asr: t.String({ description: 'the speech engine in use, by its NOTESVC_ASR name (whisper, pocketsphinx, …), or none when no engine can run (speech routes then answer 502 before charging)' }),
      asrServer: t.Optional(t.Object({
        url: t.String({ description: 'its URL, without credentials' }),
        reachable: t.Union([t.Boolean(), t.Null()], { description: 'whether it answered when last asked (health never waits for it); null before it was' }),
        checkedAt: t.Optional(t.String({ format: 'date-time', description: 'when it was last asked' })),
        problem: t.Optional(t.String({ description: 'what is wrong, when it did not answer or refused' })),
      }, { description: 'the server the speech engine sends speech to, when it does (NOTESVC_ASR=remote)' })),
      llm: t.String({ description: 'the summary engine in use: ollama, builtin, or auto before the first check' }),
      diarization: t.Optional(t.String({ description: 'the speaker diarization engine in use: builtin, sherpa-onnx, or off (NOTESVC_DIARIZATION)' })),
    })),
    reason: t.Optional(t.String({ description: 'when `degraded`: what is wrong' })),
    database: t.Optional(t.String({ description: 'asked for with `detail`: the database back end (sqlite)' })),
    workers: t.Optional(Integer({ minimum: 0, description: 'asked for with `detail`: the job worker processes whose heartbeat is within two job leases, less those of the answering machine whose process is gone (left out while the database cannot be reached)' })),
  },
  { title: 'Health', description: 'The service is up: its version, the engines in use, and whether its database answers; with `detail`, the database and the live job workers too.' },
)

export const HealthQuery = t.Object({
  detail: t.Optional(t.String({ description: 'any value but 0, false, no or off (or none: `?detail`) adds `database` and `workers`; any other value is ignored, never refused' })),
})
