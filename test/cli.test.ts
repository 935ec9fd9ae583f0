import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { firstStartKey, freePort, ROOT, run, startServer, tempDir } from './helpers/process'

const dir = tempDir('notesvc-cli-')
afterAll(() => dir.remove())
const env = { NOTESVC_DATA_DIR: dir.path }
const cli = (...args: string[]) => run(['bun', 'run', 'src/cli.ts', ...args], { env })

describe('keys and accounts', () => {
  let liveKey = ''

  test('keys create prints the key alone on stdout and creates the account', async () => {
    const r = await cli('keys', 'create', '--email', 'ann@example.com', '--name', 'laptop')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^svc_live_[A-Za-z0-9]{32}\n$/)
    liveKey = r.stdout.trim()
    const sb = await cli('keys', 'create', '--email', 'ann@example.com', '--sandbox', '--scopes', 'notes:read,usage:read')
    expect(sb.stdout).toMatch(/^svc_test_[A-Za-z0-9]{32}\n$/)
  })

  test('keys list shows both keys by their start, never the whole key or its hash', async () => {
    const r = await cli('keys', 'list', '--email', 'ann@example.com')
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toContain(`${liveKey.slice(0, 17)}…`)
    expect(lines[0]).toContain('live')
    expect(lines[0]).toContain('laptop')
    expect(lines[1]).toContain('sandbox')
    expect(lines[1]).toContain('notes:read,usage:read')
    expect(r.stdout).not.toContain(liveKey)
  })

  test('the key is stored only as a hash', async () => {
    const db = await Bun.file(`${dir.path}/notesvc.db`).arrayBuffer()
    expect(Buffer.from(db).includes(Buffer.from(liveKey))).toBe(false)
  })

  test('accounts credit and plan change the balance', async () => {
    const c = await cli('accounts', 'credit', '--email', 'ann@example.com', '--credits', '25')
    expect(c.code).toBe(0)
    expect(c.stdout).toContain('prepaid 25')
    expect(c.stdout).toContain('total 85')
    const p = await cli('accounts', 'plan', '--email', 'ann@example.com', '--plan', 'pro')
    expect(p.stdout).toContain('plan pro')
    expect(p.stdout).toContain('total 2025')
  })

  test('keys revoke by the visible start', async () => {
    const r = await cli('keys', 'revoke', liveKey.slice(0, 17))
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('revoked')
  })

  test.each([
    [['keys', 'create'], '--email is required'],
    [['keys', 'create', '--email', 'not-an-email'], 'not an email address'],
    [['keys', 'create', '--email', 'a@b.c', '--scopes', 'notes:reed'], 'unknown scope notes:reed'],
    [['accounts', 'credit', '--email', 'nobody@example.com', '--credits', '5'], 'create one with: bun run cli keys create --email nobody@example.com'],
    [['accounts', 'credit', '--email', 'ann@example.com', '--credits', '-3'], 'positive whole number'],
    [['keys', 'revoke', 'key_nope'], 'list keys with: bun run cli keys list --email <email>'],
    [['frobnicate'], 'unknown command'],
  ])('%p fails with exit 2 and says what to do: %s', async (args, message) => {
    const r = await cli(...args)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(message)
  })
})

