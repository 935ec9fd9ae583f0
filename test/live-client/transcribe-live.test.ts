/**
 * `notesvc transcribe --realtime FILE` and `--live` as a user runs them: the CLI as its own process
 * against a real `notesvc serve` on loopback (the PocketSphinx live engine behind GET /v1/realtime),
 * fed two LibriVox clips of pocketsphinx-testdata with a second of silence between them.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { LIBRIVOX } from '../fixtures/speech'
import { wavFromPcm } from '../fixtures/wav'
import { wer } from '../helpers/wer'
import { apiClient, firstStartKey, freePort, run, startServer, tempDir, until } from '../helpers/process'

/** what is said in the two clips (the testdata's transcription of 0870 and 0880) */
const SAID = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them he was not an ill disposed young man'
const FINAL_LINE = /^\[(\d\d):(\d\d\.\d) → (\d\d):(\d\d\.\d)\] (.+)$/

const dir = tempDir('notesvc-live-cli-')
const clip = (name: string) => {
  const b = readFileSync(join(LIBRIVOX, `sense_and_sensibility_01_austen_64kb-${name}.wav`))
  return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
}
const first = clip('0870')
const second = clip('0880')
const pcm = new Int16Array(first.length + 16_000 + second.length)
pcm.set(first)
pcm.set(second, first.length + 16_000)
const RECORDING = join(dir.path, 'two clips.wav')
const SECONDS = pcm.length / 16_000
writeFileSync(RECORDING, wavFromPcm(pcm, 16_000))

let server: Awaited<ReturnType<typeof startServer>>
let base: string
let key: string
beforeAll(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, {
    env: { NOTESVC_DATA_DIR: join(dir.path, 'data'), PORT: String(port), NOTESVC_LLM: 'builtin', NOTESVC_WORKERS: '0', NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT: '1' },
    timeoutMs: 30_000,
  })
  key = await firstStartKey(server.proc.stdout)
}, 40_000)
afterAll(async () => {
  await server?.stop()
  dir.remove()
})

const cli = (args: string[], env: Record<string, string> = {}) => run(['bun', 'run', 'src/cli.ts', 'transcribe', ...args], { env: { NOTESVC_KEY: key, ...env } })
const seconds = (mm: string, ss: string) => Number(mm) * 60 + Number(ss)

function finals(stdout: string) {
  return stdout.trim().split('\n').map(line => {
    const m = FINAL_LINE.exec(line)
    if (!m) throw new Error(`not a final line: ${JSON.stringify(line)}`)
    return { start: seconds(m[1]!, m[2]!), end: seconds(m[3]!, m[4]!), text: m[5]! }
  })
}

test('--realtime FILE: the final lines with their times on stdout, partials on stderr, then the note and how to follow it', async () => {
  const r = await cli(['--realtime', RECORDING, '--pace', '4', '--url', base, '--style', 'bulletpoints'])
  expect(r.stderr).not.toContain('notesvc:')
  expect(r.code).toBe(0)
  const lines = finals(r.stdout)
  // two turns: one a clip, the second of silence between them ends the first
  expect(lines).toHaveLength(2)
  expect(lines[0]!.start).toBeLessThan(0.5)
  // the first turn ends where the first clip does (within half a second)
  expect(lines[0]!.end).toBeCloseTo(first.length / 16_000, 0)
  expect(lines[1]!.start).toBeGreaterThan(lines[0]!.end)
  expect(lines[1]!.end).toBeLessThanOrEqual(Math.ceil(SECONDS * 10) / 10)
  // the speech, as the live engine hears it (about 30 % word errors on these clips; 24 kHz read as anything else is noise)
  expect(wer(SAID, lines.map(l => l.text).join(' ')).wer).toBeLessThan(0.5)
  // not a terminal: each partial a plain line, and more than one per turn
  const partials = r.stderr.split('\n').filter(l => l.startsWith('… '))
  expect(partials.length).toBeGreaterThan(4)
  const note = /^Note (note_\w+) \(Summarizing\), ([\d.]+) s of audio, 1 credit: (\S+)$/m.exec(r.stderr)
  expect(note).not.toBeNull()
  const [, noteId, audioSeconds, page] = note!
  expect(Number(audioSeconds)).toBeCloseTo(SECONDS, 0)
  // the note's page on the server (the server names it)
  expect(page!.startsWith(`${base}/`) && page!.endsWith(`/${noteId}`)).toBe(true)
  expect(r.stderr).toContain(`Follow it: curl -H "Authorization: Bearer $NOTESVC_KEY" ${base}/v1/notes/${noteId}/status`)
  const got = await apiClient(base, key)('GET', `/v1/notes/${noteId}`)
  expect(got.body).toMatchObject({ id: noteId, title: 'two clips.wav', source: 'live', styleId: 'bulletpoints' })
}, 60_000)

