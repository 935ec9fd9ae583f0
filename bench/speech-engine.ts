import { POCKETSPHINX_DEFAULTS } from '../src/engines/asr/pocketsphinx'

/**
 * The speech engine by itself: `pocketsphinx_continuous` on a whole 16 kHz WAV, as one would run it by
 * hand, with the model notesvc uses. Returns the wall time and the words it heard.
 */
export async function pocketsphinxAlone(wavPath: string): Promise<{ seconds: number; words: number }> {
  const started = performance.now()
  const proc = Bun.spawn([
    POCKETSPHINX_DEFAULTS.program, '-infile', wavPath, '-samprate', '16000', '-time', 'yes',
    '-hmm', POCKETSPHINX_DEFAULTS.hmm, '-lm', POCKETSPHINX_DEFAULTS.lm, '-dict', POCKETSPHINX_DEFAULTS.dict,
  ], { stdout: 'pipe', stderr: 'ignore', stdin: 'ignore' })
  const out = await new Response(proc.stdout).text()
  if ((await proc.exited) !== 0) throw new Error('pocketsphinx_continuous failed')
  const words = out.split('\n').filter(l => /^\S+ \d+\.\d+ \d+\.\d+ /.test(l) && !/^(<|\[)/.test(l)).length
  return { seconds: (performance.now() - started) / 1000, words }
}
