import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openLiveRecognizer, type LiveEvent } from '../src/engines/live/index'
import { LIBRIVOX } from '../test/fixtures/speech'
const n = Number(process.argv[2] ?? 8)
const FRAME = Number(process.argv[3] ?? 320)
const partialIntervalMs = Number(process.argv[4] ?? 160)
const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(f => { const b = readFileSync(join(LIBRIVOX, f)); return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length)) })
const recording = new Int16Array(clips.reduce((k, c) => k + c.length + 16_000, 0))
clips.reduce((at, c) => (recording.set(c, at), at + c.length + 16_000), 0)
const seconds = recording.length / 16000
function threads() {
  const out: Record<string, { name: string; ticks: number }> = {}
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out[tid] = { name, ticks: Number(f[11]) + Number(f[12]) }
    } catch {}
  }
  return out
}
const sleep = (ms: number) => new Promise(r => setTimeout(r, Math.max(0, ms)))
const recs = Array.from({ length: n }, () => openLiveRecognizer({ sampleRate: 16000, partialIntervalMs }))
const lateness: number[][] = recs.map(() => [])
await Promise.all(recs.map((r, i) => new Promise<void>(res => r.on(e => { if (e.type === 'ready') res() }))))
const before = threads(); const cpu0 = process.cpuUsage()
const t0 = performance.now()
recs.forEach((r, i) => r.on((e: LiveEvent) => { if (e.type === 'speechStopped') lateness[i]!.push((performance.now() - t0) / 1000 - e.audioEndMs / 1000) }))
for (let at = 0; at < recording.length; at += FRAME) {
  await sleep(t0 + (at / 16000) * 1000 - performance.now())
  for (const r of recs) r.push(recording.subarray(at, at + FRAME))
}
await Promise.all(recs.map(r => r.close()))
const wall = (performance.now() - t0) / 1000
const after = threads(); const cpu = process.cpuUsage(cpu0)
const per: Record<string, number> = {}
for (const [tid, a] of Object.entries(after)) { const d = (a.ticks - (before[tid]?.ticks ?? 0)) / 100; if (d > 0.05) per[`${a.name}#${tid}`] = d }
console.log(`n=${n} frame=${FRAME} partial=${partialIntervalMs}ms audio ${seconds.toFixed(1)} s wall ${wall.toFixed(1)} s; process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s = ${((cpu.user + cpu.system) / 1e6 / seconds / n).toFixed(3)} CPU s per audio s per stream; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
console.log(Object.entries(per).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', '))
console.log('speechStopped lateness per stream (s):', lateness.map(l => l.map(x => x.toFixed(2)).join('/')).join('  '))
