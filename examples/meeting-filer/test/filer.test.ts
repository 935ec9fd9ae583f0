/**
 * The happy path and the `slow` scenario: a real notesvc started in this process by the test kit, the
 * app run as its command line and through fileRecording, both with a sandbox key.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNotesvc, type Kit } from '@notesvc/client/testing'
import { fileRecording } from '../src/filer'
import { writeRecording } from './recording'
import { runApp } from './run-app'

// an uploaded note is titled by its file's name until a summary names it; the sandbox's fixed summary keeps it
const TITLE = 'planning'
// bun test's default of 5 s is close to the `slow` scenario's 3 s on a busy machine
const SCENARIO_TIMEOUT_MS = 20_000

let kit: Kit
let work: string

beforeAll(async () => {
  kit = await startNotesvc()
  work = mkdtempSync(join(tmpdir(), 'meeting-filer-'))
})

afterAll(async () => {
  await kit?.stop()
  rmSync(work, { recursive: true, force: true })
})

test('the command files a recording: the markdown file, the note in "Meetings", note.completed sent', async () => {
  const recording = writeRecording(work, `${TITLE}.wav`)
  const outDir = join(work, 'happy')

  const run = await runApp([recording, '--out', outDir], { url: kit.url, apiKey: kit.sandboxKey })

  expect({ exitCode: run.exitCode, stderr: run.exitCode === 0 ? '' : run.stderr }).toEqual({ exitCode: 0, stderr: '' })
  const completed = await kit.webhooks.next('note.completed')
  expect(completed).toMatchObject({ sandbox: true, data: { status: 'Done' } })
  const note = await kit.sandboxClient.getNote({ id: String(completed.data.noteId) })
  expect(note.title).toBe(TITLE)
  const fileName = `${note.dateCreated.slice(0, 10)} ${TITLE}.md`
  expect(readdirSync(outDir)).toEqual([fileName])
  expect(run.stdout.trim()).toBe(join(outDir, fileName))
  const markdown = readFileSync(join(outDir, fileName), 'utf8')
  expect(markdown).toStartWith(`# ${TITLE}\n`)
  expect(markdown).toContain(note.summary)
  // the meeting-notes style's action items, as a checklist
  expect(markdown).toContain('- [ ] Prepare the release notes (Maria, Friday)')

  const folders = (await kit.sandboxClient.listFolders()).data.filter(f => f.name === 'Meetings')
  expect(folders).toHaveLength(1)
  expect(note.folderId).toBe(folders[0]!.id)
})

test('a second meeting goes in the same folder, and a second file of the same title and day gets its own name', async () => {
  const outDir = join(work, 'twice')
  const recording = writeRecording(work, 'standup.wav')
  const first = await fileRecording(kit.sandboxClient, { file: recording, outDir })
  const second = await fileRecording(kit.sandboxClient, { file: recording, outDir })

  expect(second.folderId).toBe(first.folderId)
  expect((await kit.sandboxClient.listFolders()).data.filter(f => f.name === 'Meetings')).toHaveLength(1)
  const date = (await kit.sandboxClient.getNote({ id: second.noteId })).dateCreated.slice(0, 10)
  expect(readdirSync(outDir).sort()).toEqual([`${date} standup (2).md`, `${date} standup.md`])
})

test('the command says what to do when the key is missing', async () => {
  const run = await runApp([writeRecording(work, 'nokey.wav'), '--out', join(work, 'nokey')], { url: kit.url, apiKey: '' })
  expect(run.exitCode).toBe(2)
  expect(run.stderr).toContain('NOTESVC_API_KEY')
})

test('slow: the status is reported with growing progress until Done, then the note is filed', async () => {
  const outDir = join(work, 'slow')
  const progress: number[] = []
  const statuses: string[] = []

  const filed = await fileRecording(kit.sandboxClient, {
    file: writeRecording(work, 'slow.wav'),
    outDir,
    pollMs: 100,
    onStatus: status => {
      statuses.push(status.status)
      if (status.status === 'Summarizing' && status.progress !== null) progress.push(status.progress)
    },
  })

  const steps = progress.filter((p, i) => i === 0 || p !== progress[i - 1])
  expect(steps.length).toBeGreaterThanOrEqual(2)
  for (let i = 1; i < steps.length; i++) expect(steps[i]!).toBeGreaterThan(steps[i - 1]!)
  for (const p of steps) expect(p > 0 && p < 1).toBe(true)
  expect(statuses.at(-1)).toBe('Done')
  expect(readdirSync(outDir)).toHaveLength(1)
  expect(filed.path).not.toBeNull()
}, SCENARIO_TIMEOUT_MS)
