/**
 * Issue 31's acceptance walk-through, through the HTTP API of a real `serve` process with the engines
 * a fresh install has (PocketSphinx, the builtin diarization and summarizer), on the two-person
 * recording of bench/lib/two-person.ts (a LibriVox reader and an espeak-ng host, 49 s):
 *
 *   upload, wait Done; a webhook receiver on loopback registered for note.updated; the segment whose
 *   words are most misheard (against the recording's script) corrected to its true words; printed:
 *   its word times before and after (and `timing`), its SRT cues before and after, search for a
 *   corrected word (found) and the misheard one (no longer found), its diarized_json segment before
 *   and after, the note.updated webhook's body, the revision list, two concurrent edits with the
 *   same If-Match (the second 412 with the current version, then sent again: nothing lost), a restore
 *   of version 0 and the transcript after it.
 *
 *   bun run bench/correction-walkthrough.ts
 *   BENCH_DB=postgres bun run bench/correction-walkthrough.ts    # the same on a private PostgreSQL cluster
 */
import { heardRight } from './lib/heard'
import { twoPersonRecording, type SpokenTurn } from './lib/two-person'
import { BenchFailure, startNotesvc } from './notesvc-process'
import { wavFromPcm } from '../test/fixtures/wav'
import { tempDir } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'

interface Word { word: string; start: number; end: number; confidence?: number }
interface Segment { id: number; start: number; end: number; text: string; speaker?: string; timing?: string }

