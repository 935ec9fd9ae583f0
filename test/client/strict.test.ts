import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, run, tempDir } from '../helpers/process'

/**
 * The client's types as a consumer's compiler sees them: TypeScript 5's tsc (`typescript5`, what most
 * consumers run), `strict`, `@notesvc/client` resolved to the package's source. A correct program
 * compiles; a misspelled field is a compile error that names it.
 */
const dir = tempDir('notesvc-client-strict-')
afterAll(() => dir.remove())

const TSCONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [],
    paths: { '@notesvc/client': [join(ROOT, 'packages/client/src/index.ts')] },
  },
  files: ['consumer.ts'],
}

const CORRECT = `
import { createClient, NotFoundError, RateLimitedError, NotesvcError, verifyWebhook } from '@notesvc/client'

const client = createClient({ baseUrl: 'https://notes.example.com', apiKey: 'svc_test_x', retry: { maxRetries: 3 } })

export async function useIt(file: Blob, secret: string, raw: string, headers: Headers) {
  const note = await client.createNote({ title: 'Standup', content: 'Notes of the standup.' })
  const title: string = note.title
  const page = await client.listNotes({ limit: 10, offset: 0 })
  const more: boolean = page.pagination.hasMore
  const ids: string[] = []
  for await (const item of client.paginate.listNotes({ limit: 50 })) ids.push(item.id)
  const status = await client.getNoteStatus({ id: note.id })
  const stage: 'Done' | 'Summarizing' | 'Error' | 'Unknown' = status.status
  const usage = await client.getUsage()
  const remaining: number = usage.balance.totalRemaining
  const nothing: undefined = await client.deleteNote({ id: note.id })
  const uploaded = await client.uploadRecording({ file, fileName: 'standup.wav', onUploadProgress: (sent: number, total: number | null) => void [sent, total] })
  const event = verifyWebhook(secret, raw, headers)
  const noteId: string = event.data.noteId
  try {
    await client.getNote({ id: 'note_missing' })
  } catch (e) {
    if (e instanceof NotFoundError) return e.requestId
    if (e instanceof RateLimitedError) return e.retryAfter
    if (e instanceof NotesvcError) return e.code
  }
  return { title, more, ids, stage, remaining, nothing, uploaded: uploaded.status, noteId }
}
`

async function compile(source: string) {
  writeFileSync(join(dir.path, 'tsconfig.json'), JSON.stringify(TSCONFIG))
  writeFileSync(join(dir.path, 'consumer.ts'), source)
  const r = await run(['bun', join(ROOT, 'node_modules/typescript5/bin/tsc'), '-p', join(dir.path, 'tsconfig.json')], { cwd: dir.path })
  return { code: r.code, output: (r.stdout + r.stderr).trim() }
}

describe('the client under tsc --strict', () => {
  test('a correct consumer compiles', async () => {
    expect(await compile(CORRECT)).toEqual({ code: 0, output: '' })
  }, 60_000)

  test('a misspelled body field is a compile error naming the field', async () => {
    const r = await compile(CORRECT.replace("client.createNote({ title: 'Standup'", "client.createNote({ titel: 'Standup'"))
    expect(r.code).not.toBe(0)
    expect(r.output).toContain("'titel' does not exist")
  }, 60_000)

  test('a misspelled path parameter and a field of the wrong type are compile errors too', async () => {
    const r = await compile(CORRECT
      .replace('client.getNoteStatus({ id: note.id })', 'client.getNoteStatus({ noteId: note.id })')
      .replace('client.listNotes({ limit: 10, offset: 0 })', "client.listNotes({ limit: '10', offset: 0 })"))
    expect(r.code).not.toBe(0)
    expect(r.output).toContain("'noteId' does not exist")
    expect(r.output).toContain("Type 'string' is not assignable to type 'number'")
  }, 60_000)
})
