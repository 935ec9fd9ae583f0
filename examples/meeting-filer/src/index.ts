/**
 * meeting-filer: `bun run src/index.ts FILE --out DIR`
 * Uploads the recording to notesvc (NOTESVC_URL, NOTESVC_API_KEY), waits for its summary, puts the
 * note in the "Meetings" folder and writes DIR/<date> <title>.md. Prints the file's path.
 */
import { parseArgs } from 'node:util'
import { createClient, NotesvcError, NoteFailedError } from '@notesvc/client'
import { fileRecording } from './filer'

const USAGE = 'usage: bun run src/index.ts FILE --out DIR   (with NOTESVC_URL and NOTESVC_API_KEY set)'

async function main(args: string[]): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args, options: { out: { type: 'string' } }, allowPositionals: true })
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`)
    return 2
  }
  const [file, ...extra] = parsed.positionals
  const outDir = parsed.values.out
  if (!file || !outDir || extra.length) {
    console.error(USAGE)
    return 2
  }
  const baseUrl = process.env.NOTESVC_URL
  const apiKey = process.env.NOTESVC_API_KEY
  if (!baseUrl || !apiKey) {
    console.error('Set NOTESVC_URL (for example http://127.0.0.1:8080) and NOTESVC_API_KEY (a svc_live_ or svc_test_ key).')
    return 2
  }
  const client = createClient({ baseUrl, apiKey })
  try {
    const filed = await fileRecording(client, {
      file,
      outDir,
      onStatus: status => console.error(`notesvc: ${JSON.stringify(status)}`),
    })
    console.log(filed.path)
    return 0
  } catch (error) {
    if (error instanceof NoteFailedError) {
      console.error(`notesvc could not process the recording (${error.errorCode}): ${error.message}`)
      return 1
    }
    if (error instanceof NotesvcError) {
      console.error(`notesvc answered ${error.status} ${error.code}: ${error.message} (request ${error.requestId})`)
      return 1
    }
    throw error
  }
}

process.exitCode = await main(process.argv.slice(2))