describe('doctor and models', () => {
  test('doctor prints one line per check, and the command that fixes what is missing', async () => {
    // a model host that answers: a missing model is fixed with `models pull`
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null, { status: 302 }) })
    const host = { url: `http://127.0.0.1:${server.port}` }
    const r = await run(['bun', 'run', 'src/cli.ts', 'doctor'], {
      env: { ...env, NOTESVC_MODELS_DIR: dir.path, NOTESVC_FFMPEG: '/nonexistent/ffmpeg', OLLAMA_HOST: 'http://127.0.0.1:9', NOTESVC_LLM: 'auto', NOTESVC_MODELS_URL: host.url },
    })
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split('\n')
    const line = (name: string) => lines.find(l => l.includes(` ${name} `)) ?? ''
    expect(line('database')).toStartWith('ok')
    expect(line('ffmpeg')).toStartWith('missing')
    expect(line('ffmpeg')).toContain('fix: apt-get install ffmpeg')
    expect(line('whisper model')).toContain('fix: bun run cli models pull base.en')
    // both speech engines, and the one NOTESVC_ASR=auto uses (PocketSphinx's Debian packages are installed here)
    expect(line('pocketsphinx')).toStartWith('ok')
    // PocketSphinx works, but is said plainly to be far less accurate, with figures and the way to Whisper
    expect(line('speech engine')).toStartWith('warn')
    expect(line('speech engine')).toContain('PocketSphinx is far less accurate than Whisper')
    expect(line('speech engine')).toContain('37% word error rate')
    expect(line('speech engine')).toContain('bun run cli models import ggml-base.en.bin')
    expect(line('llm engine')).toContain('builtin; Ollama not reachable at http://127.0.0.1:9')
    server.stop(true)
  })

  test('doctor recommends models import when the model host cannot be reached', async () => {
    const r = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { ...env, NOTESVC_MODELS_DIR: dir.path, NOTESVC_LLM: 'builtin', NOTESVC_MODELS_URL: 'http://127.0.0.1:9' } })
    const line = r.stdout.split('\n').find(l => l.includes(' whisper model ')) ?? ''
    expect(line).toStartWith('missing')
    expect(line).toContain('127.0.0.1:9 cannot be reached')
    expect(line).toContain('fix: on a host without internet, download http://127.0.0.1:9/ggml-base.en.bin on another machine')
    expect(line).toContain('bun run cli models import ggml-base.en.bin')
    expect(line).not.toContain('models pull')
  })

  test('doctor says when there is no speech engine at all, with both fixes', async () => {
    // PocketSphinx's program is looked up on PATH: an empty PATH is a host without the package
    const empty = tempDir('notesvc-empty-path-')
    try {
      const r = await run([process.execPath, 'run', 'src/cli.ts', 'doctor'], { env: { ...env, NOTESVC_MODELS_DIR: empty.path, NOTESVC_LLM: 'builtin', PATH: empty.path } })
      expect(r.code).toBe(0)
      const line = (name: string) => r.stdout.split('\n').find(l => l.includes(` ${name} `)) ?? ''
      expect(line('whisper model')).toStartWith('missing')
      expect(line('pocketsphinx')).toStartWith('missing')
      expect(line('pocketsphinx')).toContain('fix: apt-get install pocketsphinx pocketsphinx-en-us')
      expect(line('speech engine')).toStartWith('missing')
      expect(line('speech engine')).toContain('`bun run cli models pull base.en` or `apt-get install pocketsphinx pocketsphinx-en-us`')
    } finally {
      empty.remove()
    }
  })

  test('doctor exits 1 when the server could not run (storage unusable)', async () => {
    const r = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { ...env, NOTESVC_STORAGE: 's3', NOTESVC_LLM: 'builtin' } })
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('NOTESVC_S3_BUCKET')
  })

  test('models list names the files in the models folder', async () => {
    const models = tempDir('notesvc-models-')
    try {
      await Bun.write(`${models.path}/ggml-tiny.en.bin`, 'x'.repeat(10))
      const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'list'], { env: { NOTESVC_MODELS_DIR: models.path } })
      expect(r.stdout).toBe(`tiny.en\t10\t${models.path}/ggml-tiny.en.bin\n`)
    } finally {
      models.remove()
    }
  })
})

