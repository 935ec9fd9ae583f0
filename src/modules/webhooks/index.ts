import type { authGuard } from '../../http/auth'
import { contractRoutes, route } from '../../http/contract'
import { createWebhook, deleteWebhook, listWebhookDeliveries, listWebhooks } from './contract'
import type { WebhooksService } from './service'

export function webhooksRoutes(deps: { guard: ReturnType<typeof authGuard>; webhooks: WebhooksService }) {
  const { webhooks } = deps
  return contractRoutes('webhooks-routes', deps.guard, [
    route(listWebhooks, ({ principal }) => webhooks.list(principal)),
    route(createWebhook, async ({ principal, body, set }) => {
      const created = await webhooks.create(principal, body)
      set.status = 201
      return created
    }),
    route(deleteWebhook, async ({ principal, params }) => {
      await webhooks.delete(principal, params.id)
      return new Response(null, { status: 204 })
    }),
    route(listWebhookDeliveries, ({ principal, params }) => webhooks.deliveries(principal, params.id)),
  ])
}
