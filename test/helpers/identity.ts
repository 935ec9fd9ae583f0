import { OPERATION_TABLE } from '../../src/operations'
import { fixedClock } from '../../src/clock'
import type { Store } from '../../src/db/store'
import { createIdGenerator } from '../../src/ids'
import { createAccountsRepo } from '../../src/modules/accounts/repo'
import { createAccountsService, keyCacheFor } from '../../src/modules/accounts/service'
import { createCreditsRepo } from '../../src/modules/credits/repo'
import { createCreditsService } from '../../src/modules/credits/service'

/** The credits and accounts services over a store, as createServices builds them, on a fixed clock. */
export function identityServices(store: Store, at = '2026-11-10T12:00:00.000Z') {
  const clock = fixedClock(at)
  const ids = createIdGenerator(() => clock.now().getTime())
  const credits = createCreditsService({ repo: createCreditsRepo(store), clock, ids, topUpCommand: '', operations: OPERATION_TABLE })
  const accounts = createAccountsService({ repo: createAccountsRepo(store), clock, ids, keyCache: keyCacheFor(store, true), credits })
  return { clock, ids, credits, accounts }
}
