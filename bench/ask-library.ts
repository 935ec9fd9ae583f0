#!/usr/bin/env bun
/**
 * POST /v1/questions (askLibrary) over a library of 10,000 notes, on SQLite and PostgreSQL, with the
 * builtin engine: the share of 30 questions whose first citation is a note that answers them (and
 * whose cited time range holds the moment it is said), and p50/p95 of one question at a time. See
 * bench/README.md.
 *
 *   bun run bench/ask-library.ts
 *   BENCH_NOTES=2000 BENCH_ROUNDS=3 BENCH_DATABASES=sqlite bun run bench/ask-library.ts
 *
 * The library (one account), seeded into SQLite through the notes repository, then copied into a
 * private PostgreSQL cluster by `notesvc db copy`'s own code:
 * - generated meetings: ~25 timed segments of three speakers each (~2,000 characters), sentences about
 *   40 people, 60 projects, 100 things and 30 actions, so every question's words are in many notes;
 *   in 24 of them one planted sentence answers one question (a person, an action, a thing that is
 *   rare elsewhere but not absent, a project, a day or a sum);
 * - real recordings' transcripts: the two-person recording of bench/lib/two-person.ts (espeak-ng host,
 *   LibriVox reader; its turns and times), what PocketSphinx heard of the spoken meeting and of the
 *   LibriVox clips (test/fixtures), and two typed notes (the meeting's script, a lecture): 6 questions.
 * Each back end gets a `notesvc serve` as shipped (NOTESVC_LLM=builtin, metering off); each question
 * is asked once to check its citation, then BENCH_ROUNDS more times, timed from send to the last byte.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyToPostgres } from '../src/db/copy'
import type { TranscriptSegment } from '../src/engines/asr/engine'
import { createIdGenerator } from '../src/ids'
import { notesRepoFor } from '../src/services'
import { LECTURE } from '../test/fixtures/lecture'
import { LIBRIVOX_HEARD } from '../test/fixtures/librivox-heard'
import { seededRandom } from '../test/fixtures/random'
import { MEETING_SCRIPT, MEETING_SPOKEN } from '../test/fixtures/spoken-meeting'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../test/helpers/postgres'
import { twoPersonRecording } from './lib/two-person'
import { seeding } from './list-notes'
import { BenchFailure, runBench, startLoggedNotesvc, stopServer, type LoggedServer } from './notesvc-process'

const NOTES = Number(process.env.BENCH_NOTES ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DATABASES = (process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',').map(s => s.trim())
const TARGET_SHARE = 0.8
const TARGET_P95_MS = 300

const PEOPLE = ['Maria', 'Tom', 'Lars', 'Anna', 'Priya', 'Olga', 'Kenji', 'Fatima', 'Diego', 'Elena', 'Hugo', 'Ines', 'Jonas', 'Karin', 'Luca', 'Mei', 'Nadia', 'Oscar', 'Paula', 'Quentin',
  'Rosa', 'Sven', 'Tariq', 'Ulla', 'Victor', 'Wanda', 'Xavier', 'Yusuf', 'Zoe', 'Amir', 'Bea', 'Carlos', 'Dana', 'Emil', 'Frida', 'Gustav', 'Hana', 'Ivan', 'Julia', 'Kofi']
const PROJECTS = ['Atlas', 'Beacon', 'Cobalt', 'Delta', 'Ember', 'Falcon', 'Granite', 'Harbor', 'Iris', 'Juniper', 'Kestrel', 'Lumen', 'Meridian', 'Nimbus', 'Orchid', 'Pioneer', 'Quartz', 'Raven',
  'Sierra', 'Tundra', 'Umbra', 'Vertex', 'Willow', 'Xenon', 'Yarrow', 'Zephyr', 'Aurora', 'Basalt', 'Cedar', 'Dune', 'Echo', 'Fjord', 'Glacier', 'Horizon', 'Indigo', 'Jasper', 'Krypton', 'Lotus',
  'Mistral', 'Nova', 'Onyx', 'Prism', 'Quasar', 'Ridge', 'Sable', 'Tide', 'Ursa', 'Vega', 'Wren', 'Yukon', 'Zenith', 'Alder', 'Birch', 'Comet', 'Drift', 'Elm', 'Flint', 'Grove', 'Heron', 'Isle']
const THINGS = ['invoices', 'brochures', 'laptops', 'contracts', 'slides', 'banners', 'chairs', 'desks', 'licences', 'badges', 'posters', 'tickets', 'samples', 'drafts', 'reports', 'forms', 'labels',
  'pallets', 'crates', 'cables', 'monitors', 'printers', 'routers', 'keyboards', 'headsets', 'cameras', 'tablets', 'phones', 'chargers', 'batteries', 'lamps', 'shelves', 'lockers', 'mugs', 'pens',
  'folders', 'binders', 'stickers', 'flyers', 'mailers', 'surveys', 'quotes', 'orders', 'receipts', 'budgets', 'plans', 'charts', 'maps', 'manuals', 'guides', 'videos', 'photos', 'logos', 'fonts',
  'templates', 'mockups', 'prototypes', 'wireframes', 'tests', 'builds', 'releases', 'patches', 'backups', 'accounts', 'passwords', 'domains', 'certificates', 'mailboxes', 'calendars', 'rooms',
  'vans', 'bikes', 'uniforms', 'gloves', 'helmets', 'boots', 'tents', 'tables', 'screens', 'speakers', 'microphones', 'projectors', 'whiteboards', 'markers', 'envelopes', 'stamps', 'parcels',
  'invitations', 'menus', 'snacks', 'drinks', 'gifts', 'awards', 'trophies', 'medals', 'scarves', 'umbrellas', 'bottles', 'bags', 'boxes']
/** things said rarely in the generated meetings (each in about 0.5% of them), and in a planted answer */
const RARE = ['turbines', 'hydrants', 'kiosks', 'gazebos', 'trellises', 'aquariums', 'telescopes', 'harpsichords', 'skylights', 'turnstiles', 'beehives', 'sundials', 'chandeliers', 'kilns',
  'lanterns', 'canoes', 'easels', 'fountains', 'greenhouses', 'hammocks', 'igloos', 'jukeboxes', 'kayaks', 'lighthouses']
