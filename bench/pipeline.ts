/**
 * What notesvc does with the speech engine, measured in one run on real speech (Debian's
 * pocketsphinx-testdata LibriVox recordings, repeated) with the same engine and model throughout:
 *
 *   (a) the engine alone: one pocketsphinx_continuous process on the whole 10-minute file, as one
 *       would run it by hand;
 *   (b) the same file through notesvc (its own process, default settings: NOTESVC_ASR=pocketsphinx,
 *       NOTESVC_LLM=builtin, nothing else set): create the upload, PUT the file, complete, poll
 *       until Done. Prints (b)/(a); target on a 2-core machine: at most 0.6 (two cores cannot do
 *       better than 0.5);
 *   (c) a 20-second recording alone, then the 10-minute and the 20-second one together (the short one
 *       submitted as soon as the long one's status says transcribing): the short one's time to Done
 *       beside its solo time (and the long one's beside (b)).
 *
 * It measures and assumes nothing about how notesvc schedules: whatever NOTESVC_WORKERS,
 * NOTESVC_ASR_SLOTS or chunking do by default is what is timed. It also reports whether the status
 * carried a `progress` figure while the long file was processed, and how many distinct values.
 *
 *   bun run bench/pipeline.ts                                         # 600 s and 20 s of audio
 *   BENCH_AUDIO_SECONDS=120 BENCH_SHORT_SECONDS=20 bun run bench/pipeline.ts
 *
 * Needs: apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { POCKETSPHINX_DEFAULTS } from '../src/engines/asr/pocketsphinx'
import { speechWav } from '../test/fixtures/speech'
import { startNotesvc } from './notesvc-process'
import { pocketsphinxAlone } from './speech-engine'

const LONG_SECONDS = Number(process.env.BENCH_AUDIO_SECONDS ?? 600)
const SHORT_SECONDS = Number(process.env.BENCH_SHORT_SECONDS ?? 20)
const TARGET = 0.6

type Server = Awaited<ReturnType<typeof startNotesvc>>

interface Run {
  /** from the upload's creation to Done */
  seconds: number
  words: number
  stages: string[]
  /** the distinct `progress` values the status showed while processing (none when it has no such field) */
  progress: number[]
}

/**
 * Upload → PUT → complete → poll until Done, timed from the first request. `onTranscribing` is called
 * once, when the status first shows the transcribing stage.
 */
async function uploadToDone(server: Server, wav: Uint8Array, fileName: string, onTranscribing?: () => void): Promise<Run> {
  const { base, headers } = server
  const started = performance.now()
  const up = (await (await fetch(`${base}/v1/uploads`, { method: 'POST', headers, body: JSON.stringify({ fileName, contentType: 'audio/wav', fileSize: wav.length }) })).json()) as any
  if (!up.uploadUrl) throw new Error(`createUpload answered ${JSON.stringify(up)}`)
  const put = await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })
  if (put.status !== 200) throw new Error(`PUT answered ${put.status}`)
  const done = await fetch(`${base}/v1/uploads/${up.noteId}/complete`, { method: 'POST', headers })
  if (done.status !== 202) throw new Error(`complete answered ${done.status}: ${await done.text()}`)
  const stages: string[] = []
  const progress: number[] = []
  let status: any
  for (;;) {
    status = await (await fetch(`${base}/v1/notes/${up.noteId}/status`, { headers })).json()
    const label = status.processingStage ?? status.status
    if (stages.at(-1) !== label) stages.push(label)
    if (label === 'transcribing' && onTranscribing) {
      onTranscribing()
      onTranscribing = undefined
    }
    if (typeof status.progress === 'number' && progress.at(-1) !== status.progress) progress.push(status.progress)
    if (status.status !== 'Summarizing') break
    await Bun.sleep(50)
  }
  const seconds = (performance.now() - started) / 1000
  if (status.status !== 'Done') throw new Error(`processing of ${fileName} ended in ${JSON.stringify(status)}`)
  const note = (await (await fetch(`${base}/v1/notes/${up.noteId}`, { headers })).json()) as any
  return { seconds, words: note.originalTranscription.split(/\s+/).filter(Boolean).length, stages, progress }
}

const audioSeconds = (wav: Uint8Array) => (wav.length - 44) / 32_000
const s = (x: number) => `${x.toFixed(1)} s`
const say = (line: string) => process.stderr.write(`${line}\n`)

const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-audio-'))
try {
  const long = speechWav(LONG_SECONDS)
  const short = speechWav(SHORT_SECONDS)
  const longPath = join(work, 'talk.wav')
  writeFileSync(longPath, long)
  say(`audio: ${audioSeconds(long).toFixed(0)} s and ${audioSeconds(short).toFixed(0)} s of speech; (a) the engine alone…`)
  const a = await pocketsphinxAlone(longPath)

  say(`(a) ${s(a.seconds)}; starting notesvc with default settings…`)
  const server = await startNotesvc({ NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_RATE_LIMITS: 'read=1000000' })
  let b: Run, shortSolo: Run, pair: { long: Run; short: Run }
  try {
    say('(b) the long recording through notesvc…')
    b = await uploadToDone(server, long, 'talk.wav')
    say(`(b) ${s(b.seconds)}; (c) the short recording alone…`)
    shortSolo = await uploadToDone(server, short, 'memo.wav')
    say(`(c) alone ${s(shortSolo.seconds)}; the long one again, and the short one as soon as the long one is transcribing…`)
    // submitted together, the short file would win the race to the queue (its PUT ends first) and say
    // nothing about sharing; so it goes in once a worker has started on the long one
    let shortRun!: Promise<Run>
    const longRun = uploadToDone(server, long, 'talk.wav', () => { shortRun = uploadToDone(server, short, 'memo.wav') })
    const pairLong = await longRun
    pair = { long: pairLong, short: await shortRun }
  } finally {
    await server.stop()
  }

  const ratio = b.seconds / a.seconds
  const setting = (name: string) => `${name}=${process.env[name] ?? '(default)'}`
  console.log(`pipeline benchmark: PocketSphinx (${POCKETSPHINX_DEFAULTS.hmm}), ${availableParallelism()} cores, bun ${Bun.version}; ${setting('NOTESVC_WORKERS')} ${setting('NOTESVC_ASR_SLOTS')}`)
  console.log(`  (a) engine alone, one process, ${audioSeconds(long).toFixed(0)} s file:  ${s(a.seconds)}, ${a.words} words, real-time factor ${(a.seconds / audioSeconds(long)).toFixed(3)}`)
  console.log(`  (b) upload → Done through notesvc:             ${s(b.seconds)}, ${b.words} words (stages: ${b.stages.join(' → ')})`)
  console.log(`  (b)/(a) = ${ratio.toFixed(3)} -> target at most ${TARGET} on 2 cores: ${ratio <= TARGET ? 'PASS' : 'MISS'}`)
  console.log(`  progress while (b) ran: ${b.progress.length ? `${b.progress.length} distinct values, ${b.progress.map(p => p.toFixed(2)).join(' ')}` : 'none reported (NoteStatus has no progress figure)'}`)
  console.log(`  (c) ${audioSeconds(short).toFixed(0)} s recording to Done: alone ${s(shortSolo.seconds)}; submitted while the ${audioSeconds(long).toFixed(0)} s one was transcribing ${s(pair.short.seconds)} ` +
    `(+${s(pair.short.seconds - shortSolo.seconds)}, ×${(pair.short.seconds / shortSolo.seconds).toFixed(1)})`)
  console.log(`      the ${audioSeconds(long).toFixed(0)} s one beside it: ${s(pair.long.seconds)} (alone: ${s(b.seconds)})`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