test('on a terminal the partial is rewritten in place (carriage return, clear line) and the final line replaces it', async () => {
  // script(1) gives the command a pseudo-terminal for stdout and stderr alike
  const command = `bun run src/cli.ts transcribe --realtime '${RECORDING}' --pace 4 --url ${base}`
  const r = await run(['script', '-qfec', command, '/dev/null'], { env: { NOTESVC_KEY: key } })
  expect(r.code).toBe(0)
  const screen = r.stdout
  expect(screen).toContain('\r\x1b[2K… ')
  expect(screen).not.toMatch(/\n… /)
  // each final line starts where the partial was cleared
  expect(screen.match(/\r\x1b\[2K\[\d\d:\d\d\.\d → \d\d:\d\d\.\d\] /g)?.length).toBe(2)
}, 60_000)

test('--live reads the microphone through ffmpeg (here an ffmpeg input device playing the clips in real time); Ctrl+C finishes the stream and prints the note', async () => {
  const device = `lavfi:amovie=${RECORDING.replaceAll(' ', '\\ ')},arealtime=speed=2`
  const proc = Bun.spawn(['bun', 'src/cli.ts', 'transcribe', '--live', '--device', device, '--url', base], {
    env: { ...process.env, NOTESVC_KEY: key }, stdout: 'pipe', stderr: 'pipe',
  })
  let stdout = ''
  const reading = (async () => {
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) stdout += new TextDecoder().decode(chunk)
  })()
  await until('the first final line', () => stdout.includes('\n'), 30_000)
  proc.kill('SIGINT')
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text(), reading])
  expect(stderr).toContain(`Microphone: ${device}.`)
  expect(stderr).toContain('Ending the stream; waiting for the note (Ctrl+C again to leave without waiting).')
  expect(code).toBe(0)
  const lines = finals(stdout)
  expect(lines.length).toBeGreaterThanOrEqual(1)
  const note = /^Note (note_\w+) \(Summarizing\), ([\d.]+) s of audio/m.exec(stderr)
  expect(note).not.toBeNull()
  // the stream ended at Ctrl+C: the note holds the audio up to then, not the whole recording
  expect(Number(note![2])).toBeLessThan(SECONDS - 1)
  expect(Number(note![2])).toBeGreaterThanOrEqual(lines.at(-1)!.end - 0.1)
}, 60_000)