const ACTIONS = ['order', 'review', 'send', 'fix', 'paint', 'print', 'check', 'update', 'ship', 'sign', 'test', 'install', 'repair', 'clean', 'pack', 'label', 'approve', 'draft', 'book', 'move',
  'replace', 'inspect', 'assemble', 'deliver', 'archive', 'translate', 'calibrate', 'insure', 'polish', 'survey']
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'the end of the month', 'next week', 'the first of June', 'the spring', 'the autumn']
const KINDS = ['sync', 'review', 'planning', 'standup', 'retro', 'kickoff']

interface Question {
  question: string
  /** the keys of the notes that answer it (their ids once seeded), and when it is said in each, in seconds (null in a typed note) */
  right: Record<string, number | null>
}

type Choose = <T>(xs: readonly T[]) => T

/** The project a rare thing's planted answer names (plantedFacts): the generated sentences never pair them, so each question has one right note. */
const plantedProject = (rare: number) => PROJECTS[(rare * 11) % PROJECTS.length]!

function generatedSentence(pick: Choose, rand: () => number): string {
  const rare = rand() < 0.0048 ? Math.floor(rand() * RARE.length) : -1
  const o = rare >= 0 ? RARE[rare]! : pick(THINGS)
  let proj = pick(PROJECTS)
  while (rare >= 0 && proj === plantedProject(rare)) proj = pick(PROJECTS)
  const p = pick(PEOPLE), a = pick(ACTIONS), d = pick(DAYS)
  switch (Math.floor(rand() * 6)) {
    case 0: return `${p} will ${a} the ${o} for ${proj} by ${d}.`
    case 1: return `The ${o} for ${proj} will cost ${2 + Math.floor(rand() * 90)} thousand euros.`
    case 2: return `We decided to ${a} the ${o} before ${d}, ${p} agreed.`
    case 3: return `${p} says the ${o} for ${proj} are not ready yet.`
    case 4: return `Can someone ${a} the ${o}? ${p} will look into it.`
    default: return `Last time ${p} and ${pick(PEOPLE)} talked about the ${o} and the ${pick(THINGS)}.`
  }
}

