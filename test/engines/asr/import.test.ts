import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'
import { run, tempDir } from '../../helpers/process'

/** `notesvc models import` with a Whisper ggml file: the offline way to get a model in. */
const dirs: { remove(): void }[] = []
afterEach(() => dirs.splice(0).forEach(d => d.remove()))

function setup() {
  const from = tempDir('notesvc-import-from-')
  const models = tempDir('notesvc-import-models-')
  dirs.push(from, models)
  const cli = (...args: string[]) => run(['bun', 'run', 'src/cli.ts', 'models', ...args], { env: { NOTESVC_MODELS_DIR: models.path, NOTESVC_DATA_DIR: models.path } })
  return { from: from.path, models: models.path, cli }
}

describe('models import, Whisper ggml files', () => {
  test('the generated tiny model is copied under its own name, loaded by whisper.cpp, and listed', async () => {
    const { from, models, cli } = setup()
    const file = writeTinyWhisperModel(join(from, 'ggml-tiny-test.bin'))
    const r = await cli('import', file)
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${join(models, 'ggml-tiny-test.bin')}\n`)
    expect(r.stderr).toContain('65 tensors read through; loaded by whisper.cpp')
    expect(r.stderr).toContain('no published checksum for this name')
    const sha256 = new Bun.CryptoHasher('sha256').update(readFileSync(file)).digest('hex')
    expect(r.stderr).toContain(`SHA-256 ${sha256}`)
    expect(readFileSync(join(models, 'ggml-tiny-test.bin')).equals(readFileSync(file))).toBe(true)
    const list = await cli('list')
    expect(list.stdout).toBe(`tiny-test\t4475936\t${join(models, 'ggml-tiny-test.bin')}\n`)
  })

  test('--name chooses the name it is saved under', async () => {
    const { from, models, cli } = setup()
    const file = writeTinyWhisperModel(join(from, 'downloaded.bin'))
    const r = await cli('import', file, '--name', 'my-tiny')
    expect(r.code).toBe(0)
    expect(readdirSync(models)).toEqual(['ggml-my-tiny.bin'])
  })

  test.each([
    ['cut short', (b: Buffer) => b.subarray(0, b.length - 100), 'it ends inside tensor decoder.ln.bias'],
    ['not a model', () => Buffer.from('<html>404 Not Found</html>'.repeat(4)), 'does not start with the ggml magic number'],
    ['a damaged header', (b: Buffer) => { const c = Buffer.from(b); c.writeInt32LE(-1, 4 * 4); return c }, 'its audio heads (-1)'],
    ['tensors missing for its layer count', (b: Buffer) => { const c = Buffer.from(b); c.writeInt32LE(3, 4 * 5); return c }, 'tensors where a model of 3 + 1 layers has'],
  ])('a file %s is refused with exit 2 and the reason, and nothing is copied', async (_what, damage, reason) => {
    const { from, models, cli } = setup()
    const good = readFileSync(writeTinyWhisperModel(join(from, 'good.bin')))
    const file = join(from, 'ggml-small-test.bin')
    writeFileSync(file, damage(good))
    const r = await cli('import', file)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(reason)
    expect(r.stderr).toContain('nothing was copied')
    expect(readdirSync(models)).toEqual([])
  })

  test('a file under a known name must have the SHA-1 whisper.cpp publishes for it', async () => {
    const { from, models, cli } = setup()
    const file = writeTinyWhisperModel(join(from, 'ggml-base.en.bin'))
    const r = await cli('import', file)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('expected 137c40403d78fd54d454da0f9bd998f78703390c')
    expect(readdirSync(models)).toEqual([])
  })

  test('a file with no ggml-<name>.bin name and no --name is a usage mistake that says what to add', async () => {
    const { from, cli } = setup()
    const r = await cli('import', writeTinyWhisperModel(join(from, 'model.bin')))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--name base.en')
  })
})

describe('models pull, offline', () => {
  test('an unreachable host exits 1 (not 2, a wrong command) and names models import', async () => {
    const { models } = setup()
    const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'pull', 'base.en'], { env: { NOTESVC_MODELS_DIR: models, NOTESVC_MODELS_URL: 'http://127.0.0.1:9' } })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('could not reach http://127.0.0.1:9/ggml-base.en.bin')
    expect(r.stderr).toContain('bun run cli models import ggml-base.en.bin')
  })

  test('a malformed model name is still a wrong command: exit 2', async () => {
    const { models } = setup()
    const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'pull', 'base en'], { env: { NOTESVC_MODELS_DIR: models, NOTESVC_MODELS_URL: 'http://127.0.0.1:9' } })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('is not a model name')
  })
})
