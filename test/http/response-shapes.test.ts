import { describe, expect, test } from 'bun:test'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { createTestApp } from '../helpers/app'
import { successSchemas } from '../../src/http/openapi'
import { OPERATION_TABLE } from '../../src/operations'
import { SPEC_OPERATIONS } from '../helpers/interface'

/**
 * Responses are not checked against their schemas at run time (that would cost half of a list
 * request), so this checks real responses of every operation against the schemas the OpenAPI
 * document publishes.
 */
describe('every success response matches its published schema', async () => {
  const t = createTestApp()
  const live = await t.key()
  const sandbox = await t.key({ sandbox: true })
  const checked = new Set<string>()

  async function expectShape(operationId: string, method: string, path: string, token?: string, body?: unknown) {
    const r = await t.call(method, path, { token, body })
    const schema = successSchemas(OPERATION_TABLE.byId(operationId))[r.status]
    expect(schema, `${operationId} answered ${r.status}: ${r.text}`).toBeDefined()
    const check = TypeCompiler.Compile(schema!)
    const errors = [...check.Errors(r.body)].map(e => `${e.path}: ${e.message}`)
    expect(errors, `${operationId} ${r.text.slice(0, 300)}`).toEqual([])
    checked.add(operationId)
    return r.body
  }

  test('all operations', async () => {
    await expectShape('getApiIndex', 'GET', '/v1')
    await expectShape('getHealth', 'GET', '/v1/health')
    const folder = await expectShape('createFolder', 'POST', '/v1/folders', live, { name: 'F', color: 'red' })
    await expectShape('getFolder', 'GET', `/v1/folders/${folder.id}`, live)
    await expectShape('updateFolder', 'PATCH', `/v1/folders/${folder.id}`, live, { name: 'G' })
    await expectShape('listFolders', 'GET', '/v1/folders', live)
    const note = await expectShape('createNote', 'POST', '/v1/notes', live, { title: 'T', content: 'C', folderId: folder.id })
    await expectShape('getNote', 'GET', `/v1/notes/${note.id}`, live)
    await expectShape('updateNote', 'PATCH', `/v1/notes/${note.id}`, live, { isPinned: true })
    await expectShape('listNotes', 'GET', '/v1/notes?limit=10', live)
    await expectShape('getNoteStatus', 'GET', `/v1/notes/${note.id}/status`, live)
    await expectShape('getNoteTranscript', 'GET', `/v1/notes/${note.id}/transcript`, live)
    await expectShape('createUpload', 'POST', '/v1/uploads', live, { fileName: 'a.mp3', contentType: 'audio/mpeg', fileSize: 1000 })
    const upload = await expectShape('createUpload', 'POST', '/v1/uploads', sandbox, { fileName: 'b.mp4', contentType: 'video/mp4', styleId: 'meeting-notes' })
    await expectShape('completeUpload', 'POST', `/v1/uploads/${upload.noteId}/complete`, sandbox)
    await expectShape('completeUpload', 'POST', `/v1/uploads/${upload.noteId}/complete`, sandbox)
    await expectShape('getNote', 'GET', `/v1/notes/${upload.noteId}`, sandbox)
    const sbNote = await expectShape('createNote', 'POST', '/v1/notes', sandbox, { title: 'S', content: 'C' })
    await expectShape('askNoteQuestion', 'POST', `/v1/notes/${sbNote.id}/questions`, sandbox, { question: 'When is the launch?' })
    await expectShape('createNote', 'POST', '/v1/notes', live, { title: 'Launch', content: 'The launch is on March third.' })
    const cited = await expectShape('askLibrary', 'POST', '/v1/questions', live, { question: 'When is the launch?' })
    expect(cited.citations.length).toBeGreaterThan(0)
    await expectShape('askLibrary', 'POST', '/v1/questions', sandbox, { question: 'When is the launch?' })
    await expectShape('createTranscription', 'POST', '/v1/transcriptions', sandbox, { audioUrl: 'https://example.com/a.mp3' })
    for (const styleId of ['note', 'transcript', 'bulletpoints', 'meeting-notes']) {
      await expectShape('createSummary', 'POST', '/v1/summaries', sandbox, { text: 'Some text', styleId })
    }
    await expectShape('createYoutubeSummary', 'POST', '/v1/youtube-summaries', sandbox, { youtubeUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' })
    await expectShape('getUsage', 'GET', '/v1/usage', live)
    // deleteNote and deleteFolder answer 204 with no body, so there is no shape to check
    const noBody = ['deleteNote', 'deleteFolder']
    expect(SPEC_OPERATIONS.map(o => o.id).filter(id => !checked.has(id) && !noBody.includes(id))).toEqual([])
  })
})