/** ~25 timed segments of speakers A–C, ~6 s each. */
function meetingSegments(sentences: string[]): TranscriptSegment[] {
  let at = 0
  return sentences.map((text, i) => {
    const seconds = Math.max(2, Math.round(text.length / 14 * 10) / 10)
    const s = { start: Math.round(at * 100) / 100, end: Math.round((at + seconds) * 100) / 100, text, speaker: 'ABC'[i % 3]! }
    at += seconds + 0.4
    return s
  })
}

/** The 24 planted facts: one sentence in one generated meeting, and the question it answers. */
function plantedFacts(pick: Choose, rand: () => number): { sentence: string; question: string }[] {
  return RARE.map((o, i) => {
    const p = PEOPLE[i % PEOPLE.length]!, a = ACTIONS[(i * 7) % ACTIONS.length]!, proj = plantedProject(i), d = pick(DAYS)
    switch (i % 3) {
      case 0: return { sentence: `${p} will ${a} the ${o} for ${proj} by ${d}.`, question: `Who will ${a} the ${o} for ${proj}?` }
      case 1: return { sentence: `${p} will ${a} the ${o} for ${proj} by ${d}.`, question: `By when does ${p} ${a} the ${o}?` }
      default: {
        const cost = 100 + Math.floor(rand() * 800)
        return { sentence: `The ${o} for ${proj} will cost ${cost} thousand euros, ${p} said.`, question: `How much will the ${o} for ${proj} cost?` }
      }
    }
  })
}

interface Seeded { key: string; ids: Record<string, string>; questions: Question[] }