test('the server dies mid-stream (kill -9): exit 1, naming the stream the server keeps for a resume and the note it becomes', async () => {
  const port = await freePort()
  const other = `http://127.0.0.1:${port}`
  const doomed = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${other}/v1/health`, {
    env: { NOTESVC_DATA_DIR: join(dir.path, 'doomed'), PORT: String(port), NOTESVC_LLM: 'builtin', NOTESVC_WORKERS: '0' },
    timeoutMs: 30_000,
  })
  try {
    const doomedKey = await firstStartKey(doomed.proc.stdout)
    const proc = Bun.spawn(['bun', 'src/cli.ts', 'transcribe', '--realtime', RECORDING, '--url', other], {
      env: { ...process.env, NOTESVC_KEY: doomedKey }, stdout: 'pipe', stderr: 'pipe',
    })
    let stderr = ''
    const reading = (async () => {
      for await (const chunk of proc.stderr as unknown as AsyncIterable<Uint8Array>) stderr += new TextDecoder().decode(chunk)
    })()
    await until('the stream to be created', () => stderr.includes('Live: stream '), 30_000)
    doomed.proc.kill('SIGKILL')
    const [code] = await Promise.all([proc.exited, reading])
    expect(code).toBe(1)
    const created = /Live: stream (live_\w+), note (note_\w+)\./.exec(stderr)!
    expect(stderr).toMatch(new RegExp(`^notesvc: the connection to the server closed before the note was named \\(1006\\)\\. The server keeps stream ${created[1]} 60 s for a resume, then makes note ${created[2]} from the [\\d.]+ s of audio it kept; follow it with GET /v1/notes/${created[2]}/status\\.$`, 'm'))
  } finally {
    await doomed.stop()
  }
}, 60_000)

test('refusals say what to do: a wrong key (401, exit 2), no NOTESVC_KEY (exit 2), no server listening (exit 1)', async () => {
  const wrong = await cli(['--realtime', RECORDING, '--url', base], { NOTESVC_KEY: 'svc_live_wrong' })
  expect(wrong.code).toBe(2)
  expect(wrong.stderr).toMatch(/^notesvc: the server refused the key in NOTESVC_KEY \(401 invalid_token: .+\) Set NOTESVC_KEY to a live API key of that server\.$/m)
  expect(wrong.stdout).toBe('')
  const none = await cli(['--realtime', RECORDING, '--url', base], { NOTESVC_KEY: '' })
  expect(none.code).toBe(2)
  expect(none.stderr).toContain(`set NOTESVC_KEY to an API key of the server at ${base}`)
  const port = await freePort()
  const nobody = await cli(['--realtime', RECORDING, '--url', `http://127.0.0.1:${port}`])
  expect(nobody.code).toBe(1)
  expect(nobody.stderr).toContain(`cannot reach http://127.0.0.1:${port} (nothing listens there). Is \`notesvc serve\` running there? Point --url at the server's address.`)
})

test('the stream past the limit: 503 with Retry-After, said with the server\'s reason and when to try again (exit 1)', async () => {
  // the account's one stream (NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT=1) held open
  const held = new WebSocket(`${base.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: { authorization: `Bearer ${key}` } } as never)
  await new Promise((resolve, reject) => ((held.onopen = resolve), (held.onerror = reject)))
  try {
    const r = await cli(['--realtime', RECORDING, '--url', base])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^notesvc: the server cannot take another live stream now \(503: this account has 1 live stream running, its limit; .+\)\. Try again in 5 s \(Retry-After\)\.$/m)
  } finally {
    held.close(1000)
  }
})

test('a server without live streams (404, as notesvc before them answers GET /v1/realtime): the message says so and what to do instead', async () => {
  const old = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => Response.json({ error: { type: 'invalid_request_error', code: 'not_found', message: 'No route GET /v1/realtime.' } }, { status: 404 }),
  })
  try {
    const r = await cli(['--realtime', RECORDING, '--url', `http://127.0.0.1:${old.port}`])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`http://127.0.0.1:${old.port} has no live transcription (GET /v1/realtime answered 404)`)
    expect(r.stderr).toContain('notesvc transcribe FILE')
  } finally {
    old.stop(true)
  }
})

test('flags that do not go together are refused before anything starts (exit 2)', async () => {
  const cases: Array<[string[], string]> = [
    [['--live', '--realtime', RECORDING], '--live records the microphone and --realtime FILE feeds a file; give one of them'],
    [['--realtime', RECORDING, '--format', 'srt'], '--format is for a file transcribed without a server'],
    [['--live', '--pace', '4'], '--pace is for --realtime FILE'],
    [['--realtime', RECORDING, '--pace', '0'], '--pace is how many times faster than real time the file is fed'],
    [['--realtime', join(dir.path, 'missing.wav')], 'missing.wav: no such file'],
  ]
  for (const [args, message] of cases) {
    const r = await cli([...args, '--url', base])
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(message)])
  }
})
