import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dir, '../..')

export function tempDir(prefix = 'notesvc-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs a command to completion and collects its output. */
export async function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<RunResult> {
  const proc = Bun.spawn(cmd, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

export async function freePort(): Promise<number> {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = server.port!
  server.stop(true)
  return port
}

/** Polls `get` every `everyMs` until it gives something truthy, and returns that; throws after `ms` naming `what`. */
export async function until<T>(what: string, get: () => T | Promise<T>, ms = 10_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await get()
    if (v) return v as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for: ${what}`)
    await Bun.sleep(everyMs)
  }
}

/** Starts a long-running command and waits until `url` answers 200. */
export async function startServer(cmd: string[], url: string, opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}) {
  const started = performance.now()
  const proc = Bun.spawn(cmd, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdout: 'pipe', stderr: 'pipe' })
  const deadline = started + (opts.timeoutMs ?? 15_000)
  let firstByteMs = -1
  while (performance.now() < deadline) {
    try {
      const res = await fetch(url)
      if (res.ok) { firstByteMs = performance.now() - started; break }
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) break
    await Bun.sleep(20)
  }
  if (firstByteMs < 0) {
    proc.kill()
    const err = await new Response(proc.stderr).text()
    throw new Error(`server did not answer ${url}: ${err}`)
  }
  return { proc, firstByteMs, stop: async () => { proc.kill(); await proc.exited } }
}

/** An API client of one node with one key: `call(method, path, body)` → status, JSON body and headers. */
export function apiClient(base: string, key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    let json: any = text
    try {
      json = JSON.parse(text)
    } catch {
      // not JSON (an empty 204)
    }
    return { status: res.status, body: json, headers: res.headers }
  }
}

/** The live key a server prints on stdout when it starts on an empty database. */
export async function firstStartKey(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader()
  let out = ''
  while (!/live key: +\S+/.test(out)) out += new TextDecoder().decode((await reader.read()).value)
  reader.releaseLock()
  return /live key: +(\S+)/.exec(out)![1]!
}

/**
 * A note's status (from `GET /v1/notes/{id}/status` through `read`) once it has left Summarizing,
 * asked every `pauseMs` at most `tries` times; the last one read if it never does.
 */
export async function statusOnceProcessed(read: () => Promise<any>, pauseMs: number, tries: number): Promise<any> {
  let status: any
  for (let i = 0; i < tries; i++) {
    status = await read()
    if (status.status !== 'Summarizing') break
    await Bun.sleep(pauseMs)
  }
  return status
}


/** The first line a process writes on the stream (e.g. the line `serve` logs once it listens). */
export async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return text.split('\n')[0]!
}