describe('serve', () => {
  test('first start creates the owner and prints one live and one sandbox key, which work at once', async () => {
    const d = tempDir('notesvc-serve-')
    try {
      const port = await freePort()
      const server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port}/v1/health`, { env: { NOTESVC_DATA_DIR: d.path, PORT: String(port) } })
      try {
        const reader = server.proc.stdout.getReader()
        let stdout = ''
        while (!/sandbox key: \S+\n/.test(stdout)) stdout += new TextDecoder().decode((await reader.read()).value)
        const live = /live key: +(svc_live_\S+)/.exec(stdout)![1]!
        const sandbox = /sandbox key: +(svc_test_\S+)/.exec(stdout)![1]!
        for (const key of [live, sandbox]) {
          const res = await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${key}` } })
          expect(res.status).toBe(200)
        }
      } finally {
        await server.stop()
      }
      // a second start prints no keys
      const port2 = await freePort()
      const again = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port2}/v1/health`, { env: { NOTESVC_DATA_DIR: d.path, PORT: String(port2) } })
      await again.stop()
      expect(await new Response(again.proc.stdout).text()).toBe('')
    } finally {
      d.remove()
    }
  })

  // Fails if the first start quotes fixed figures (it said "10 processing calls a minute" whatever
  // NOTESVC_RATE_LIMITS said): the line names the limits of this start, and the key is held to them.
  test('the first start quotes the rate limits in force, metered or not', async () => {
    const cases: { env: Record<string, string>; line: string; readLimit: string }[] = [
      {
        env: { NOTESVC_RATE_LIMITS: 'read=500,write=40,processing=3' },
        line: 'metering: on (credits per minute of media); requests a minute per key: 500 reads, 40 writes, 3 processing calls (NOTESVC_RATE_LIMITS); for a single-user install start with NOTESVC_METERING=off',
        readLimit: '500',
      },
      {
        env: { NOTESVC_RATE_LIMITS: 'read=70,write=9,processing=2', NOTESVC_METERING: 'off' },
        line: 'metering: off (NOTESVC_METERING=off): nothing is charged and processing calls are not rate-limited; requests a minute per key: 70 reads, 9 writes (NOTESVC_RATE_LIMITS); unset NOTESVC_METERING to meter again',
        readLimit: '70',
      },
    ]
    for (const c of cases) {
      const d = tempDir('notesvc-serve-limits-')
      try {
        const port = await freePort()
        const server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port}/v1/health`, { env: { NOTESVC_DATA_DIR: d.path, NOTESVC_LLM: 'builtin', PORT: String(port), ...c.env } })
        let limit: string | null = null
        try {
          const live = await firstStartKey(server.proc.stdout)
          limit = (await fetch(`http://127.0.0.1:${port}/v1/notes`, { headers: { authorization: `Bearer ${live}` } })).headers.get('x-ratelimit-limit')
        } finally {
          await server.stop()
        }
        const said = (await new Response(server.proc.stderr).text()).split('\n').filter(l => l.startsWith('metering: '))
        expect({ said, limit }).toEqual({ said: [c.line], limit: c.readLimit })
      } finally {
        d.remove()
      }
    }
  }, 30_000)

  test('with no speech engine installed, start-up logs one warning with both fixes and health reports asr none', async () => {
    const d = tempDir('notesvc-serve-none-')
    try {
      const port = await freePort()
      // no Whisper model in the models folder, and no pocketsphinx_continuous on an empty PATH
      const env = { NOTESVC_DATA_DIR: d.path, NOTESVC_MODELS_DIR: d.path, NOTESVC_LLM: 'builtin', PATH: d.path, PORT: String(port) }
      const server = await startServer([process.execPath, 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port}/v1/health`, { env })
      let health: unknown
      try {
        health = await (await fetch(`http://127.0.0.1:${port}/v1/health`)).json()
      } finally {
        await server.stop()
      }
      expect(health).toEqual({ status: 'ok', version: '1.1.0', engines: { asr: 'none', llm: 'builtin', diarization: 'builtin' } })
      const logs = (await new Response(server.proc.stderr).text()).split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l))
      const warnings = logs.filter(l => l.level === 'warn')
      expect(warnings).toHaveLength(1)
      expect(warnings[0].msg).toContain('no speech engine')
      expect(warnings[0].detail).toContain('`bun run cli models pull base.en` or `apt-get install pocketsphinx pocketsphinx-en-us`')
    } finally {
      d.remove()
    }
  })

  test('a bad setting stops start-up with a message naming the variable', async () => {
    const r = await run(['bun', 'run', 'src/cli.ts', 'serve'], { env: { NOTESVC_STORAGE: 'ftp', NOTESVC_DATA_DIR: dir.path } })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('NOTESVC_STORAGE=ftp is not valid; use one of: disk, s3')
  })
})

