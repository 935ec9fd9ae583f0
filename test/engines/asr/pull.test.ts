import { afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pullModel, PullError } from '../../../src/engines/asr/pull'
import { run, tempDir } from '../../helpers/process'

/**
 * A model host on loopback that speaks what Hugging Face does: Range requests answered 206, the file's
 * SHA-256 as X-Linked-Etag. A raw TCP server, so that `cutAfter` can drop the first download part-way
 * as a broken link would: the length is announced, fewer bytes arrive, the connection closes.
 */
function modelHost(files: Record<string, Uint8Array>, o: { cutAfter?: number; lie?: boolean } = {}) {
  const ranges: (string | null)[] = []
  let cut = o.cutAfter
  // Bytes a socket could not take yet (backpressure), sent on drain; the socket closes once empty.
  const pending = new Map<object, Uint8Array>()
  const flush = (socket: { write(b: Uint8Array): number; end(): void }) => {
    const rest = pending.get(socket)!
    const n = socket.write(rest)
    if (n < rest.length) pending.set(socket, rest.subarray(n))
    else {
      pending.delete(socket)
      socket.end()
    }
  }
  const server = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      drain(socket) {
        if (pending.has(socket)) flush(socket)
      },
      data(socket, data) {
        const head = Buffer.from(data).toString('latin1')
        const name = /^GET (\S+)/.exec(head)![1]!.split('/').at(-1)!
        const range = /\r\nrange: bytes=(\d+)-/i.exec(head)
        ranges.push(range ? `bytes=${range[1]}-` : null)
        const body = files[name]
        if (!body) {
          socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
          return
        }
        const start = range ? Number(range[1]) : 0
        const rest = body.subarray(start)
        const sha = createHash('sha256').update(o.lie ? Buffer.from('other') : body).digest('hex')
        const header = Buffer.from(`HTTP/1.1 ${range ? '206 Partial Content' : '200 OK'}\r\ncontent-length: ${rest.length}\r\nx-linked-etag: "${sha}"\r\nconnection: close\r\n\r\n`)
        const send = cut ?? rest.length
        cut = undefined
        pending.set(socket, Buffer.concat([header, rest.subarray(0, send)]))
        flush(socket)
      },
    },
  })
  return { url: `http://127.0.0.1:${server.port}/models`, ranges, stop: () => server.stop(true) }
}

const hosts: { stop(): void }[] = []
afterEach(() => hosts.splice(0).forEach(h => h.stop()))

const model = crypto.getRandomValues(new Uint8Array(3_000_000))

describe('models pull', () => {
  test('downloads into the models folder and checks the server\'s SHA-256', async () => {
    const host = modelHost({ 'ggml-tiny.en.bin': model })
    hosts.push(host)
    const dir = tempDir()
    const seen: number[] = []
    const r = await pullModel({ name: 'tiny.en', modelsDir: dir.path, baseUrl: host.url, onProgress: p => seen.push(p.received) })
    expect(r).toEqual({ path: join(dir.path, 'ggml-tiny.en.bin'), bytes: model.length, resumed: false, verified: 'sha256' })
    expect(Buffer.from(readFileSync(r.path)).equals(Buffer.from(model))).toBe(true)
    expect(seen.at(-1)).toBe(model.length)
    dir.remove()
  })

  test('a dropped download resumes where it stopped, with a Range request', async () => {
    const host = modelHost({ 'ggml-base.bin': model }, { cutAfter: 1_000_000 })
    hosts.push(host)
    const dir = tempDir()
    const first = await pullModel({ name: 'base', modelsDir: dir.path, baseUrl: host.url }).catch(e => e)
    expect(first).toBeInstanceOf(Error)
    // whatever arrived before the link dropped is kept (the client may lose its last buffered bytes)
    const kept = statSync(join(dir.path, 'ggml-base.bin.part')).size
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThanOrEqual(1_000_000)
    expect(existsSync(join(dir.path, 'ggml-base.bin'))).toBe(false)
    const second = await pullModel({ name: 'base', modelsDir: dir.path, baseUrl: host.url })
    expect(second).toMatchObject({ resumed: true, verified: 'sha256', bytes: model.length })
    expect(host.ranges).toEqual([null, `bytes=${kept}-`])
    expect(Buffer.from(readFileSync(second.path)).equals(Buffer.from(model))).toBe(true)
    dir.remove()
  })

  test('a file that fails its checksum is removed and the error says to run again', async () => {
    const host = modelHost({ 'ggml-small.bin': model }, { lie: true })
    hosts.push(host)
    const dir = tempDir()
    const err = await pullModel({ name: 'small', modelsDir: dir.path, baseUrl: host.url }).catch(e => e)
    expect(err).toBeInstanceOf(PullError)
    expect(err.message).toContain('does not match')
    expect(err.message).toContain('run the command again')
    expect(existsSync(join(dir.path, 'ggml-small.bin'))).toBe(false)
    expect(existsSync(join(dir.path, 'ggml-small.bin.part'))).toBe(false)
    dir.remove()
  })

  test('with no server checksum, the published SHA-1 of a known model is checked', async () => {
    const host = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(model) })
    hosts.push({ stop: () => host.stop(true) })
    const dir = tempDir()
    const err = await pullModel({ name: 'base.en', modelsDir: dir.path, baseUrl: `http://127.0.0.1:${host.port}` }).catch(e => e)
    expect(err.message).toContain('expected 137c40403d78fd54d454da0f9bd998f78703390c')
    dir.remove()
  })

  test('an unknown model name is a clear error', async () => {
    const host = modelHost({})
    hosts.push(host)
    const dir = tempDir()
    const err = await pullModel({ name: 'enormous', modelsDir: dir.path, baseUrl: host.url }).catch(e => e)
    expect(err.message).toContain('there is no model "enormous"')
    dir.remove()
  })

  test('the CLI shows progress on stderr and prints only the path on stdout', async () => {
    const host = modelHost({ 'ggml-tiny.bin': model })
    hosts.push(host)
    const dir = tempDir()
    const r = await run(['bun', 'run', 'src/cli.ts', 'models', 'pull', 'tiny'], { env: { NOTESVC_MODELS_DIR: dir.path, NOTESVC_MODELS_URL: host.url } })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${join(dir.path, 'ggml-tiny.bin')}\n`)
    expect(r.stderr).toContain('100% [##############################] 3.0/3.0 MB')
    expect(r.stderr).toContain('SHA256 verified')
    const list = await run(['bun', 'run', 'src/cli.ts', 'models', 'list'], { env: { NOTESVC_MODELS_DIR: dir.path } })
    expect(list.stdout).toBe(`tiny\t${model.length}\t${join(dir.path, 'ggml-tiny.bin')}\n`)
    dir.remove()
  })
})