const tokens = (s: string) => s.toLowerCase().match(/[a-z0-9']+/g) ?? []
const json = (x: unknown) => JSON.stringify(x)

const dir = tempDir('notesvc-walk-')
const pg = process.env.BENCH_DB === 'postgres' ? await startPostgres() : null
const databaseUrl = pg ? await pg.createDatabase('walkthrough') : null
const server = await startNotesvc({ NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_METERING: 'off', ...(databaseUrl ? { NOTESVC_DATABASE_URL: databaseUrl } : {}) })
const received: { type: string; data: Record<string, unknown> }[] = []
const receiver = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async req => { received.push(await req.json()); return new Response(null, { status: 204 }) } })

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${server.base}${path}`, { method, headers: { ...server.headers, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await r.text()
  let parsed: any = text
  try { parsed = JSON.parse(text) } catch { /* a text format */ }
  return { status: r.status, body: parsed, text, etag: r.headers.get('etag') }
}

try {
  console.log(`notesvc serve (pid ${server.pid}) on ${server.base}, ${pg ? 'PostgreSQL' : 'SQLite'}; default engines\n`)
  const { samples, turns } = twoPersonRecording(dir.path)
  const wav = wavFromPcm(Int16Array.from(samples, x => Math.round(Math.max(-1, Math.min(1, x)) * 32767)), 16_000)
  const up = (await api('POST', '/v1/uploads', { fileName: 'reading-group.wav', contentType: 'audio/wav', fileSize: wav.length, styleId: 'meeting-notes' })).body
  const put = await fetch(up.uploadUrl, { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers })
  if (!put.ok) throw new BenchFailure(`upload PUT ${put.status}`)
  await api('POST', `/v1/uploads/${up.noteId}/complete`)
  const id = up.noteId as string
  for (let status: any; ; await Bun.sleep(250)) {
    status = (await api('GET', `/v1/notes/${id}/status`)).body
    if (status.hasError) throw new BenchFailure(`processing failed: ${json(status)}`)
    if (status.isComplete) break
  }
  console.log(`recording: ${(samples.length / 16_000).toFixed(1)} s, ${turns.length} turns; note ${id} Done`)
  const hook = await api('POST', '/v1/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['note.updated'] })
  console.log(`POST /v1/webhooks {"url":"http://127.0.0.1:${receiver.port}/hook","events":["note.updated"]} → ${hook.status}\n`)

  const read = () => api('GET', `/v1/notes/${id}/transcript?format=verbose_json`)
  const before = await read()
  const segments = before.body.segments as Segment[]
  const words = before.body.words as Word[]
  const wordsIn = (all: Word[], s: Segment) => all.filter(w => w.start >= s.start - 1e-3 && w.end <= s.end + 1e-3)

  // each segment against the turn it lies in; a segment is corrected only when it is its turn's only one
  const turnOf = (s: Segment) => turns.reduce((best, t) => (overlap(s, t) > overlap(s, best) ? t : best), turns[0]!)
  const candidates = segments.map(s => ({ s, turn: turnOf(s) })).filter(c => segments.filter(o => turnOf(o) === c.turn).length === 1)
  const misheard = (c: { s: Segment; turn: SpokenTurn }) => heardRight(tokens(c.turn.text), tokens(c.s.text)).filter(r => !r).length + Math.max(0, tokens(c.turn.text).length - tokens(c.s.text).length)
  const chosen = candidates.sort((a, b) => misheard(b) - misheard(a))[0]
  if (!chosen) throw new BenchFailure('no segment is the only one of its turn')
  const seg = chosen.s
  const truth = chosen.turn.text
  console.log(`${segments.length} segments; the most misheard of those that are a whole turn: segment ${seg.id} (${seg.start}-${seg.end} s, ${chosen.turn.speaker}), ${misheard(chosen)} words misheard`)
  console.log(`  heard: ${json(seg.text)}\n  said:  ${json(truth)}\n`)

  const srtCues = (srt: string) => srt.trim().split(/\n\n+/).map(c => c.split('\n')).filter(([, times]) => {
    const [a, b] = times!.split(' --> ').map(t => { const [h, m, s] = t.replace(',', '.').split(':').map(Number); return h! * 3600 + m! * 60 + s! })
    return a! < seg.end && b! > seg.start
  }).map(c => c.join('\n'))
  const diarizedOf = async () => (await api('GET', `/v1/notes/${id}/transcript?format=diarized_json`)).body.segments[seg.id]
  const srtBefore = srtCues((await api('GET', `/v1/notes/${id}/transcript?format=srt`)).text)
  const diarizedBefore = await diarizedOf()
  const heardWords = new Set(tokens(seg.text))
  const trueWords = new Set(tokens(truth))
  const wrongWord = [...heardWords].filter(w => !trueWords.has(w) && w.length > 3)
  const newWord = [...trueWords].filter(w => !heardWords.has(w) && w.length > 3)
  const found = async (q: string) => ((await api('GET', `/v1/notes?q=${encodeURIComponent(q)}`)).body.data as { id: string }[]).some(n => n.id === id)
  const searchBefore = await Promise.all([...newWord, ...wrongWord].map(async w => [w, await found(w)] as const))

  // the correction, sent with the version read (If-Match)
  const patched = await api('PATCH', `/v1/notes/${id}/segments/${seg.id}`, { text: truth }, { 'if-match': before.etag! })
  console.log(`PATCH /v1/notes/${id}/segments/${seg.id} {"text":${json(truth)}} If-Match: ${before.etag} → ${patched.status}, ETag ${patched.etag}; segment ${json(patched.body.segment)}\n`)
  const after = await read()
  const segAfter = (after.body.segments as Segment[])[seg.id]!
  const table = (ws: Word[]) => ws.map(w => `    ${w.start.toFixed(2).padStart(6)}-${w.end.toFixed(2).padEnd(6)} ${w.word.padEnd(12)} ${w.confidence === undefined ? '' : w.confidence.toFixed(2)}`).join('\n')
  console.log(`word times before (start-end s, word, confidence):\n${table(wordsIn(words, seg))}`)
  console.log(`word times after (timing: ${segAfter.timing}):\n${table(wordsIn(after.body.words, segAfter))}\n`)
  console.log(`SRT cues before:\n${srtBefore.join('\n\n')}\n`)
  console.log(`SRT cues after:\n${srtCues((await api('GET', `/v1/notes/${id}/transcript?format=srt`)).text).join('\n\n')}\n`)
  // search reads the title, summary and transcript: a misheard word also said elsewhere is still found there
  const noteNow = (await api('GET', `/v1/notes/${id}`)).body
  const elsewhere = new Set(tokens([noteNow.title, noteNow.summary, ...(await read()).body.segments.filter((s: Segment) => s.id !== seg.id).map((s: Segment) => s.text)].join(' ')))
  // a search word matches words it begins (q=budg finds budget), so "come" finds "comes"
  const also = (w: string) => [...elsewhere].find(x => x.startsWith(w))
  for (const [w, was] of searchBefore) console.log(`GET /v1/notes?q=${w}: ${newWord.includes(w) ? 'corrected word' : 'misheard word '} found before ${was}, after ${await found(w)}${also(w) ? `  (the note's title, summary or another segment has "${also(w)}")` : ''}`)
  console.log(`\ndiarized_json segment ${seg.id} before: ${json(diarizedBefore)}`)
  console.log(`diarized_json segment ${seg.id} after:  ${json(await diarizedOf())}\n`)

  for (let i = 0; i < 200 && !received.some(e => e.type === 'note.updated'); i++) await Bun.sleep(100)
  console.log(`note.updated webhook body: ${json(received.find(e => e.type === 'note.updated') ?? 'none received in 20 s')}\n`)

  // two people editing at once: both read the same version, both send it back as If-Match
  const read1 = await read()
  const other = (read1.body.segments as Segment[]).find(s => s.id !== seg.id)!
  const first = await api('PATCH', `/v1/notes/${id}/segments/${seg.id}`, { text: `${truth} Indeed.` }, { 'if-match': read1.etag! })
  const second = await api('PATCH', `/v1/notes/${id}/segments/${other.id}`, { text: `${other.text} too` }, { 'if-match': read1.etag! })
  console.log(`two edits, both with If-Match ${read1.etag}: first (segment ${seg.id}) → ${first.status} ETag ${first.etag}; second (segment ${other.id}) → ${second.status} ETag ${second.etag}`)
  console.log(`  second's body: ${json(second.body)}`)
  const again = await api('PATCH', `/v1/notes/${id}/segments/${other.id}`, { text: `${other.text} too` }, { 'if-match': second.etag! })
  const both = (await read()).body.segments as Segment[]
  console.log(`  the second sent again with If-Match ${second.etag} → ${again.status} ETag ${again.etag}; both kept: ${json(both[seg.id]!.text)} | ${json(both[other.id]!.text)}\n`)

  const revisions = (await api('GET', `/v1/notes/${id}/revisions`)).body.data
  console.log(`GET /v1/notes/${id}/revisions:`)
  for (const r of revisions) console.log(`  ${json(r)}`)
  const restored = await api('POST', `/v1/notes/${id}/revisions/0/restore`, {})
  console.log(`\nPOST /v1/notes/${id}/revisions/0/restore → ${restored.status} ${json(restored.body)} ETag ${restored.etag}`)
  const final = await read()
  const segFinal = (final.body.segments as Segment[])[seg.id]!
  console.log(`segment ${seg.id} after the restore: ${json(segFinal.text)} (the engine's: ${segFinal.text === seg.text}), timing ${segFinal.timing ?? 'none (as transcribed)'}; words ${json(wordsIn(final.body.words, segFinal).map(w => [w.word, w.start, w.end]))}`)
  console.log(`whole transcript equal to version 0's: ${final.body.transcript === before.body.transcript}`)
} finally {
  receiver.stop(true)
  await server.stop()
  await pg?.stop()
  dir.remove()
}

function overlap(a: { start: number; end: number }, b: { start: number; end: number }) {
  return Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start))
}