async function seedAskLibrary(dataDir: string, size: number, work: string): Promise<Seeded> {
  return seeding(dataDir, async ({ store, key, account }) => {
    const rand = seededRandom(size + 33)
    const pick: Choose = xs => xs[Math.floor(rand() * xs.length)]!
    const facts = plantedFacts(pick, rand)
    const plantedAt = new Map<number, number>()
    while (plantedAt.size < facts.length) {
      const i = Math.floor(rand() * size)
      if (!plantedAt.has(i)) plantedAt.set(i, plantedAt.size)
    }
    const questions: Question[] = []
    let noteTime = 0
    const noteIds = createIdGenerator(() => noteTime)
    const end = Date.now()
    const step = (3 * 365 * 24 * 3600 * 1000) / size
    const notes = notesRepoFor(store)
    const ids: Record<string, string> = {}
    const insert = async (keyName: string, title: string, text: string, segments: TranscriptSegment[] | null, type: string) => {
      const id = noteIds.next('note')
      ids[keyName] = id
      await notes.insert({
        id, account_id: account.id, sandbox: 0, folder_id: null, title, summary: text.slice(0, 300), original_transcription: text,
        structured_content: null, transcript_segments: segments ? JSON.stringify(segments) : null, status: 'Done', processing_stage: null, type, style_id: 'note', language: 'en',
        is_pinned: 0, source: 'api', error_code: null, error_message: null, date_created: new Date(noteTime).toISOString(), updated_at: new Date(noteTime).toISOString(),
      })
    }
    await store.transaction(async () => {
      for (let i = 0; i < size; i++) {
        noteTime = Math.round(end - (size - i) * step + rand() * step)
        const sentences = Array.from({ length: 22 + Math.floor(rand() * 6) }, () => generatedSentence(pick, rand))
        const fact = plantedAt.get(i)
        const where = Math.floor(rand() * sentences.length)
        if (fact !== undefined) sentences[where] = facts[fact]!.sentence
        const segments = meetingSegments(sentences)
        await insert(`generated ${i}`, `${pick(PROJECTS)} ${pick(KINDS)}`, sentences.join(' '), segments, 'audio')
        if (fact !== undefined) questions[fact] = { question: facts[fact]!.question, right: { [`generated ${i}`]: segments[where]!.start } }
      }
      // the real recordings' transcripts, the newest notes
      noteTime = end
      const turns = twoPersonRecording(work).turns
      const twoPerson = turns.map(t => ({ start: Math.round(t.start * 100) / 100, end: Math.round(t.end * 100) / 100, text: t.text, speaker: t.speaker === turns[0]!.speaker ? 'A' : 'B' }))
      await insert('reading group', 'Reading group, chapter one', twoPerson.map(s => s.text).join(' '), twoPerson, 'audio')
      await insert('spoken meeting', 'Launch meeting (recorded)', MEETING_SPOKEN.map(s => s.text).join(' '), MEETING_SPOKEN, 'audio')
      const heard = LIBRIVOX_HEARD.map(({ start, end, text }) => ({ start, end, text }))
      await insert('librivox', 'Sense and Sensibility, reading', heard.map(s => s.text).join(' '), heard, 'audio')
      await insert('meeting script', 'Launch meeting (typed notes)', MEETING_SCRIPT, null, 'import')
      await insert('lecture', 'Biology lecture', LECTURE, null, 'import')
      const said = (segments: readonly { start: number; text: string }[], words: string) => segments.find(s => s.text.includes(words))!.start
      // the reading group's reader reads the LibriVox clips, and the typed notes are of the recorded meeting: each answer is in two notes
      questions.push(
        { question: 'Who will send the next chapter to the group?', right: { 'reading group': said(twoPerson, 'next chapter') } },
        { question: 'Was he an ill disposed young man?', right: { 'reading group': said(twoPerson, 'ill disposed young man') } },
        { question: 'What happens to the release notes?', right: { 'spoken meeting': said(MEETING_SPOKEN, 'release notes'), 'meeting script': null } },
        { question: 'How much was in his power to do for them?', right: { librivox: said(heard, 'power'), 'reading group': said(twoPerson, 'power') } },
        { question: 'What is the budget for the new servers this quarter?', right: { 'meeting script': null } },
        { question: 'How long does the exam last?', right: { lecture: null } },
      )
    })
    return { key, ids, questions }
  })
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

interface Citation { noteId: string; start: number | null; end: number | null }

/** Each question once (its first citation checked), then ROUNDS more times, timed. */
async function measure(s: LoggedServer, seeded: Seeded) {
  const ask = async (question: string) => {
    const started = performance.now()
    const res = await fetch(`${s.base}/v1/questions`, { method: 'POST', headers: { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ question }) })
    const body = await res.text()
    const ms = performance.now() - started
    if (res.status !== 200) throw new BenchFailure(`${s.name}: POST /v1/questions ${JSON.stringify(question)} answered ${res.status}: ${body.slice(0, 300)}`)
    return { ms, answer: JSON.parse(body) as { answer: string; citations: Citation[] } }
  }
  let rightNote = 0
  let rightTime = 0
  const misses: string[] = []
  for (const q of seeded.questions) {
    const { answer } = await ask(q.question)
    const first = answer.citations[0]
    const key = first && Object.entries(seeded.ids).find(([, id]) => id === first.noteId)?.[0]
    const at = key === undefined ? undefined : q.right[key]
    const noteRight = at !== undefined
    const timeRight = noteRight && (at === null ? first!.start === null : first!.start !== null && first!.start <= at && at < first!.end!)
    if (noteRight) rightNote++
    if (timeRight) rightTime++
    else misses.push(`    ${q.question} -> ${first ? `${key} at ${first.start}` : 'no citation'} (want ${Object.entries(q.right).map(([k, t]) => `${k} at ${t}`).join(' or ')}): ${answer.answer.slice(0, 100)}`)
  }
  const times: number[] = []
  for (let r = 0; r < ROUNDS; r++) for (const q of seeded.questions) times.push((await ask(q.question)).ms)
  times.sort((a, b) => a - b)
  return { rightNote: rightNote / seeded.questions.length, rightTime: rightTime / seeded.questions.length, p50: percentile(times, 50), p95: percentile(times, 95), misses }
}

