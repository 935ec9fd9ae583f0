/**
 * Running wrk against a server process and reading what it costs each side: requests per second and
 * latencies from wrk's report, and the CPU time per request of the server (from /proc/<pid>/stat, all
 * its threads) and of wrk itself. The CPU figures hold on a busy machine, where req/s follow whoever
 * else is running; wrk's share of a core says whether the client, not the server, set the pace.
 */
import { readFileSync } from 'node:fs'
import type { Subprocess } from 'bun'

/** How wrk is run: its threads, and whether wrk and the server are pinned to a core each. */
export interface Load {
  threads: number
  /** wrk on core 0 and the server (every thread) on core 1, with taskset; else both float */
  pinned: boolean
}

export interface WrkResult {
  /** requests wrk gave up on after the timeout (a server too slow to answer), not counted in the latencies */
  timeouts: number
  requestsPerSec: number
  p50Ms: number
  p99Ms: number
  /** the server's CPU time per request (µs), all its threads; NaN where /proc is not there */
  serverUs: number
  /** wrk's CPU time per request (µs) */
  wrkUs: number
  /** wrk's CPU time over the run's duration: 1.0 is one core kept busy */
  wrkCores: number
}

/** Something broke (as opposed to a target being missed): the run exits non-zero. */
export class BenchFailure extends Error {}

export const CAN_PIN = Bun.which('taskset') !== null && navigator.hardwareConcurrency >= 2
const ALL_CORES = `0-${navigator.hardwareConcurrency - 1}`
/** how long wrk waits for an answer before counting a timeout */
const WRK_TIMEOUT = '10s'
const WRK_CONNECTIONS = 32
export const WARMUP_SECONDS = 2

export const describeLoad = (l: Load) => `wrk -t${l.threads} -c${WRK_CONNECTIONS}, ${l.pinned ? 'pinned (server core 1, wrk core 0)' : 'not pinned'}`

/** `2p,2u,1p`: threads, then p (pinned) or u (not pinned); pinning is dropped without taskset or a second core. */
export function parseLoads(text: string): Load[] {
  return text.split(',').map(s => {
    const m = /^\s*(\d+)([pu])\s*$/.exec(s)
    if (!m || Number(m[1]) < 1) throw new BenchFailure(`BENCH_LOADS=${text}: each load is wrk's threads then p (pinned) or u (not pinned), such as 2p,2u,1p`)
    return { threads: Number(m[1]), pinned: m[2] === 'p' && CAN_PIN }
  })
}

/** Puts every thread of a server process on core 1 (pinned) or on every core. */
function placeServer(proc: Subprocess, pinned: boolean): void {
  if (!CAN_PIN) return
  const r = Bun.spawnSync(['taskset', '-a', '-p', '-c', pinned ? '1' : ALL_CORES, String(proc.pid)], { stdout: 'ignore', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new BenchFailure(`taskset could not place process ${proc.pid}: ${r.stderr.toString()}`)
}

/** CPU time (µs) of a process so far, all threads; NaN where /proc is not there. */
function processCpuUs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100) // utime + stime, in clock ticks of 10 ms
  } catch {
    return NaN
  }
}

const LATENCY_UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 }

function latencyMs(output: string, percentile: string): number {
  const m = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output)
  if (!m) throw new BenchFailure(`wrk output has no ${percentile}% latency:\n${output}`)
  return Number(m[1]) * LATENCY_UNITS_MS[m[2]!]!
}

/** Reads the figures from wrk's report; any non-2xx response or socket error is a failure. */
function parseWrk(output: string): Omit<WrkResult, 'serverUs' | 'wrkUs' | 'wrkCores'> & { requests: number } {
  const non2xx = /Non-2xx or 3xx responses:\s*(\d+)/.exec(output)
  if (non2xx) throw new BenchFailure(`wrk saw ${non2xx[1]} non-2xx/3xx responses:\n${output}`)
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  if (socketErrors && socketErrors.slice(1, 4).some(n => n !== '0')) throw new BenchFailure(`wrk saw ${socketErrors[0]}:\n${output}`)
  const timeouts = socketErrors ? Number(socketErrors[4]) : 0
  const rps = /Requests\/sec:\s*([\d.]+)/.exec(output)
  const requests = /(\d+) requests in/.exec(output)
  if (!rps || !requests) throw new BenchFailure(`wrk output has no Requests/sec:\n${output}`)
  return { timeouts, requests: Number(requests[1]), requestsPerSec: Number(rps[1]), p50Ms: latencyMs(output, '50'), p99Ms: latencyMs(output, '99') }
}

async function wrk(url: string, seconds: number, load: Load, headers: string[], script?: string) {
  const args = ['wrk', `-t${load.threads}`, `-c${WRK_CONNECTIONS}`, `-d${seconds}s`, '--latency', '--timeout', WRK_TIMEOUT, ...(script ? ['-s', script] : []), ...headers.flatMap(h => ['-H', h]), url]
  const started = performance.now()
  const proc = Bun.spawn(load.pinned ? ['taskset', '-c', '0', ...args] : args, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const [output, errors, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new BenchFailure(`wrk exited with code ${code}:\n${output}${errors}`)
  const usage = proc.resourceUsage()
  const cpuUs = usage ? Number(usage.cpuTime.user) + Number(usage.cpuTime.system) : NaN
  return { output, cpuUs, wallUs: (performance.now() - started) * 1000 }
}

/** A short warm-up run (discarded), then the measured run, with the server placed as the load says. */
export async function measure(server: { proc: Subprocess }, url: string, seconds: number, load: Load, headers: string[], script?: string): Promise<WrkResult> {
  placeServer(server.proc, load.pinned)
  parseWrk((await wrk(url, WARMUP_SECONDS, load, headers, script)).output)
  const before = processCpuUs(server.proc.pid)
  const run = await wrk(url, seconds, load, headers, script)
  const serverCpu = processCpuUs(server.proc.pid) - before
  const { requests, ...result } = parseWrk(run.output)
  return { ...result, serverUs: serverCpu / requests, wrkUs: run.cpuUs / requests, wrkCores: run.cpuUs / run.wallUs }
}

/** The run with the median throughput. */
export function median(runs: WrkResult[]): WrkResult {
  return [...runs].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[Math.floor(runs.length / 2)]!
}

/** The median of a figure over runs (for the CPU times, taken each on its own). */
export function medianOf(runs: WrkResult[], pick: (r: WrkResult) => number): number {
  const values = runs.map(pick).sort((a, b) => a - b)
  return values[Math.floor(values.length / 2)]!
}
