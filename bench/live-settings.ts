/**
 * The live decoder's cost per setting: the LibriVox recording (as bench/live.ts builds it) decoded by
 * one LiveSession (src/engines/live/session.ts) on this thread, in 20-ms frames as fast as it goes,
 * once per candidate set of PocketSphinx settings. Prints, per candidate: CPU seconds per second of
 * audio (the share of a core one stream needs; 8 streams on 2 cores need ≤ 0.25), the longest single
 * frame's decoding (a burst that delays the next partial: the end of a turn, where the second pass
 * runs), and the word error rate against what was said. CPU time, not wall time: the machine is shared.
 *
 *   bun bench/live-settings.ts [candidates=all, comma-separated names] [partialIntervalMs=160]
 */
import { LiveSession } from '../src/engines/live/session'
import { DEFAULT_TURN_DETECTION } from '../src/engines/live/turns'
import { LIVE_DECODER_SETTINGS } from '../src/engines/live/settings'
import type { LiveEvent } from '../src/engines/live/events'
import { wer } from '../test/helpers/wer'
import { librivoxRecording } from './lib/librivox-recording'

/** The library's own values of what the live engine sets, so that each candidate is what it says. */
const LIBRARY = { '-fwdflat': 'yes', '-maxhmmpf': '30000', '-maxwpf': '-1', '-topn': '4' }

const CANDIDATES: Record<string, Record<string, string>> = {
  library: {},
  chosen: LIVE_DECODER_SETTINGS,
  nofwdflat: { '-fwdflat': 'no' },
  beams: { '-beam': '1e-30', '-wbeam': '1e-20', '-pbeam': '1e-30' },
  maxhmmpf: { '-maxhmmpf': '3000', '-maxwpf': '10' },
  ds2: { '-ds': '2' },
  topn2: { '-topn': '2' },
  pl0: { '-pl_window': '0' },
  pl10: { '-pl_window': '10' },
  nofwdflat_beams: { '-fwdflat': 'no', '-beam': '1e-30', '-wbeam': '1e-20', '-pbeam': '1e-30' },
  nofwdflat_maxhmmpf: { '-fwdflat': 'no', '-maxhmmpf': '3000', '-maxwpf': '10' },
  nofwdflat_beams_maxhmmpf: { '-fwdflat': 'no', '-beam': '1e-30', '-wbeam': '1e-20', '-pbeam': '1e-30', '-maxhmmpf': '3000', '-maxwpf': '10' },
  nofwdflat_ds2: { '-fwdflat': 'no', '-ds': '2' },
  beams40: { '-fwdflat': 'no', '-beam': '1e-40', '-wbeam': '1e-24', '-pbeam': '1e-40' },
  hmm2000: { '-fwdflat': 'no', '-maxhmmpf': '2000', '-maxwpf': '10' },
  hmm1500: { '-fwdflat': 'no', '-maxhmmpf': '1500', '-maxwpf': '10' },
  hmm3000_topn2: { '-fwdflat': 'no', '-maxhmmpf': '3000', '-maxwpf': '10', '-topn': '2' },
  hmm3000_topn2_ds2: { '-fwdflat': 'no', '-maxhmmpf': '3000', '-maxwpf': '10', '-topn': '2', '-ds': '2' },
  hmm3000_pl0: { '-fwdflat': 'no', '-maxhmmpf': '3000', '-maxwpf': '10', '-pl_window': '0' },
  hmm3000_ds2: { '-fwdflat': 'no', '-maxhmmpf': '3000', '-maxwpf': '10', '-ds': '2' },
}

const names = process.argv[2] ? process.argv[2].split(',') : Object.keys(CANDIDATES)
const partialIntervalMs = Number(process.argv[3] ?? 160)

const { recording, truth, seconds } = librivoxRecording()

console.log(`${seconds.toFixed(1)} s of audio, 20-ms frames, partials every ${partialIntervalMs} ms`)
console.log('candidate | settings | CPU s per audio s | longest frame | partials | WER')
for (const name of names) {
  const settings = CANDIDATES[name]
  if (!settings) throw new Error(`no candidate named ${name}; one of ${Object.keys(CANDIDATES).join(', ')}`)
  const events: LiveEvent[] = []
  const session = new LiveSession({ turnDetection: DEFAULT_TURN_DETECTION, partialIntervalMs, decoder: { settings: { ...LIBRARY, ...settings } } }, e => events.push(e))
  const cpu0 = process.cpuUsage()
  let longest = 0
  for (let at = 0; at < recording.length; at += 320) {
    const t = performance.now()
    session.push(recording.subarray(at, at + 320))
    longest = Math.max(longest, performance.now() - t)
  }
  session.close()
  const cpu = process.cpuUsage(cpu0)
  const text = events.filter(e => e.type === 'final').map(e => (e as { text: string }).text).filter(Boolean).join(' ')
  const perSecond = (cpu.user + cpu.system) / 1e6 / seconds
  console.log(`${name} | ${Object.entries(settings).flat().join(' ') || '(the library\'s)'} | ${perSecond.toFixed(3)} | ${longest.toFixed(0)} ms | ${events.filter(e => e.type === 'partial').length} | ${(wer(truth, text).wer * 100).toFixed(1)} %`)
}