async function main() {
  if (!Number.isInteger(NOTES) || NOTES < 100) throw new BenchFailure(`BENCH_NOTES=${process.env.BENCH_NOTES}: a whole number of at least 100`)
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new BenchFailure(`BENCH_ROUNDS=${process.env.BENCH_ROUNDS}: a whole number of at least 1`)
  const work = mkdtempSync(join(tmpdir(), 'notesvc-bench-ask-'))
  const servers: LoggedServer[] = []
  let pg: PostgresCluster | null = null
  const load = () => loadavg().map(x => x.toFixed(1)).join(' ')
  try {
    const lines = [`ask-library benchmark: ${NOTES} generated notes + 5 real transcripts (one account), 30 questions, ${ROUNDS} timed rounds after one checked, builtin engine, ${navigator.hardwareConcurrency} cores, bun ${Bun.version}, load average at start ${load()}`]
    const sqliteDir = join(work, 'sqlite')
    mkdirSync(sqliteDir)
    let t = performance.now()
    const seeded = await seedAskLibrary(sqliteDir, NOTES, work)
    process.stderr.write(`seeded into SQLite in ${((performance.now() - t) / 1000).toFixed(1)} s\n`)
    const configs: { name: string; env: Record<string, string> }[] = []
    const env = { NOTESVC_LLM: 'builtin', NOTESVC_METERING: 'off' }
    if (DATABASES.includes('sqlite')) configs.push({ name: 'sqlite', env: { ...env, NOTESVC_DATA_DIR: sqliteDir } })
    const pgSkip = DATABASES.includes('postgres') ? postgresUnavailable() : 'not asked for'
    if (pgSkip === null) {
      pg = await startPostgres()
      const url = await pg.createDatabase('notesvc_ask')
      t = performance.now()
      await copyToPostgres({ sqlitePath: join(sqliteDir, 'notesvc.db'), targetUrl: url })
      process.stderr.write(`copied into PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s\n`)
      const dir = join(work, 'pg')
      mkdirSync(dir)
      configs.push({ name: 'postgres', env: { ...env, NOTESVC_DATA_DIR: dir, NOTESVC_DATABASE_URL: url } })
    } else lines.push(`PostgreSQL: skipped (${pgSkip})`)
    lines.push('', `${'back end'.padEnd(10)}${'first citation: right note'.padStart(28)}${'right note and time'.padStart(22)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}`)
    const verdicts: string[] = []
    const missed: string[] = []
    for (const c of configs) {
      const s = await startLoggedNotesvc(c.name, c.env, join(work, `${c.name}.log`))
      servers.push(s)
      const r = await measure(s, seeded)
      await stopServer(s)
      lines.push(`${c.name.padEnd(10)}${r.rightNote.toFixed(2).padStart(28)}${r.rightTime.toFixed(2).padStart(22)}${r.p50.toFixed(1).padStart(10)}${r.p95.toFixed(1).padStart(10)}`)
      verdicts.push(`  ${c.name}: right first citations ${r.rightNote.toFixed(2)} -> target >= ${TARGET_SHARE}: ${r.rightNote >= TARGET_SHARE ? 'PASS' : 'MISS'}; p95 ${r.p95.toFixed(1)} ms -> target <= ${TARGET_P95_MS} ms: ${r.p95 <= TARGET_P95_MS ? 'PASS' : 'MISS'}`)
      if (r.misses.length) missed.push(`  ${c.name}, first citations not at the right note and time:`, ...r.misses)
    }
    lines.push('', `load average at the end ${load()}`, ...verdicts, ...missed)
    console.log(lines.join('\n'))
  } finally {
    for (const s of servers) await stopServer(s)
    await pg?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runBench(import.meta, main)
