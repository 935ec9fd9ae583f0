import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, ROOT, tempDir, until } from '../helpers/process'

/*
 * Runs the README as a newcomer would: every ```sh block, in order, in one bash, from the project
 * folder, against a real server started the way the README says (`bun run start` is
 * `bun run src/cli.ts serve`) on an empty home folder and a free port.
 *
 * Conventions the README follows (and this test reads):
 * - A ```sh block is run. A block preceded by `<!-- not run: reason -->` is not, and is reported here
 *   as a skipped test naming the reason (installing packages, the set-up commands themselves).
 *   Output shown for reading only is a ```console block, which is never run.
 * - A line `# → text` under a command: that command's output (stdout and stderr) contains `text`.
 * - Every command must exit 0.
 * - `BASE=http://127.0.0.1:8080` and `KEY=svc_live_…` are the two things a reader fills in: here the
 *   address becomes the test server's and the key the live key its first start printed.
 */

interface Command { line: number; text: string; expect: string[] }
interface Block { line: number; skip?: string; commands: Command[] }

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

function blocks(markdown: string, lang: string): Block[] {
  const lines = markdown.split('\n')
  const found: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```' + lang) continue
    const notRun = /^<!-- not run: (.+?) -->$/.exec(lines[i - 1] ?? '')
    const commands: Command[] = []
    let j = i + 1
    for (; j < lines.length && lines[j] !== '```'; j++) {
      const line = lines[j]!
      const expected = /^# → (.+)$/.exec(line)
      if (expected) {
        if (!commands.length) throw new Error(`README.md:${j + 1}: "# →" with no command above it`)
        commands.at(-1)!.expect.push(expected[1]!.trim())
        continue
      }
      if (!line.trim() || line.startsWith('#')) continue
      let text = line
      while (text.endsWith('\\') && j + 1 < lines.length) text += '\n' + lines[++j]!
      commands.push({ line: j + 1, text, expect: [] })
    }
    found.push({ line: i + 1, skip: notRun?.[1], commands })
    i = j
  }
  return found
}

const SH = blocks(README, 'sh')
const RUN = SH.filter(b => !b.skip).flatMap(b => b.commands)
const label = (c: Command) => `README.md:${c.line}: ${c.text.split('\n')[0]!.slice(0, 90)}`

let home: ReturnType<typeof tempDir>
let server: ReturnType<typeof Bun.spawn> | undefined
let serverOutput = ''
let port = 0
let liveKey = ''
const results: { code: number; output: string }[] = []

beforeAll(async () => {
  home = tempDir('notesvc-readme-')
  port = await freePort()
  // The reader's environment: a home folder of their own, nothing of the project's set.
  const env: Record<string, string | undefined> = { ...process.env, HOME: home.path, PORT: String(port) }
  delete env.XDG_DATA_HOME
  delete env.NOTESVC_DATA_DIR
  delete env.NOTESVC_METERING
  // A checkout whose ./data holds a database would be used instead of the home folder (as the README says).
  if (existsSync(join(ROOT, 'data', 'notesvc.db'))) env.NOTESVC_DATA_DIR = join(home.path, '.local/share/notesvc')
  server = Bun.spawn(['bun', 'run', 'src/cli.ts', 'serve'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) serverOutput += new TextDecoder().decode(chunk)
  }
  void collect(server.stdout as ReadableStream<Uint8Array>)
  void collect(server.stderr as ReadableStream<Uint8Array>)
  liveKey = await until('the first start to print the live key', () => /live key: +(\S+)/.exec(serverOutput)?.[1], 30_000)
  await until('the server to answer /v1/health', async () => (await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => null))?.ok, 30_000)

  // The reader's two values, filled in; then every command, its output and exit status kept apart.
  const script = RUN.map((c, i) => {
    const text = c.text.replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${port}`).replace(/^KEY=svc_live_\S*/, `KEY=${liveKey}`)
    return `{\n${text}\n} > "$OUT/${i}" 2>&1; echo $? > "$OUT/${i}.rc"`
  }).join('\n')
  writeFileSync(join(home.path, 'readme.sh'), script)
  const proc = Bun.spawn(['bash', join(home.path, 'readme.sh')], { cwd: ROOT, env: { ...env, OUT: home.path }, stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => proc.kill(), 150_000)
  await proc.exited
  clearTimeout(timer)
  RUN.forEach((_, i) => {
    const rc = join(home.path, `${i}.rc`)
    results.push({
      code: existsSync(rc) ? Number(readFileSync(rc, 'utf8').trim()) : -1,
      output: existsSync(join(home.path, String(i))) ? readFileSync(join(home.path, String(i)), 'utf8') : '',
    })
  })
}, 240_000)

afterAll(async () => {
  server?.kill()
  await server?.exited
  home?.remove()
})

describe('the README, run top to bottom', () => {
  test('it has a walk-through to run, with the two values a reader fills in', () => {
    expect(RUN.length).toBeGreaterThanOrEqual(15)
    expect(RUN.some(c => c.text === 'BASE=http://127.0.0.1:8080')).toBe(true)
    expect(RUN.some(c => /^KEY=svc_live_\S*/.test(c.text))).toBe(true)
    expect(RUN.some(c => c.text.includes('docs/examples/hello.wav'))).toBe(true)
  })

  test('the first start prints what the README says it prints', () => {
    const shown = blocks(README, 'console')[0]!.commands.flatMap(c => c.text.split('\n'))
    expect(shown.length).toBeGreaterThanOrEqual(6)
    for (const line of shown) {
      // "…" ends what the README abbreviates; /home/you and port 8080 are the reader's.
      const expected = line.split('…')[0]!.replace('/home/you', home.path).replace(':8080', `:${port}`).trimEnd()
      expect({ line, printed: serverOutput.includes(expected) }).toEqual({ line, printed: true })
    }
  })

  test('the shipped recording is small and is what its script makes', () => {
    const wav = readFileSync(join(ROOT, 'docs/examples/hello.wav'))
    expect(wav.length).toBeLessThan(300 * 1024)
    expect(wav.subarray(0, 4).toString()).toBe('RIFF')
    expect(readFileSync(join(ROOT, 'scripts/make-hello-wav.sh'), 'utf8')).toContain('docs/examples/hello.wav')
  })

  for (const block of SH.filter(b => b.skip)) {
    test.skip(`README.md:${block.line} not run (${block.skip}): ${block.commands.map(c => c.text.split(' ')[0]).join(', ')}`, () => {})
  }

  RUN.forEach((command, i) => {
    test(label(command), () => {
      const r = results[i]!
      expect({ command: command.text, exit: r.code, output: r.output.slice(-2000) }).toEqual({ command: command.text, exit: 0, output: r.output.slice(-2000) })
      for (const text of command.expect) expect({ expected: text, found: r.output.includes(text), output: r.output }).toEqual({ expected: text, found: true, output: r.output })
    })
  })
})
