import { commandLine } from '../../command-name'
import type { SpeechEngineAdapter } from './adapter'
import { createPocketsphinxEngine, findPocketsphinx, POCKETSPHINX_INSTALL_HINT } from './pocketsphinx'

/**
 * What PocketSphinx's accuracy is, in figures: measured for issue 24 on main 8abbfa2 with the
 * en-us model Debian packages (word error rate against the reference text).
 */
const POCKETSPHINX_ACCURACY =
  'PocketSphinx is far less accurate than Whisper: a third to a half of the words wrong (37% word error rate on the Debian audiobook clips, 48% on the cards set, measured in issue 24)'

/** `NOTESVC_ASR=pocketsphinx`: the Debian packages' program, one process per chunk; `auto` takes it when there is no Whisper model. */
export const pocketsphinxAdapter: SpeechEngineAdapter<undefined> = {
  name: 'pocketsphinx',
  auto: true,
  label: () => 'PocketSphinx',

  availability(ctx) {
    const found = findPocketsphinx(ctx.pocketsphinx)
    if ('program' in found) return { ok: true, detail: `PocketSphinx (${found.program})` }
    return {
      ok: false,
      missing: `PocketSphinx is not installed (${found.missing})`,
      install: `\`${POCKETSPHINX_INSTALL_HINT}\``,
      lacks: 'PocketSphinx is not installed',
      remedy: `install PocketSphinx with \`${POCKETSPHINX_INSTALL_HINT}\``,
    }
  },

  create: ctx => createPocketsphinxEngine(ctx.pocketsphinx),

  models: (_ctx, _settings, inUse) => (inUse ? [{ id: 'pocketsphinx' }] : []),

  async doctor(ctx) {
    const found = findPocketsphinx(ctx.pocketsphinx)
    const ok = 'program' in found
    return [{
      name: 'pocketsphinx', ok,
      detail: ok ? `${found.program}, model ${ctx.pocketsphinx.hmm}` : found.missing,
      fix: ok ? undefined : POCKETSPHINX_INSTALL_HINT,
    }]
  },

  // it works, but is said plainly to be far less accurate, with figures and the way to Whisper
  inUseAdvice: ctx => ({
    warn: true,
    note: POCKETSPHINX_ACCURACY,
    fix: `for Whisper's accuracy, get a Whisper model: ${commandLine(`models pull ${ctx.whisperModel}`)}, or offline ${commandLine(`models import ggml-${ctx.whisperModel}.bin`)}`,
  }),
}
