import type { authGuard } from '../../http/auth'
import { contractRoutes, route } from '../../http/contract'
import { withCreditsRemaining } from '../../http/responses'
import { createSummary, createTranscription, createYoutubeSummary } from './contract'
import type { ProcessingService } from './service'

export function processingRoutes(deps: { guard: ReturnType<typeof authGuard>; processing: ProcessingService }) {
  const { processing } = deps
  return contractRoutes('processing-routes', deps.guard, [
    route(createTranscription, async ({ principal, body, set }) => withCreditsRemaining(set, await processing.createTranscription(principal, body))),
    route(createSummary, async ({ principal, body, set }) => withCreditsRemaining(set, await processing.createSummary(principal, body))),
    route(createYoutubeSummary, async ({ principal, body, set }) => withCreditsRemaining(set, await processing.createYoutubeSummary(principal, body))),
  ])
}
