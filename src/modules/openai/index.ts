import type { authGuard } from '../../http/auth'
import { contractRoutes, route, type Reply } from '../../http/contract'
import { withCreditsRemaining } from '../../http/responses'
import { createAudioTranscription, createAudioTranslation, listModels } from './contract'
import type { OpenAiService } from './service'

export function openAiRoutes(deps: { guard: ReturnType<typeof authGuard>; openai: OpenAiService }) {
  const { openai } = deps
  return contractRoutes('openai-routes', deps.guard, [
    // the body is not parsed before the handler (no JSON body declared): the service streams it
    route(createAudioTranscription, async ({ principal, request, set }) => {
      const answer = withCreditsRemaining(set, await openai.transcribeUpload(principal, request))
      set.headers['content-type'] = answer.contentType
      return answer.body as Reply<typeof createAudioTranscription>
    }),
    route(createAudioTranslation, async ({ principal, request, set }) => {
      const answer = withCreditsRemaining(set, await openai.translateUpload(principal, request))
      set.headers['content-type'] = answer.contentType
      return answer.body as Reply<typeof createAudioTranslation>
    }),
    route(listModels, () => openai.listModels()),
  ])
}