describe('the commands hints print work when pasted', () => {
  /** `Run X help for the commands` → X */
  const printedName = (stderr: string) => /Run (.+) help for the commands/.exec(stderr)?.[1]

  test('from source in the project folder: bun run cli, in help, mistakes and hints', async () => {
    const help = await cli('help')
    expect(help.stdout).toContain('Usage: bun run cli <command> [flags]')
    const wrong = await cli('frobnicate')
    expect(printedName(wrong.stderr)).toBe('bun run cli')
    const models = tempDir('notesvc-no-models-')
    try {
      const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'list'], { env: { NOTESVC_MODELS_DIR: models.path } })
      expect(r.stderr).toBe(`no models in ${models.path}; get one with: bun run cli models pull base.en\n`)
    } finally {
      models.remove()
    }
    const pasted = await run(['sh', '-c', 'bun run cli version'])
    expect(pasted.stdout).toBe('1.1.0\n')
  })

  test('from source in another folder: the script by its path, since bun run cli would not find it', async () => {
    const elsewhere = tempDir('notesvc-elsewhere-')
    try {
      const wrong = await run(['bun', `${ROOT}/src/cli.ts`, 'frobnicate'], { cwd: elsewhere.path })
      expect(printedName(wrong.stderr)).toBe(`bun ${ROOT}/src/cli.ts`)
      const pasted = await run(['sh', '-c', `${printedName(wrong.stderr)} version`], { cwd: elsewhere.path })
      expect(pasted.stdout).toBe('1.1.0\n')
      expect((await run(['sh', '-c', 'bun run cli version'], { cwd: elsewhere.path })).code).not.toBe(0)
    } finally {
      elsewhere.remove()
    }
  })
})

describe('worker', () => {
  test('help names it; with NOTESVC_WORKERS=0 it refuses to start (exit 2) and says what to run instead', async () => {
    expect((await cli('help')).stdout).toMatch(/^ {2}worker {10,}run NOTESVC_WORKERS job workers/m)
    const r = await run(['bun', 'run', 'src/cli.ts', 'worker'], { env: { ...env, NOTESVC_WORKERS: '0' } })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('`worker` needs 1 to 64')
    expect(r.stderr).toContain('serve with NOTESVC_WORKERS=0')
  })

  test('without NOTESVC_WORKERS it runs one job at a time (serve would run twice the slots)', async () => {
    const d = tempDir('notesvc-worker-default-')
    try {
      const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'worker'], { cwd: ROOT, env: { ...process.env, NOTESVC_WORKERS: '', NOTESVC_ASR_SLOTS: '2', NOTESVC_DATA_DIR: d.path, NOTESVC_LLM: 'builtin' }, stderr: 'pipe', stdout: 'pipe' })
      const reader = proc.stderr.getReader()
      let log = ''
      while (!log.includes('notesvc worker started')) log += new TextDecoder().decode((await reader.read()).value)
      proc.kill('SIGINT')
      await proc.exited
      const started = log.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l)).find(m => m.msg === 'notesvc worker started')
      expect(started.workers).toBe(1)
    } finally {
      d.remove()
    }
  }, 30_000)

  test('logs its start and, on SIGINT, its stop; exits 0 and leaves no live worker behind', async () => {
    const d = tempDir('notesvc-worker-cli-')
    try {
      const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'worker', '--workers', '2'], { cwd: ROOT, env: { ...process.env, NOTESVC_DATA_DIR: d.path, NOTESVC_LLM: 'builtin' }, stderr: 'pipe', stdout: 'pipe' })
      const reader = proc.stderr.getReader()
      let log = ''
      while (!log.includes('notesvc worker started')) log += new TextDecoder().decode((await reader.read()).value)
      const doctor = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { NOTESVC_DATA_DIR: d.path, NOTESVC_LLM: 'builtin' } })
      const workersLine = doctor.stdout.split('\n').find(l => l.includes(' job workers ')) ?? ''
      expect(workersLine).toContain(`1 live: wrk_`)
      expect(workersLine).toContain(`pid ${proc.pid} on `)
      expect(workersLine).toContain('2 at once')
      proc.kill('SIGINT')
      expect(await proc.exited).toBe(0)
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        log += new TextDecoder().decode(value)
      }
      const msgs = log.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l))
      expect(msgs.find(m => m.msg === 'notesvc worker started')).toMatchObject({ workers: 2, pid: proc.pid, leaseSeconds: 60, dataDir: d.path })
      expect(msgs.at(-1)).toMatchObject({ msg: 'notesvc worker stopped' })
      const after = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { NOTESVC_DATA_DIR: d.path, NOTESVC_LLM: 'builtin' } })
      expect(after.stdout).toContain('none live: uploads wait in the queue')
    } finally {
      d.remove()
    }
  }, 30_000)

  test('with NOTESVC_METRICS_TOKEN and NOTESVC_METRICS_PORT it serves its own GET /metrics there, behind the token', async () => {
    const d = tempDir('notesvc-worker-metrics-')
    const port = await freePort()
    const token = 'worker-metrics-token-0123456789'
    try {
      const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'worker'], { cwd: ROOT, env: { ...process.env, NOTESVC_DATA_DIR: d.path, NOTESVC_LLM: 'builtin', NOTESVC_METRICS_TOKEN: token, NOTESVC_METRICS_PORT: String(port) }, stderr: 'pipe', stdout: 'pipe' })
      const reader = proc.stderr.getReader()
      let log = ''
      while (!log.includes('notesvc worker started')) log += new TextDecoder().decode((await reader.read()).value)
      const url = `http://127.0.0.1:${port}/metrics`
      expect(log.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l)).find(m => m.msg === 'notesvc worker started').metrics).toBe(url)
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
      expect(ok.status).toBe(200)
      const text = await ok.text()
      expect(text).toContain('notesvc_jobs_total{outcome="done"} 0')
      expect(text).toContain('notesvc_queue_jobs{queue="upload_jobs",state="queued"} 0')
      const wrong = await fetch(url, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })
      expect(wrong.status).toBe(401)
      expect(((await wrong.json()) as any).error.code).toBe('invalid_token')
      expect((await fetch(`http://127.0.0.1:${port}/v1/notes`)).status).toBe(404)
      proc.kill('SIGINT')
      expect(await proc.exited).toBe(0)
    } finally {
      d.remove()
    }
  }, 30_000)
})

