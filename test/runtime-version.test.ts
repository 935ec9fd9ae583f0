import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, run, tempDir } from './helpers/process'
import { runtimeRefusal } from '../src/runtime-version'

// Bun 1.4.0 (and 1.3) accept an upload PUT and never answer it; 1.4.1 is the first release that does.
const SUPPORTED = '>=1.4.1'
const REFUSAL = `notesvc needs Bun ${SUPPORTED} but runs on Bun 1.4.0; upgrade with: npm install -g bun\n`

describe('the supported Bun versions', () => {
  test('package.json declares them in engines.bun', async () => {
    const pkg = await Bun.file(join(ROOT, 'package.json')).json()
    expect(pkg.engines).toEqual({ bun: SUPPORTED })
  })

  test.each(['1.3.14', '1.4.0', '1.4.0-canary.20260831.1'])('Bun %s is refused in one line that names the version needed and the upgrade', version => {
    const line = runtimeRefusal(version)
    expect(line).toBe(`notesvc needs Bun ${SUPPORTED} but runs on Bun ${version}; upgrade with: npm install -g bun`)
  })

  test.each(['1.4.1', '1.4.2-canary.20260906.1', '1.4.5', '1.5.0', '2.0.0'])('Bun %s runs', version => {
    expect(runtimeRefusal(version)).toBeNull()
  })

  test('no Bun version at all (process.versions.bun missing) is refused, saying the version is unknown', () => {
    const versions = process.versions as Record<string, string | undefined>
    const bun = versions.bun
    delete versions.bun
    try {
      expect(runtimeRefusal(undefined)).toBe(`notesvc needs Bun ${SUPPORTED} but runs on Bun (unknown); upgrade with: npm install -g bun`)
      expect(runtimeRefusal()).toBe(`notesvc needs Bun ${SUPPORTED} but runs on Bun (unknown); upgrade with: npm install -g bun`)
    } finally {
      versions.bun = bun
    }
    expect(process.versions.bun).toBe(Bun.version)
  })

  test('inside a binary the fix is to rebuild it, since the binary carries its own Bun', () => {
    expect(runtimeRefusal('1.4.0', SUPPORTED, true)).toBe(`notesvc needs Bun ${SUPPORTED} but runs on Bun 1.4.0; rebuild the binary with a newer Bun: npm install -g bun && bun run build`)
  })
})

describe('on Bun 1.4.0 every command refuses to start', () => {
  const dir = tempDir('notesvc-old-bun-')
  afterAll(() => dir.remove())
  const dataDir = join(dir.path, 'data')
  const onOldBun = (...args: string[]) =>
    run(['bun', '--preload', './test/fixtures/bun-1.4.0.ts', ...args], { env: { NOTESVC_DATA_DIR: dataDir, NOTESVC_MODELS_DIR: dir.path, PORT: '0' } })

  test.each([
    [['serve']],
    [[]],
    [['version']],
    [['help']],
    [['keys', 'create', '--email', 'old@example.com']],
    [['keys', 'list', '--email', 'old@example.com']],
    [['accounts', 'credit', '--email', 'old@example.com', '--credits', '5']],
    [['models', 'list']],
    [['doctor']],
  ])('notesvc %p: exit 2, the one line, and nothing done', async args => {
    const r = await onOldBun('src/cli.ts', ...args)
    expect(r.stderr).toBe(REFUSAL)
    expect(r.stdout).toBe('')
    expect(r.code).toBe(2)
    expect(existsSync(dataDir)).toBe(false)
  })

  test('the build refuses too, rather than make a binary that would', async () => {
    const outfile = join(dir.path, 'notesvc')
    const r = await onOldBun('scripts/build.ts', outfile)
    expect(r.stderr).toBe(REFUSAL)
    expect(r.code).toBe(2)
    expect(existsSync(outfile)).toBe(false)
  })
})

describe('without any Bun version (process.versions.bun missing) the commands refuse to start', () => {
  const dir = tempDir('notesvc-no-bun-version-')
  afterAll(() => dir.remove())
  const dataDir = join(dir.path, 'data')

  test.each([[['version']], [['keys', 'create', '--email', 'unknown@example.com']]])('notesvc %p: exit 2, the one line naming the version unknown, and nothing done', async args => {
    const r = await run(['bun', '--preload', './test/fixtures/no-bun-version.ts', 'src/cli.ts', ...args], { env: { NOTESVC_DATA_DIR: dataDir, NOTESVC_MODELS_DIR: dir.path } })
    expect(r.stderr).toBe(`notesvc needs Bun ${SUPPORTED} but runs on Bun (unknown); upgrade with: npm install -g bun\n`)
    expect(r.stdout).toBe('')
    expect(r.code).toBe(2)
    expect(existsSync(dataDir)).toBe(false)
  })
})
