/**
 * What notesvc adds on top of the speech engine. In one run, on the same 10-minute recording (real
 * speech from Debian's pocketsphinx-testdata, repeated) and the same engine and model:
 *   (a) the engine alone: pocketsphinx_continuous on the whole file, as one would run it by hand;
 *   (b) the full path through notesvc (its own process, NOTESVC_ASR=pocketsphinx): create the upload,
 *       PUT the file, complete, poll until Done;
 * and prints (b)/(a). Target: at most 1.10.
 *
 *   bun run bench/pipeline.ts                  # 10 minutes of audio
 *   BENCH_AUDIO_SECONDS=120 bun run bench/pipeline.ts
 *
 * Needs: apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { POCKETSPHINX_DEFAULTS } from '../src/engines/asr/pocketsphinx'
import { speechWav } from '../test/fixtures/speech'
import { startNotesvc } from './notesvc-process'
import { pocketsphinxAlone } from './speech-engine'

const SECONDS = Number(process.env.BENCH_AUDIO_SECONDS ?? 600)
const TARGET = 1.1

/** (b) Upload → PUT → complete → Done through a notesvc server using the same engine. */
async function throughNotesvc(wav: Uint8Array): Promise<{ seconds: number; words: number; stages: string[] }> {
  const server = await startNotesvc({ NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_RATE_LIMITS: 'read=1000000' })
  const { base, headers } = server
  try {
    const started = performance.now()
    const up = (await (await fetch(`${base}/v1/uploads`, { method: 'POST', headers, body: JSON.stringify({ fileName: 'talk.wav', contentType: 'audio/wav', fileSize: wav.length }) })).json()) as any
    const put = await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })
    if (put.status !== 200) throw new Error(`PUT answered ${put.status}`)
    const done = await fetch(`${base}/v1/uploads/${up.noteId}/complete`, { method: 'POST', headers })
    if (done.status !== 202) throw new Error(`complete answered ${done.status}: ${await done.text()}`)
    const stages: string[] = []
    let status: any
    for (;;) {
      status = await (await fetch(`${base}/v1/notes/${up.noteId}/status`, { headers })).json()
      const label = status.processingStage ?? status.status
      if (stages.at(-1) !== label) stages.push(label)
      if (status.status !== 'Summarizing') break
      await Bun.sleep(50)
    }
    const seconds = (performance.now() - started) / 1000
    if (status.status !== 'Done') throw new Error(`processing ended in ${JSON.stringify(status)}`)
    const note = (await (await fetch(`${base}/v1/notes/${up.noteId}`, { headers })).json()) as any
    return { seconds, words: note.originalTranscription.split(/\s+/).filter(Boolean).length, stages }
  } finally {
    await server.stop()
  }
}

const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-audio-'))
try {
  const wav = speechWav(SECONDS)
  const wavPath = join(work, 'talk.wav')
  writeFileSync(wavPath, wav)
  const audioSeconds = (wav.length - 44) / 32_000
  process.stderr.write(`audio: ${audioSeconds.toFixed(0)} s of speech; running the engine alone…\n`)
  const a = await pocketsphinxAlone(wavPath)
  process.stderr.write(`engine alone: ${a.seconds.toFixed(1)} s; now through notesvc…\n`)
  const b = await throughNotesvc(wav)
  const ratio = b.seconds / a.seconds
  console.log(`pipeline benchmark: ${audioSeconds.toFixed(0)} s of speech, PocketSphinx (${POCKETSPHINX_DEFAULTS.hmm}), ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`)
  console.log(`  (a) engine alone (pocketsphinx_continuous on the file): ${a.seconds.toFixed(1)} s, ${a.words} words, real-time factor ${(a.seconds / audioSeconds).toFixed(2)}`)
  console.log(`  (b) upload → PUT → complete → Done through notesvc:    ${b.seconds.toFixed(1)} s, ${b.words} words (stages: ${b.stages.join(' → ')})`)
  console.log(`  (b)/(a) = ${ratio.toFixed(3)} -> target at most ${TARGET}: ${ratio <= TARGET ? 'PASS' : 'MISS'}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