describe('one data folder every command finds', () => {
  /** A user with an empty home folder: no NOTESVC_DATA_DIR, no XDG_DATA_HOME (empty is unset). */
  const homeEnv = (home: string) => ({ HOME: home, XDG_DATA_HOME: '', NOTESVC_DATA_DIR: '', NOTESVC_LLM: 'builtin' })
  const cliIn = (cwd: string, env: Record<string, string>, ...args: string[]) => run(['bun', 'run', `${ROOT}/src/cli.ts`, ...args], { cwd, env })

  test('from an empty home: serve in one folder, then doctor and keys list in another find its database', async () => {
    const home = tempDir('notesvc-home-')
    try {
      const folder = `${home.path}/.local/share/notesvc`
      const [checkout, elsewhere] = [`${home.path}/checkout`, `${home.path}/elsewhere`]
      mkdirSync(checkout)
      mkdirSync(elsewhere)
      const port = await freePort()
      const env = { ...homeEnv(home.path), PORT: String(port) }
      const server = await startServer(['bun', 'run', `${ROOT}/src/cli.ts`, 'serve'], `http://127.0.0.1:${port}/v1/health`, { cwd: checkout, env })
      let live = ''
      try {
        live = await firstStartKey(server.proc.stdout)
        const doctor = await cliIn(elsewhere, homeEnv(home.path), 'doctor')
        expect(doctor.stdout).toContain(`data dir       ${folder} (default; NOTESVC_DATA_DIR overrides)\n`)
        expect(doctor.stdout).toContain(`database       sqlite, ${folder}/notesvc.db (schema `)
        // the running server's workers heartbeat in that database
        expect(doctor.stdout).toMatch(/job workers +1 live: /)
        const keys = await cliIn(elsewhere, homeEnv(home.path), 'keys', 'list', '--email', 'owner@localhost')
        expect(keys.code).toBe(0)
        expect(keys.stderr).toBe(`data folder: ${folder} (default; NOTESVC_DATA_DIR overrides)\n`)
        expect(keys.stdout.split('\n').filter(Boolean).map(l => l.split('\t').slice(1, 5))).toEqual([
          [`${live.slice(0, 17)}…`, 'live', 'active', 'first start (live)'],
          [expect.stringMatching(/^svc_test_\w{8}…$/), 'sandbox', 'active', 'first start (sandbox)'],
        ])
      } finally {
        await server.stop()
      }
      const said = await new Response(server.proc.stderr).text()
      for (const line of [
        `data folder: ${folder} (default; NOTESVC_DATA_DIR overrides)`,
        `First start: created the owner account owner@localhost (plan pro) and two API keys.`,
        `browser:     http://127.0.0.1:${port}/ (sign in as owner@localhost once it has a password:`,
        `accounts password --email owner@localhost)`,
        'metering: on (credits per minute of media); requests a minute per key: 120 reads, 30 writes, 10 processing calls (NOTESVC_RATE_LIMITS); for a single-user install start with NOTESVC_METERING=off',
      ]) expect(said).toContain(line)
      // no second database anywhere else
      expect([existsSync(`${checkout}/data`), existsSync(`${elsewhere}/data`)]).toEqual([false, false])
    } finally {
      home.remove()
    }
  })

  test('before any serve: doctor says there is no database yet and creates none; keys list refuses (exit 2)', async () => {
    const home = tempDir('notesvc-home-')
    try {
      const folder = `${home.path}/.local/share/notesvc`
      const doctor = await cliIn(home.path, homeEnv(home.path), 'doctor')
      expect(doctor.stdout).toContain(`data dir       ${folder} (default; NOTESVC_DATA_DIR overrides), not created yet\n`)
      expect(doctor.stdout).toContain(`database       no database yet at ${folder}/notesvc.db; start \`bun ${ROOT}/src/cli.ts serve\` first`)
      const keys = await cliIn(home.path, homeEnv(home.path), 'keys', 'list', '--email', 'owner@localhost')
      expect(keys.code).toBe(2)
      expect(keys.stderr).toContain(`no database yet at ${folder}/notesvc.db`)
      expect(existsSync(folder)).toBe(false)
      expect(existsSync(`${home.path}/.local`)).toBe(false)
    } finally {
      home.remove()
    }
  })

  test('./data holding a notesvc.db in the current folder is still used, and the command says why', async () => {
    const home = tempDir('notesvc-home-')
    try {
      const project = `${home.path}/project`
      mkdirSync(project)
      const created = await cliIn(project, { ...homeEnv(home.path), NOTESVC_DATA_DIR: `${project}/data` }, 'keys', 'create', '--email', 'old@example.com')
      expect(created.code).toBe(0)
      const listed = await cliIn(project, homeEnv(home.path), 'keys', 'list', '--email', 'old@example.com')
      expect(listed.code).toBe(0)
      expect(listed.stdout).toContain(`${created.stdout.trim().slice(0, 17)}…`)
      expect(listed.stderr).toBe(`data folder: ${project}/data (./data of this folder holds a notesvc.db, so it is kept; NOTESVC_DATA_DIR overrides)\n`)
      expect(existsSync(`${home.path}/.local`)).toBe(false)
    } finally {
      home.remove()
    }
  })
})

