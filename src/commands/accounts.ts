import { AccountError, type Plan } from '../modules/accounts/service'
import { stringFlag, UsageError } from './args'
import { out, type CommandContext } from './command'
import { openServices } from './data-folder'

/** `accounts credit|plan|password --email E`. */
export async function accountsCommand({ args: p, config }: CommandContext): Promise<number> {
  const sub = p.positional[1]
  const { services, close } = await openServices(config, sub === 'password')
  try {
    const email = stringFlag(p, 'email', true)
    if (sub === 'credit') {
      const raw = stringFlag(p, 'credits', true)
      const credits = Number(raw)
      const account = await services.accounts.addPurchasedCredits(email, credits)
      const b = await services.credits.balance(account.id)
      out(`${account.email}\tplan ${b.plan}\tgrant ${b.grantRemaining}/${b.grantTotal}\tprepaid ${b.purchasedRemaining}\ttotal ${b.totalRemaining}`)
      return 0
    }
    if (sub === 'plan') {
      const plan = stringFlag(p, 'plan', true) as Plan
      const account = await services.accounts.setPlan(email, plan)
      const b = await services.credits.balance(account.id)
      out(`${account.email}\tplan ${b.plan}\tgrant ${b.grantRemaining}/${b.grantTotal}\tprepaid ${b.purchasedRemaining}\ttotal ${b.totalRemaining}`)
      return 0
    }
    if (sub === 'password') {
      const password = await readNewPassword(p.flags['password-stdin'] === true)
      const r = await services.web.setPassword(email, password)
      out(`${r.email}\tpassword set${r.created ? '\taccount created' : ''}`)
      if (!config.passwordSignIn) process.stderr.write(`warning: password sign-in is off (NOTESVC_PASSWORD_SIGNIN=off), so this password cannot be used to sign in to the browser; people sign in with ${config.sso.providerName}. Set NOTESVC_PASSWORD_SIGNIN=on to use passwords again.\n`)
      return 0
    }
    throw new UsageError('accounts needs a subcommand: credit, plan or password')
  } finally {
    await close()
  }
}

/** One line typed on the terminal, not echoed. */
async function promptHidden(prompt: string): Promise<string> {
  process.stderr.write(prompt)
  const stty = (arg: string) => Bun.spawnSync(['stty', arg], { stdin: 'inherit', stdout: 'ignore', stderr: 'ignore' })
  stty('-echo')
  try {
    for await (const line of console) return line
    return ''
  } finally {
    stty('echo')
    process.stderr.write('\n')
  }
}

/** The new password: all of stdin (one trailing newline dropped) when piped, else asked twice. */
async function readNewPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin || !process.stdin.isTTY) {
    const text = await new Response(Bun.stdin.stream()).text()
    return text.replace(/\r?\n$/, '')
  }
  const first = await promptHidden('New password: ')
  const again = await promptHidden('Repeat it: ')
  if (first !== again) throw new AccountError('the two passwords differ; nothing was changed')
  return first
}
