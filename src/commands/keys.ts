import { parseScopes, type Plan } from '../modules/accounts/service'
import { commandLine } from '../command-name'
import { stringFlag, UsageError } from './args'
import { out, type CommandContext } from './command'
import { openServices } from './data-folder'

/** `keys create|list|revoke`: an account's API keys. */
export async function keysCommand({ args: p, config }: CommandContext): Promise<number> {
  const [, sub, arg] = p.positional
  const { services, close } = await openServices(config, sub === 'create')
  try {
    if (sub === 'create') {
      const plan = stringFlag(p, 'plan') as Plan | undefined
      if (plan && plan !== 'free' && plan !== 'pro') throw new UsageError('--plan must be free or pro')
      const created = await services.accounts.createKey({
        email: stringFlag(p, 'email', true),
        plan,
        sandbox: p.flags.sandbox === true || p.flags.sandbox === 'true',
        scopes: parseScopes(stringFlag(p, 'scopes')),
        name: stringFlag(p, 'name'),
      })
      out(created.key)
      process.stderr.write(`created ${created.info.sandbox ? 'sandbox' : 'live'} key ${created.info.id} for ${created.account.email} with scopes ${created.info.scopes.join(',')}; it is shown only this once\n`)
      return 0
    }
    if (sub === 'list') {
      for (const k of await services.accounts.listKeys(stringFlag(p, 'email', true))) out(keyLine(k))
      return 0
    }
    if (sub === 'revoke') {
      if (!arg) throw new UsageError(`name the key to revoke: ${commandLine('keys revoke <key-id-or-start>')}`)
      const k = await services.accounts.revokeKey(arg)
      out(keyLine(k))
      return 0
    }
    throw new UsageError('keys needs a subcommand: create, list or revoke')
  } finally {
    await close()
  }
}

function keyLine(k: { id: string; start: string; sandbox: boolean; name: string | null; scopes: string[]; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }) {
  return [k.id, `${k.start}…`, k.sandbox ? 'sandbox' : 'live', k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.name ?? '-', k.scopes.join(','), `created ${k.createdAt}`, `last used ${k.lastUsedAt ?? 'never'}`].join('\t')
}