describe('single sign-on at the command line', () => {
  const sso = { NOTESVC_OIDC_ISSUER: 'http://127.0.0.1:9', NOTESVC_OIDC_CLIENT_ID: 'notesvc', NOTESVC_OIDC_PROVIDER_NAME: 'Example ID' }

  test('password sign-in off without a provider stops start-up, saying what to set', async () => {
    const r = await run(['bun', 'run', 'src/cli.ts', 'serve'], { env: { NOTESVC_PASSWORD_SIGNIN: 'off', NOTESVC_DATA_DIR: dir.path } })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('NOTESVC_PASSWORD_SIGNIN=off leaves no way to sign in to the browser: set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID (single sign-on) first, or set NOTESVC_PASSWORD_SIGNIN=on')
  })

  test('accounts password with password sign-in off sets it, and warns that it cannot be used', async () => {
    const d = tempDir('notesvc-cli-sso-')
    try {
      const r = await run(['sh', '-c', 'printf "a long enough password\\n" | bun run src/cli.ts accounts password --email pat@example.com --password-stdin'],
        { env: { ...sso, NOTESVC_DATA_DIR: d.path, NOTESVC_PASSWORD_SIGNIN: 'off' } })
      expect([r.code, r.stdout]).toEqual([0, 'pat@example.com\tpassword set\taccount created\n'])
      expect(r.stderr).toContain('warning: password sign-in is off (NOTESVC_PASSWORD_SIGNIN=off), so this password cannot be used to sign in to the browser; people sign in with Example ID. Set NOTESVC_PASSWORD_SIGNIN=on to use passwords again.')
      // with passwords on, no warning
      const on = await run(['sh', '-c', 'printf "a long enough password\\n" | bun run src/cli.ts accounts password --email pat@example.com --password-stdin'], { env: { ...sso, NOTESVC_DATA_DIR: d.path } })
      expect([on.code, on.stderr]).toEqual([0, ''])
    } finally {
      d.remove()
    }
  })

  test('the first start with password sign-in off says to sign in through the provider, not to set a password; serve logs the redirect URI', async () => {
    const d = tempDir('notesvc-cli-sso-first-')
    const port = await freePort()
    try {
      const server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port}/v1/health`, {
        env: { ...sso, NOTESVC_DATA_DIR: d.path, PORT: String(port), NOTESVC_LLM: 'builtin', NOTESVC_WORKERS: '0', NOTESVC_PASSWORD_SIGNIN: 'off' },
      })
      await server.stop()
      const said = await new Response(server.proc.stderr).text()
      expect(said).toContain(`browser:     http://127.0.0.1:${port}/ (sign in with Example ID as owner@localhost; password sign-in is off)\n`)
      expect(said).not.toContain('accounts password')
      const line = said.split('\n').find(l => l.includes('"msg":"single sign-on"'))
      expect(JSON.parse(line!)).toMatchObject({ provider: 'Example ID', issuer: 'http://127.0.0.1:9', redirectUri: `http://127.0.0.1:${port}/signin/oidc/callback`, passwordSignIn: 'off' })
    } finally {
      d.remove()
    }
  })

  test('doctor names the redirect URI to register at the provider, and says when the provider does not answer', async () => {
    const { startOidcProvider } = await import('./helpers/oidc-provider')
    const port = await freePort()
    const provider = await startOidcProvider({ redirectUris: [`http://127.0.0.1:${port}/signin/oidc/callback`], clientId: 'notesvc', clientSecret: 'x'.repeat(40), people: {} })
    try {
      const base = { NOTESVC_DATA_DIR: dir.path, NOTESVC_LLM: 'builtin', PORT: String(port), NOTESVC_OIDC_CLIENT_ID: 'notesvc', NOTESVC_OIDC_PROVIDER_NAME: 'Example ID' }
      const r = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { ...base, NOTESVC_OIDC_ISSUER: provider.issuer } })
      const line = r.stdout.split('\n').find(l => l.includes('single sign-on'))
      console.log(`doctor: ${line}`)
      expect(line).toBe(`ok       single sign-on "Sign in with Example ID" (${provider.issuer}); the redirect URI to register at the provider: http://127.0.0.1:${port}/signin/oidc/callback; password sign-in on`)
      const down = await run(['bun', 'run', 'src/cli.ts', 'doctor'], { env: { ...base, NOTESVC_OIDC_ISSUER: 'http://127.0.0.1:9' } })
      expect(down.stdout).toContain('missing  single sign-on http://127.0.0.1:9/.well-known/openid-configuration cannot be reached')
      expect(down.stdout).toContain('→ fix: set NOTESVC_OIDC_ISSUER to the issuer exactly as the provider names it, and let this machine reach it')
    } finally {
      await provider.stop()
    }
  })
})
