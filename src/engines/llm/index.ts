import type { Config } from '../../config'
import type { Logger } from '../../log'
import { createBuiltinEngine } from './builtin'
import type { LlmEngine } from './engine'
import { createOllamaEngine } from './ollama'

/** How long an answer of Ollama's to "are you there, with the model?" is trusted in `auto` mode. */
const PROBE_TTL_MS = 30_000

export interface LlmSelector {
  /** the engine to use now: NOTESVC_LLM, or for `auto` Ollama when it answers with the model, else builtin */
  current(): Promise<LlmEngine>
  /** which engine `current()` gives, and why, for health and doctor */
  describe(): Promise<{ engine: 'ollama' | 'builtin'; detail: string }>
  /** the engine of the last check, without checking again (for GET /v1/health) */
  lastKnown(): 'ollama' | 'builtin' | 'auto (not checked yet)'
}

export function createLlmSelector(config: Config, log?: Logger): LlmSelector {
  const builtin = createBuiltinEngine()
  const ollama = createOllamaEngine({ host: config.ollamaHost, model: config.ollamaModel, log })
  let probed: { at: number; ok: boolean; detail: string } | null = null

  async function ollamaUsable() {
    if (probed && Date.now() - probed.at < PROBE_TTL_MS) return probed
    const p = await ollama.probe()
    const hasModel = p.models.some(m => m === config.ollamaModel || m.startsWith(`${config.ollamaModel}:`))
    const detail = !p.ok
      ? `Ollama not reachable at ${config.ollamaHost} (${p.error ?? 'no answer'})`
      : hasModel ? `Ollama at ${config.ollamaHost}, model ${config.ollamaModel}` : `Ollama at ${config.ollamaHost} has no model ${config.ollamaModel} (ollama pull ${config.ollamaModel})`
    if (probed?.ok !== (p.ok && hasModel)) log?.info('summary engine', { engine: p.ok && hasModel ? 'ollama' : 'builtin', detail })
    probed = { at: Date.now(), ok: p.ok && hasModel, detail }
    return probed
  }

  return {
    async current() {
      if (config.llm === 'builtin') return builtin
      // ready() learns the model's context size (so long text is split to fit) and fails early, as a
      // 502 with the fix, when Ollama is down or the model is not pulled.
      if (config.llm === 'ollama') {
        await ollama.ready()
        return ollama
      }
      if (!(await ollamaUsable()).ok) return builtin
      await ollama.ready()
      return ollama
    },
    lastKnown() {
      if (config.llm !== 'auto') return config.llm
      return probed ? (probed.ok ? 'ollama' : 'builtin') : 'auto (not checked yet)'
    },
    async describe() {
      if (config.llm === 'builtin') return { engine: 'builtin', detail: 'builtin (NOTESVC_LLM=builtin)' }
      if (config.llm === 'ollama') return { engine: 'ollama', detail: `Ollama at ${config.ollamaHost}, model ${config.ollamaModel} (NOTESVC_LLM=ollama)` }
      const p = await ollamaUsable()
      return p.ok ? { engine: 'ollama', detail: p.detail } : { engine: 'builtin', detail: `builtin; ${p.detail}` }
    },
  }
}
