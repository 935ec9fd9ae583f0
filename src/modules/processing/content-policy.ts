import { readFileSync } from 'node:fs'
import { ApiError } from '../../http/errors'

/**
 * The operator's deny-list: one phrase per line (matched as whole words, case-insensitive) or a
 * `/regular expression/flags` line; `#` starts a comment. Text that matches is refused with 422
 * before any model sees it.
 */
export function loadContentPolicy(path: string | undefined): RegExp[] {
  if (!path) return []
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new Error(`NOTESVC_CONTENT_POLICY=${path} cannot be read (${(err as Error).message}); point it at a text file with one phrase per line`)
  }
  return parseContentPolicy(text)
}

function parseContentPolicy(text: string): RegExp[] {
  const rules: RegExp[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const re = /^\/(.+)\/([a-z]*)$/.exec(line)
    if (re) rules.push(new RegExp(re[1]!, re[2]!.includes('i') ? re[2] : `${re[2]}i`))
    else rules.push(new RegExp(`(^|\\W)${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|\\W)`, 'i'))
  }
  return rules
}

export function checkContentPolicy(rules: RegExp[], text: string): void {
  if (rules.some(r => r.test(text))) {
    throw new ApiError('content_policy', 'The text was refused by this server\'s content policy; nothing was charged. Remove the refused content, or ask the operator about the policy.')
  }
}
