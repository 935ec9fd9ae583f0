/**
 * Each failure notesvc can give the app, picked with a sandbox scenario (the recording's file name,
 * e.g. `insufficient_credits.wav`), and what the app does with it. A fresh notesvc per test (the kit
 * starts in milliseconds), so "nothing filed" means nothing at all in its library.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient, InsufficientCreditsError, NoteFailedError, RateLimitedError, UpstreamFailureError, type NotesvcClient } from '@notesvc/client'
import { startNotesvc, type Kit } from '@notesvc/client/testing'
import { fileRecording } from '../src/filer'
import { writeRecording } from './recording'
import { runApp } from './run-app'

let kit: Kit
let work: string
let outDir: string

beforeEach(async () => {
  kit = await startNotesvc()
  work = mkdtempSync(join(tmpdir(), 'meeting-filer-'))
  outDir = join(work, 'out')
  mkdirSync(outDir)
})

afterEach(async () => {
  await kit.stop()
  rmSync(work, { recursive: true, force: true })
})

/** What fileRecording threw (the test fails if it did not throw). */
async function failureOf(client: NotesvcClient, scenario: string): Promise<unknown> {
  try {
    await fileRecording(client, { file: writeRecording(work, `${scenario}.wav`), outDir })
  } catch (error) {
    return error
  }
  throw new Error(`filing ${scenario}.wav succeeded; the scenario should have made it fail`)
}

async function expectNothingFiled() {
  expect(readdirSync(outDir)).toEqual([])
  expect((await kit.sandboxClient.listFolders()).data.map(f => f.name)).not.toContain('Meetings')
}

test('insufficient_credits: InsufficientCreditsError, 402, with the request id to quote; nothing filed', async () => {
  const error = await failureOf(kit.sandboxClient, 'insufficient_credits')

  expect(error).toBeInstanceOf(InsufficientCreditsError)
  expect(error).toMatchObject({ status: 402, code: 'insufficient_credits' })
  // the X-Request-Id of the refusal: notesvc's request ids are `req_` and a UUID
  expect((error as InsufficientCreditsError).requestId).toMatch(/^req_[0-9a-f-]{36}$/)
  await expectNothingFiled()
})

test('the command reports the 402 with its request id and exits 1', async () => {
  const run = await runApp([writeRecording(work, 'insufficient_credits.wav'), '--out', outDir], { url: kit.url, apiKey: kit.sandboxKey })

  expect(run.exitCode).toBe(1)
  expect(run.stderr).toMatch(/notesvc answered 402 insufficient_credits: .+ \(request req_[0-9a-f-]{36}\)/)
  expect(run.stdout).toBe('')
  await expectNothingFiled()
})

test('rate_limited: the client waits the second Retry-After asks for, tries again and the meeting is filed', async () => {
  const waits: number[] = []
  const client = createClient({
    baseUrl: kit.url,
    apiKey: kit.sandboxKey,
    sleep: async ms => {
      waits.push(ms)
      await Bun.sleep(ms)
    },
  })

  const filed = await fileRecording(client, { file: writeRecording(work, 'rate_limited.wav'), outDir, pollMs: 50 })

  // the first pause is the retry's (Retry-After: 1); any after it are the status polls'
  expect(waits[0]).toBe(1000)
  expect(readdirSync(outDir)).toHaveLength(1)
  expect(filed.path).not.toBeNull()
})

test('rate_limited with retries off: RateLimitedError, 429, retryAfter 1; nothing filed', async () => {
  const client = createClient({ baseUrl: kit.url, apiKey: kit.sandboxKey, retry: false })

  const error = await failureOf(client, 'rate_limited')

  expect(error).toBeInstanceOf(RateLimitedError)
  expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1 })
  await expectNothingFiled()
})

test('upstream_failure: UpstreamFailureError, 502; nothing filed', async () => {
  const error = await failureOf(kit.sandboxClient, 'upstream_failure')

  expect(error).toBeInstanceOf(UpstreamFailureError)
  expect(error).toMatchObject({ status: 502, code: 'upstream_failure' })
  await expectNothingFiled()
})

test('note_error: NoteFailedError with errorCode transcription_failed, note.failed sent; nothing filed', async () => {
  const error = await failureOf(kit.sandboxClient, 'note_error')

  expect(error).toBeInstanceOf(NoteFailedError)
  expect(error).toMatchObject({ errorCode: 'transcription_failed' })
  const failed = await kit.webhooks.next('note.failed')
  expect(failed.data).toMatchObject({ noteId: (error as NoteFailedError).noteId, status: 'Error', errorCode: 'transcription_failed' })
  await expectNothingFiled()
})
