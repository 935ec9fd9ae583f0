import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../helpers/app'
import { ALL_OPERATIONS } from '../helpers/interface'

/** SPEC.md "Endpoints": the named request and success shapes of each operation. */
const SHAPES: Record<string, { request?: string; responses: Record<string, string | string[] | null> }> = {
  getApiIndex: { responses: { 200: 'ApiIndex' } },
  getHealth: { responses: { 200: 'Health' } },
  listNotes: { responses: { 200: 'NoteList' } },
  createNote: { request: 'CreateNoteRequest', responses: { 201: 'Note' } },
  getNote: { responses: { 200: 'Note' } },
  updateNote: { request: 'UpdateNoteRequest', responses: { 200: 'Note' } },
  deleteNote: { responses: { 204: null } },
  getNoteStatus: { responses: { 200: 'NoteStatus' } },
  // the Transcript, or with ?format=verbose_json the TranscriptVerbose (DECISIONS.md "Beyond the interface")
  getNoteTranscript: { responses: { 200: 'TranscriptResponse' } },
  askNoteQuestion: { request: 'QuestionRequest', responses: { 200: 'Answer' } },
  listFolders: { responses: { 200: 'FolderList' } },
  createFolder: { request: 'CreateFolderRequest', responses: { 201: 'Folder' } },
  getFolder: { responses: { 200: 'Folder' } },
  updateFolder: { request: 'UpdateFolderRequest', responses: { 200: 'Folder' } },
  deleteFolder: { responses: { 204: null } },
  createUpload: { request: 'CreateUploadRequest', responses: { 201: 'Upload' } },
  completeUpload: { responses: { 200: 'UploadAccepted', 202: 'UploadAccepted' } },
  createTranscription: { request: 'TranscriptionRequest', responses: { 200: 'TranscriptionResult' } },
  createSummary: { request: 'SummaryRequest', responses: { 200: 'SummaryResult' } },
  createYoutubeSummary: { request: 'YoutubeSummaryRequest', responses: { 200: 'YoutubeSummaryResult' } },
  getUsage: { responses: { 200: 'Usage' } },
  createAudioTranscription: { request: 'OpenAiTranscriptionRequest', responses: { 200: 'OpenAiTranscriptionResponse' } },
  createAudioTranslation: { request: 'OpenAiTranslationRequest', responses: { 200: 'OpenAiTranslationResponse' } },
  listModels: { responses: { 200: 'OpenAiModelList' } },
  // speakers (docs/decisions.md)
  listNoteSpeakers: { responses: { 200: 'NoteSpeakerList' } },
  updateNoteSpeaker: { request: 'UpdateNoteSpeakerRequest', responses: { 200: 'NoteSpeaker' } },
  answerSpeakerSuggestion: { request: 'SpeakerSuggestionAnswer', responses: { 200: 'NoteSpeaker' } },
  updateNoteSegment: { request: 'UpdateSegmentRequest', responses: { 200: 'UpdateSegmentResponse' } },
  listNoteRevisions: { responses: { 200: 'RevisionList' } },
  getNoteRevision: { responses: { 200: 'RevisionTranscript' } },
  restoreNoteRevision: { responses: { 200: 'RevisionRestored' } },
  // segments split, merged, reassigned (the whole transcript back), find and replace (issue 31)
  splitNoteSegment: { request: 'SplitSegmentRequest', responses: { 200: 'TranscriptVerbose' } },
  mergeNoteSegments: { request: 'MergeSegmentsRequest', responses: { 200: 'TranscriptVerbose' } },
  reassignNoteWords: { request: 'ReassignWordsRequest', responses: { 200: 'TranscriptVerbose' } },
  previewNoteReplacement: { request: 'ReplacementPreviewRequest', responses: { 200: 'ReplacementPreview' } },
  moveNote: { request: 'MoveNoteRequest', responses: { 200: 'Note' } },
  replaceInNote: { request: 'ReplacementRequest', responses: { 200: 'ReplacementResult' } },
  listSpeakerProfiles: { responses: { 200: 'SpeakerProfileList' } },
  getSpeakerProfile: { responses: { 200: 'SpeakerProfile' } },
  deleteSpeakerProfile: { responses: { 204: null } },
  // summarize again; a note's export, a file rather than JSON: its media types
  createNoteSummary: { request: 'NoteSummaryRequest', responses: { 202: 'NoteSummaryAccepted' } },
  exportNote: { responses: { 200: ['text/markdown', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'] } },
  // share links (issue 33)
  createNoteShare: { request: 'CreateNoteShareRequest', responses: { 201: 'CreatedNoteShare' } },
  listNoteShares: { responses: { 200: 'NoteShareList' } },
  revokeNoteShare: { responses: { 204: null } },
  // tags (docs/decisions.md "Tags")
  listTags: { responses: { 200: 'TagList' } },
  createTag: { request: 'CreateTagRequest', responses: { 201: 'Tag' } },
  updateTag: { request: 'UpdateTagRequest', responses: { 200: 'Tag' } },
  deleteTag: { responses: { 204: null } },
  getNoteTags: { responses: { 200: 'NoteTags' } },
  addNoteTag: { request: 'AddNoteTagsRequest', responses: { 200: 'NoteTags' } },
  removeNoteTag: { responses: { 200: 'NoteTags' } },
  // a question across the library (issue 33)
  askLibrary: { request: 'LibraryQuestionRequest', responses: { 200: 'LibraryAnswer' } },
  // workspaces, the MCP tools among them (docs/decisions.md "Workspaces")
  listWorkspaces: { responses: { 200: 'WorkspaceList' } },
  createWorkspace: { request: 'WorkspaceNameRequest', responses: { 201: 'Workspace' } },
  getWorkspace: { responses: { 200: 'WorkspaceDetail' } },
  renameWorkspace: { request: 'WorkspaceNameRequest', responses: { 200: 'Workspace' } },
}

/** DECISIONS.md "Beyond the interface": the operations added beside SPEC.md, and their shapes. */
const BEYOND_SHAPES: Record<string, { request?: string; responses: Record<string, string | string[] | null> }> = {
  listWebhooks: { responses: { 200: 'WebhookList' } },
  createWebhook: { request: 'CreateWebhookRequest', responses: { 201: 'CreatedWebhook' } },
  deleteWebhook: { responses: { 204: null } },
  listWebhookDeliveries: { responses: { 200: 'WebhookDeliveryList' } },
  // the audit log (docs/decisions.md "Audit log"); the export is JSON lines of AuditEvent
  listAuditEvents: { responses: { 200: 'AuditEventList' } },
  exportAuditEvents: { responses: { 200: 'AuditEvent' } },
  // retention (docs/decisions.md "Retention"); like webhooks, set by people, not MCP tools
  getRetentionPolicy: { responses: { 200: 'RetentionPolicy' } },
  updateRetentionPolicy: { request: 'UpdateRetentionPolicyRequest', responses: { 200: 'RetentionPolicy' } },
  // workspaces (docs/decisions.md "Workspaces")
  inviteMember: { request: 'InviteMemberRequest', responses: { 201: 'CreatedWorkspaceInvitation' } },
  revokeInvitation: { responses: { 204: null } },
  acceptInvitation: { request: 'AcceptInvitationRequest', responses: { 200: 'Workspace' } },
  changeMemberRole: { request: 'ChangeMemberRoleRequest', responses: { 200: 'WorkspaceMember' } },
  removeMember: { responses: { 204: null } },
  createWorkspaceKey: { request: 'CreateWorkspaceKeyRequest', responses: { 201: 'CreatedWorkspaceKey' } },
  revokeWorkspaceKey: { responses: { 204: null } },
  setSsoGroups: { request: 'SsoGroupMappings', responses: { 200: 'SsoGroupMappings' } },
}

/** Every field SPEC.md types integer, as a path through the named schemas (`[]` for array items, `{}` for map values). */
const INTEGER_FIELDS = [
  'NoteList.pagination.limit', 'NoteList.pagination.offset', 'Answer.creditsCharged', 'UploadAccepted.creditsCharged',
  'TranscriptionResult.creditsCharged', 'SummaryResult.creditsCharged', 'YoutubeSummaryResult.creditsCharged',
  'Usage.balance.grantTotal', 'Usage.balance.grantRemaining', 'Usage.balance.purchasedRemaining', 'Usage.balance.totalRemaining',
  'Usage.spentThisPeriod', 'Usage.recent.[].credits', 'Usage.costs.{}', 'Error.error.retry_after_seconds',
  'CreateUploadRequest.fileSize', 'TranscriptionRequest.timeoutSeconds',
]

async function served() {
  const t = createTestApp()
  return (await t.call('GET', '/v1/openapi.json')).body
}

describe('the OpenAPI document names its resources', () => {
  test('every request and success body of SPEC.md is a named component, referenced by $ref', async () => {
    const doc = await served()
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
    const found: Record<string, unknown> = {}
    for (const methods of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(methods)) {
        found[op.operationId] = {
          request: (op.requestBody?.content['application/json'] ?? op.requestBody?.content['multipart/form-data'])?.schema,
          responses: Object.fromEntries(Object.entries<any>(op.responses).filter(([s]) => Number(s) < 300).map(([s, r]) => [s, r.content?.['application/json']?.schema ?? (r.content ? Object.keys(r.content) : null)])),
        }
      }
    }
    const expected = Object.fromEntries(Object.entries({ ...SHAPES, ...BEYOND_SHAPES }).map(([id, s]) => [id, {
      request: s.request ? ref(s.request) : undefined,
      responses: Object.fromEntries(Object.entries(s.responses).map(([status, name]) => [status, Array.isArray(name) ? name : name ? ref(name) : null])),
    }]))
    expect(found).toEqual(expected)
    expect(Object.keys(SHAPES).sort()).toEqual(ALL_OPERATIONS.map(o => o.id).sort())
    expect(doc.components.schemas.TranscriptResponse.anyOf).toEqual([ref('Transcript'), ref('TranscriptVerbose'), ref('OpenAiDiarizedTranscription')])
    // list items and the error envelope are named too
    expect(doc.components.schemas.NoteList.properties.data.items).toEqual(ref('NoteListItem'))
    for (const status of ['400', '401', '403', '429', '500']) {
      const r = doc.paths['/v1/notes'].get.responses[status]
      const target = r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r
      expect(target.content['application/json'].schema).toEqual(ref('Error'))
    }
  })

  test('every integer field of SPEC.md is published as type integer', async () => {
    const doc = await served()
    const schemas = doc.components.schemas
    const resolve = (s: any): any => (s?.$ref ? schemas[s.$ref.split('/').pop()] : s)
    const typeAt = (path: string) => {
      const [name, ...steps] = path.split('.')
      let s = resolve(schemas[name!])
      for (const step of steps) s = resolve(step === '[]' ? s.items : step === '{}' ? s.additionalProperties : s.properties[step])
      return s.type
    }
    expect(Object.fromEntries(INTEGER_FIELDS.map(p => [p, typeAt(p)]))).toEqual(Object.fromEntries(INTEGER_FIELDS.map(p => [p, 'integer'])))
    const query = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p.schema.type]))
    expect(query('/v1/notes')).toMatchObject({ limit: 'integer', offset: 'integer' })
    expect(query('/v1/usage')).toEqual({ limit: 'integer' })
  })

  test('only standard keywords: no validation messages, no $id, records as additionalProperties', async () => {
    const text = JSON.stringify(await served())
    expect(text).not.toContain('"error":"must')
    expect(text).not.toContain('"$id"')
    expect(text).not.toContain('patternProperties')
    const doc = JSON.parse(text)
    expect(doc.components.schemas.Upload.properties.headers).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } })
  })

  test('global tags with descriptions, a description on every operation, and a contact', async () => {
    const doc = await served()
    const tags = doc.tags.map((t: any) => t.name)
    for (const methods of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(methods)) {
        expect(op.description, op.operationId).toBeString()
        expect(tags).toContain(op.tags[0])
      }
    }
    for (const t of doc.tags) expect(t.description, t.name).toBeString()
    expect(doc.info.contact.url).toBe('http://localhost/docs')
  })
})
