import { describe, expect, test } from 'bun:test'
import { OPERATIONS } from '../../src/operations'
import { createTestApp, type CallResult } from '../helpers/app'
import { SPEC_ERROR_STATUS } from '../helpers/interface'

/**
 * The class of bug behind "a 500 on bad input": every operation of the interface gets each of its
 * fields (body, query and path) replaced, one at a time, by hostile values — the empty string, the
 * largest and smallest integers, numbers too large for any integer type, wrong JSON types, control
 * characters, huge strings — and every answer must be a success or a 4xx envelope whose code goes with
 * its status (502 is allowed only where the interface lists it: the five charging operations, whose
 * providers may fail). Never a 500.
 *
 * The operations, their fields and a valid value for each are written here from the interface, not
 * read from the code; one test checks that this table names every operation the service serves.
 */

const STATUS_OF_CODE = SPEC_ERROR_STATUS

interface Ids {
  noteId: string
  folderId: string
  uploadId: string
}

interface Op {
  id: string
  method: string
  /** `{id}` is replaced by a real id, or by a malformed one */
  path: string
  idOf?: (ids: Ids) => string
  /** body fields with a valid value each */
  body?: (ids: Ids) => Record<string, unknown>
  query?: Record<string, string>
  /** SPEC lists 502 for it */
  charging?: boolean
}

