/**
 * A diarization session's thread (thread.ts): builds the engine named in the first message, feeds it
 * the samples that follow, and answers the finish message with the diarization (voice prints as plain
 * arrays) or the error's message.
 */
import { createBuiltinDiarizationEngine } from './builtin'
import type { DiarizationSession } from './engine'

declare const self: Worker

let session: DiarizationSession | null = null
let failure: string | null = null

self.onmessage = async (e: MessageEvent) => {
  const m = e.data as { type: 'start'; engine: string } | { type: 'feed'; samples: Float32Array } | { type: 'finish'; speakers?: object }
  try {
    if (m.type === 'start') {
      if (m.engine !== 'builtin') throw new Error(`the diarization thread runs the builtin engine, not ${m.engine}`)
      session = createBuiltinDiarizationEngine().start()
    } else if (m.type === 'feed') {
      if (!failure) session?.feed(m.samples)
    } else {
      if (failure) throw new Error(failure)
      const d = await session!.finish({ speakers: m.speakers })
      self.postMessage({ diarization: { ...d, embeddings: d.embeddings?.map(x => Array.from(x)) } })
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    if (m.type === 'feed') failure = message
    else self.postMessage({ error: message })
  }
}
