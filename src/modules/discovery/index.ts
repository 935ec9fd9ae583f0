import type { Config } from '../../config'
import type { Operation } from '../../http/contract'
import { docsRoutes } from './docs'

/** The API's document and reference pages (`/v1/openapi.json`, `/docs`, `/docs/errors`), from the operations. */
export function discoveryRoutes(deps: { config: Config; operations: readonly Operation[] }) {
  return docsRoutes(deps.config, deps.operations)
}
