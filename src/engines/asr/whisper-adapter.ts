import { existsSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { commandLine } from '../../command-name'
import type { SpeechEngineAdapter } from './adapter'
import { listModels, modelPath } from './models'
import { offlineAdvice } from './pull'
import { createWhisperEngine, pullCommand } from './whisper'

/** Whether the model host answers at all (any HTTP status), within 3 seconds. */
async function modelHostReachable(url: string): Promise<{ ok: boolean; detail: string }> {
  try {
    await fetch(url, { method: 'HEAD', redirect: 'manual', signal: AbortSignal.timeout(3000) })
    return { ok: true, detail: `${new URL(url).host} reachable` }
  } catch (err) {
    return { ok: false, detail: `${new URL(url).host} cannot be reached from here (${(err as Error).message})` }
  }
}

/**
 * `NOTESVC_ASR=whisper`: whisper.cpp in this process (./whisper.ts), on the model NOTESVC_WHISPER_MODEL
 * names in the models folder; `auto` takes it first, whenever that file is there.
 */
export const whisperAdapter: SpeechEngineAdapter<undefined> = {
  name: 'whisper',
  auto: true,
  label: ctx => `whisper.cpp, model ${modelPath(ctx.modelsDir, ctx.whisperModel)}`,

  availability(ctx) {
    const model = modelPath(ctx.modelsDir, ctx.whisperModel)
    if (existsSync(model)) return { ok: true, detail: `whisper.cpp, model ${model}` }
    return {
      ok: false,
      missing: `no Whisper model at ${model}`,
      install: `\`${pullCommand(model)}\``,
      lacks: `no Whisper model (${ctx.whisperModel}) in its models folder`,
      remedy: `download the model with \`${pullCommand(model)}\``,
    }
  },

  create: (ctx, _settings, log) => createWhisperEngine({ modelPath: modelPath(ctx.modelsDir, ctx.whisperModel), log, contexts: ctx.asrSlots }),

  // every installed model, whichever engine is in use (OpenAI's `model` names them)
  models: ctx => listModels(ctx.modelsDir).map(m => ({ id: m.name, created: Math.floor(statSync(m.path).mtimeMs / 1000) })),

  async doctor(ctx) {
    const path = modelPath(ctx.modelsDir, ctx.whisperModel)
    const ok = existsSync(path)
    // A missing model: `models pull` when its host answers, else the offline way, `models import`.
    const reach = ok ? null : await modelHostReachable(`${ctx.modelsUrl}/${basename(path)}`)
    return [{
      name: 'whisper model', ok,
      detail: ok ? path : `${ctx.whisperModel} is missing (${path})${reach && !reach.ok ? `; ${reach.detail}` : ''}`,
      fix: ok ? undefined : reach?.ok ? commandLine(`models pull ${ctx.whisperModel}`) : offlineAdvice(ctx.whisperModel, ctx.modelsUrl),
    }]
  },
}