const OPS: Op[] = [
  { id: 'getApiIndex', method: 'GET', path: '/v1' },
  { id: 'getHealth', method: 'GET', path: '/v1/health' },
  {
    id: 'listNotes',
    method: 'GET',
    path: '/v1/notes',
    query: { updatedAfter: '2020-01-01T00:00:00Z', folderId: 'null', status: 'Done', type: 'import', limit: '10', offset: '0' },
  },
  { id: 'createNote', method: 'POST', path: '/v1/notes', body: ids => ({ title: 'A note', content: 'Some text.', folderId: ids.folderId, source: 'api', format: 'markdown' }) },
  { id: 'getNote', method: 'GET', path: '/v1/notes/{id}', idOf: ids => ids.noteId },
  { id: 'updateNote', method: 'PATCH', path: '/v1/notes/{id}', idOf: ids => ids.noteId, body: ids => ({ title: 'Renamed', summary: 'New summary', folderId: ids.folderId, isPinned: true }) },
  { id: 'deleteNote', method: 'DELETE', path: '/v1/notes/{id}', idOf: ids => ids.noteId },
  { id: 'getNoteStatus', method: 'GET', path: '/v1/notes/{id}/status', idOf: ids => ids.noteId },
  { id: 'getNoteTranscript', method: 'GET', path: '/v1/notes/{id}/transcript', idOf: ids => ids.noteId },
  { id: 'askNoteQuestion', method: 'POST', path: '/v1/notes/{id}/questions', idOf: ids => ids.noteId, body: () => ({ question: 'When does the beta ship?' }), charging: true },
  { id: 'askLibrary', method: 'POST', path: '/v1/questions', body: ids => ({ question: 'When does the beta ship?', folderId: ids.folderId, from: '2020-01-01', to: '2999-12-31T23:59:59Z' }), charging: true },
  { id: 'listFolders', method: 'GET', path: '/v1/folders' },
  { id: 'createFolder', method: 'POST', path: '/v1/folders', body: () => ({ name: 'Projects', color: '#ff8800' }) },
  { id: 'getFolder', method: 'GET', path: '/v1/folders/{id}', idOf: ids => ids.folderId },
  { id: 'updateFolder', method: 'PATCH', path: '/v1/folders/{id}', idOf: ids => ids.folderId, body: () => ({ name: 'Renamed', color: 'blue' }) },
  { id: 'deleteFolder', method: 'DELETE', path: '/v1/folders/{id}', idOf: ids => ids.folderId },
  {
    id: 'createUpload',
    method: 'POST',
    path: '/v1/uploads',
    body: () => ({ fileName: 'memo.wav', contentType: 'audio/wav', fileSize: 1000, styleId: 'note', language: 'en' }),
  },
  { id: 'completeUpload', method: 'POST', path: '/v1/uploads/{id}/complete', idOf: ids => ids.uploadId, charging: true },
  {
    id: 'createTranscription',
    method: 'POST',
    path: '/v1/transcriptions',
    // a private address: refused before any download, so no network is needed
    body: () => ({ audioUrl: 'https://127.0.0.1/memo.mp3', language: 'en', timeoutSeconds: 300 }),
    charging: true,
  },
  { id: 'createSummary', method: 'POST', path: '/v1/summaries', body: () => ({ text: 'The beta ships on March third. Maria writes the notes.', styleId: 'bulletpoints' }), charging: true },
  { id: 'createYoutubeSummary', method: 'POST', path: '/v1/youtube-summaries', body: () => ({ youtubeUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', styleId: 'note' }), charging: true },
  { id: 'getUsage', method: 'GET', path: '/v1/usage', query: { limit: '10' } },
  // DECISIONS.md "Beyond the interface": webhooks (an unknown endpoint id: the checks are on the input)
  { id: 'listWebhooks', method: 'GET', path: '/v1/webhooks' },
  { id: 'createWebhook', method: 'POST', path: '/v1/webhooks', body: () => ({ url: 'https://hooks.example.com/notesvc', events: ['note.completed', 'note.failed'], description: 'CRM sync' }) },
  { id: 'deleteWebhook', method: 'DELETE', path: '/v1/webhooks/{id}', idOf: () => 'whk_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'listWebhookDeliveries', method: 'GET', path: '/v1/webhooks/{id}/deliveries', idOf: () => 'whk_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'listAuditEvents', method: 'GET', path: '/v1/audit-events', query: { limit: '10', cursor: 'MjAyNi0xMS0yMlQxMDowMDowMC4wMDBafGF1ZF8wMWpkNngzbTJrOHY0bjdwOXEycjVzOHQwdw', action: 'note.deleted', since: '2026-11-01T00:00:00Z' } },
  { id: 'exportAuditEvents', method: 'GET', path: '/v1/audit-events/export', query: { since: '2026-11-01T00:00:00Z' } },
  // speakers: the note is created from text (no speakers: 404 for speaker A once the input is valid)
  { id: 'listNoteSpeakers', method: 'GET', path: '/v1/notes/{id}/speakers', idOf: ids => ids.noteId },
  { id: 'updateNoteSpeaker', method: 'PATCH', path: '/v1/notes/{id}/speakers/A', idOf: ids => ids.noteId, body: () => ({ name: 'Maria', remember: true }) },
  { id: 'answerSpeakerSuggestion', method: 'POST', path: '/v1/notes/{id}/speakers/A/suggestion', idOf: ids => ids.noteId, body: () => ({ accept: true }) },
  { id: 'updateNoteSegment', method: 'PATCH', path: '/v1/notes/{id}/segments/0', idOf: ids => ids.noteId, body: () => ({ speaker: 'A' }) },
  // segments of a note from text: none are timed (409 once the input is valid); find and replace by paragraph
  { id: 'splitNoteSegment', method: 'POST', path: '/v1/notes/{id}/segments/0/split', idOf: ids => ids.noteId, body: () => ({ word: 1 }) },
  { id: 'mergeNoteSegments', method: 'POST', path: '/v1/notes/{id}/segments/0/merge', idOf: ids => ids.noteId, body: () => ({ speaker: 'B' }) },
  { id: 'reassignNoteWords', method: 'POST', path: '/v1/notes/{id}/segments/0/reassign', idOf: ids => ids.noteId, body: () => ({ fromWord: 0, toWord: 1, speaker: 'B' }) },
  { id: 'moveNote', method: 'POST', path: '/v1/notes/{id}/move', idOf: ids => ids.noteId, body: () => ({ workspaceId: 'acct_another_workspace' }) },
  { id: 'previewNoteReplacement', method: 'POST', path: '/v1/notes/{id}/replacements/preview', idOf: ids => ids.noteId, body: () => ({ find: 'notes', replace: 'minutes', matchCase: false, wholeWord: true }) },
  { id: 'replaceInNote', method: 'POST', path: '/v1/notes/{id}/replacements', idOf: ids => ids.noteId, body: () => ({ find: 'notes', replace: 'minutes', matchCase: true, wholeWord: false, segments: [0] }) },
  // a transcript's history: the note from text has none until it is edited (404 for a version once the input is valid)
  { id: 'listNoteRevisions', method: 'GET', path: '/v1/notes/{id}/revisions', idOf: ids => ids.noteId },
  { id: 'getNoteRevision', method: 'GET', path: '/v1/notes/{id}/revisions/0', idOf: ids => ids.noteId },
  { id: 'restoreNoteRevision', method: 'POST', path: '/v1/notes/{id}/revisions/0/restore', idOf: ids => ids.noteId },
  { id: 'listSpeakerProfiles', method: 'GET', path: '/v1/speakers' },
  // summarize again (queued: its engine's failures end the job, not the request) and a note's export
  { id: 'createNoteSummary', method: 'POST', path: '/v1/notes/{id}/summaries', idOf: ids => ids.noteId, body: () => ({ styleId: 'meeting-notes' }) },
  { id: 'exportNote', method: 'GET', path: '/v1/notes/{id}/export', idOf: ids => ids.noteId, query: { format: 'docx' } },
  // share links (issue 33)
  { id: 'createNoteShare', method: 'POST', path: '/v1/notes/{id}/shares', idOf: ids => ids.noteId, body: () => ({ showSummary: true, showSpeakers: false, showRecording: true, formats: ['txt'], expiresAt: '2099-01-01T00:00:00Z', passphrase: 'a passphrase' }) },
  { id: 'listNoteShares', method: 'GET', path: '/v1/notes/{id}/shares', idOf: ids => ids.noteId },
  { id: 'revokeNoteShare', method: 'DELETE', path: '/v1/notes/{id}/shares/shr_01jd6x3m2k8v4n7p9q2r5s8t0w', idOf: ids => ids.noteId },
  { id: 'getSpeakerProfile', method: 'GET', path: '/v1/speakers/{id}', idOf: () => 'spk_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'deleteSpeakerProfile', method: 'DELETE', path: '/v1/speakers/{id}', idOf: () => 'spk_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  // tags (an unknown tag id where one is named: the checks are on the input)
  { id: 'listTags', method: 'GET', path: '/v1/tags' },
  { id: 'createTag', method: 'POST', path: '/v1/tags', body: () => ({ name: 'Projects', color: '#ff8800' }) },
  { id: 'updateTag', method: 'PATCH', path: '/v1/tags/{id}', idOf: () => 'tag_01jd6x3m2k8v4n7p9q2r5s8t0w', body: () => ({ name: 'Renamed', color: '#00ff00' }) },
  { id: 'deleteTag', method: 'DELETE', path: '/v1/tags/{id}', idOf: () => 'tag_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'getNoteTags', method: 'GET', path: '/v1/notes/{id}/tags', idOf: ids => ids.noteId },
  { id: 'addNoteTag', method: 'POST', path: '/v1/notes/{id}/tags', idOf: ids => ids.noteId, body: () => ({ tags: ['budget', 'Q3'], color: '#ff8800' }) },
  { id: 'removeNoteTag', method: 'DELETE', path: '/v1/notes/{id}/tags/tag_01jd6x3m2k8v4n7p9q2r5s8t0w', idOf: ids => ids.noteId },
  { id: 'getRetentionPolicy', method: 'GET', path: '/v1/settings/retention' },
  { id: 'updateRetentionPolicy', method: 'PATCH', path: '/v1/settings/retention', body: () => ({ mode: 'media', days: 30 }) },
  // workspaces (issue 35): another workspace than the key's is a 404 once the body is checked
  { id: 'setSsoGroups', method: 'PUT', path: '/v1/workspaces/{id}/sso-groups', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w', body: () => ({ mappings: [{ group: 'eng', role: 'editor' }] }) },
  // multipart, not JSON: every JSON body sent here is refused with 400 before anything is charged
  { id: 'createAudioTranscription', method: 'POST', path: '/v1/audio/transcriptions', body: () => ({ model: 'whisper-1', response_format: 'json' }), charging: true },
  { id: 'createAudioTranslation', method: 'POST', path: '/v1/audio/translations', body: () => ({ model: 'whisper-1', response_format: 'json' }), charging: true },
  { id: 'listModels', method: 'GET', path: '/v1/models' },
  // workspaces: another's workspace id where one is named (the checks are on the input)
  { id: 'listWorkspaces', method: 'GET', path: '/v1/workspaces' },
  { id: 'createWorkspace', method: 'POST', path: '/v1/workspaces', body: () => ({ name: 'Research' }) },
  { id: 'getWorkspace', method: 'GET', path: '/v1/workspaces/{id}', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'renameWorkspace', method: 'PATCH', path: '/v1/workspaces/{id}', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w', body: () => ({ name: 'Research' }) },
  { id: 'inviteMember', method: 'POST', path: '/v1/workspaces/{id}/invitations', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w', body: () => ({ email: 'ana@example.com', role: 'editor' }) },
  { id: 'revokeInvitation', method: 'DELETE', path: '/v1/workspaces/{id}/invitations/inv_01jd6x3m2k8v4n7p9q2r5s8t0w', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'acceptInvitation', method: 'POST', path: '/v1/invitations/accept', body: () => ({ token: 'an-unknown-invitation-token' }) },
  { id: 'changeMemberRole', method: 'PATCH', path: '/v1/workspaces/{id}/members/acct_01jd6x3m2k8v4n7p9q2r5s8t0x', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w', body: () => ({ role: 'viewer' }) },
  { id: 'removeMember', method: 'DELETE', path: '/v1/workspaces/{id}/members/acct_01jd6x3m2k8v4n7p9q2r5s8t0x', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w' },
  { id: 'createWorkspaceKey', method: 'POST', path: '/v1/workspaces/{id}/keys', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w', body: () => ({ name: 'ci', sandbox: false }) },
  { id: 'revokeWorkspaceKey', method: 'DELETE', path: '/v1/workspaces/{id}/keys/key_01jd6x3m2k8v4n7p9q2r5s8t0w', idOf: () => 'acct_01jd6x3m2k8v4n7p9q2r5s8t0w' },
]

/** A JSON literal written as raw text, so values no JS number holds exactly reach the server as sent. */
class Raw {
  constructor(readonly text: string) {}
}

const HOSTILE_VALUES: { label: string; value: unknown }[] = [
  { label: 'empty string', value: '' },
  { label: 'blank string', value: '   ' },
  { label: 'NUL character', value: '\u0000' },
  { label: 'lone surrogate', value: '\ud800' },
  { label: '100,000-character string', value: 'x'.repeat(100_000) },
  { label: 'numeric string', value: '300' },
  { label: 'largest 64-bit integer', value: new Raw('9223372036854775807') },
  { label: 'smallest 64-bit integer', value: new Raw('-9223372036854775808') },
  { label: 'integer beyond 64 bits', value: new Raw('99999999999999999999999999') },
  { label: 'largest double', value: new Raw('1.7976931348623157e308') },
  { label: 'smallest double', value: new Raw('-1.7976931348623157e308') },
  { label: 'fraction', value: 1.5 },
  { label: 'zero', value: 0 },
  { label: 'minus one', value: -1 },
  { label: 'true', value: true },
  { label: 'null', value: null },
  { label: 'array', value: ['a'] },
  { label: 'object', value: { a: 1 } },
]

const HOSTILE_QUERY_VALUES = [
  '',
  ' ',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '99999999999999999999999999',
  '1e308',
  '-1',
  '1.5',
  'NaN',
  'Infinity',
  '0x10',
  'abc',
  '%00',
  '%FF',
  'x'.repeat(10_000),
]

const MALFORMED_IDS = ['%00', '%FF', '%2F', '..%2F..%2Fetc', 'x'.repeat(10_000), "note_'; DROP TABLE notes;--", 'note_\u00e9', ' ', 'null', '9223372036854775808']

function toJson(body: unknown): string {
  const raws: string[] = []
  const text = JSON.stringify(body, (_k, v) => {
    if (v instanceof Raw) {
      raws.push(v.text)
      return `\u0001RAW${raws.length - 1}\u0001`
    }
    return v
  })
  return text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i) => raws[Number(i)]!)
}

async function setup() {
  const app = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
  const token = await app.key({ plan: 'pro' })
  const note = await app.call('POST', '/v1/notes', { token, body: { title: 'Planning', content: 'The beta ships on March third. Maria writes the release notes.' } })
  const folder = await app.call('POST', '/v1/folders', { token, body: { name: 'Inbox' } })
  const upload = await app.call('POST', '/v1/uploads', { token, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
  expect([note.status, folder.status, upload.status]).toEqual([201, 201, 201])
  const ids: Ids = { noteId: note.body.id, folderId: folder.body.id, uploadId: upload.body.noteId }
  return { app, token, ids }
}

/** A failure, if the answer is not a success or a proper 4xx envelope (or a 502 where the interface allows one). */
function verdict(op: Op, what: string, res: CallResult): string | null {
  if (res.status >= 200 && res.status < 300) return null
  const code = res.body?.error?.code
  if (typeof code !== 'string') return `${what}: ${res.status} without the error envelope: ${res.text.slice(0, 120)}`
  if (STATUS_OF_CODE[code] !== res.status) return `${what}: ${res.status} with code ${code}`
  if (res.status >= 400 && res.status < 500) return null
  if (res.status === 502 && op.charging) return null
  return `${what}: ${res.status} ${code}: ${res.body.error.message}`
}

async function send(app: ReturnType<typeof createTestApp>, token: string, method: string, path: string, body?: string): Promise<CallResult> {
  return app.call(method, path, { token, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } })
}

function pathOf(op: Op, ids: Ids, id?: string): string {
  return op.path.replace('{id}', id ?? (op.idOf ? encodeURIComponent(op.idOf(ids)) : ''))
}

test('the table names every operation the service serves', () => {
  expect(OPS.map(o => `${o.method} ${o.id}`).sort()).toEqual(OPERATIONS.map(o => `${o.method} ${o.id}`).sort())
})

describe('hostile input to every operation: a success or a 4xx envelope, never a 500', () => {
  for (const op of OPS) {
    test(op.id, async () => {
      const failures: string[] = []
      const check = (what: string, res: CallResult, mustRefuse = false) => {
        const v = verdict(op, what, res)
        if (v) failures.push(v)
        else if (mustRefuse && res.status < 400) failures.push(`${what}: accepted with ${res.status}, expected a 4xx`)
      }

      // body fields, one at a time
      if (op.body) {
        for (const field of Object.keys(op.body({ noteId: 'n', folderId: 'f', uploadId: 'u' }))) {
          for (const { label, value } of HOSTILE_VALUES) {
            const { app, token, ids } = await setup()
            const res = await send(app, token, op.method, pathOf(op, ids), toJson({ ...op.body(ids), [field]: value }))
            check(`${field} = ${label}`, res)
          }
        }
        // bodies that are not objects at all
        const { app, token, ids } = await setup()
        for (const raw of ['[]', '"text"', '42', 'null', '{', '{"a":', '\u0000', '{"__proto__":{"x":1}}']) {
          check(`body ${JSON.stringify(raw)}`, await send(app, token, op.method, pathOf(op, ids), raw), true)
        }
      }

      // query parameters, one at a time (an operation without any gets a stray one)
      const query = op.query ?? { stray: '1' }
      {
        const { app, token, ids } = await setup()
        for (const name of Object.keys(query)) {
          for (const value of HOSTILE_QUERY_VALUES) {
            const params = new URLSearchParams({ ...query, [name]: value })
            check(`?${name}=${value.slice(0, 30)}`, await send(app, token, op.method, `${pathOf(op, ids)}?${params}`))
          }
          // the same parameter twice
          check(`?${name} twice`, await send(app, token, op.method, `${pathOf(op, ids)}?${name}=1&${name}=2`))
        }
      }

      // malformed path ids are refused, never a 500
      if (op.idOf) {
        const { app, token, ids } = await setup()
        for (const bad of MALFORMED_IDS) {
          const body = op.body ? toJson(op.body(ids)) : undefined
          const id = /^%|\.\./.test(bad) ? bad : encodeURIComponent(bad)
          check(`id ${bad.slice(0, 30)}`, await send(app, token, op.method, op.path.replace('{id}', id), body), true)
        }
      }

      expect(failures).toEqual([])
    })
  }
})
