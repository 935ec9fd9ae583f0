import { AsrUnavailableError, type AsrEngine, type ChunkTranscription } from './engine'
import type { Unavailable } from './adapter'

/**
 * The stand-in NOTESVC_ASR=auto gives when no engine it may pick can run here: every use fails with
 * what each would need, so a route can refuse before it charges or queues anything.
 */
export class NoSpeechEngine implements AsrEngine {
  readonly name = 'none'
  readonly message: string
  constructor(why: Unavailable[]) {
    const remedies = why.map(w => w.remedy).join(', or ')
    this.message = `This server has no speech engine: ${why.map(w => w.lacks).join(', and ')}. ${remedies.charAt(0).toUpperCase()}${remedies.slice(1)}, then try again.`
  }
  async ready(): Promise<void> {
    throw new AsrUnavailableError(this.message)
  }
  async transcribeChunk(): Promise<ChunkTranscription> {
    throw new AsrUnavailableError(this.message)
  }
}

/** doctor's and the start-up log's sentence for none: what is missing, and the commands that install it. */
export const noneDetail = (why: Unavailable[]) => `none: ${why.map(w => w.missing).join(', and ')}; run ${why.map(w => w.install).join(' or ')}`
