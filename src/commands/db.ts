import { copyToPostgres, describeCopy } from '../db/copy'
import { createProgressBar } from '../progress'
import { stringFlag, UsageError } from './args'
import { out, type CommandContext } from './command'
import { announceDataDir } from './data-folder'

/** `db copy --to postgres://…`: this data folder's SQLite database into an empty PostgreSQL database. */
export async function dbCommand({ args: p, config }: CommandContext): Promise<number> {
  if (p.positional[1] !== 'copy') throw new UsageError('db needs a subcommand: copy')
  announceDataDir(config)
  const report = await copyToPostgres({
    sqlitePath: config.databasePath,
    targetUrl: stringFlag(p, 'to', true),
    progress: (table, total) => {
      const bar = createProgressBar(table.padEnd(18), undefined, undefined, 'rows')
      return { update: copied => bar.update({ received: copied, total }), done: bar.done }
    },
  })
  for (const line of describeCopy(report)) out(line)
  return 0
}
