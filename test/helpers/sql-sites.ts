/**
 * Where a recorded SQL statement comes from, for the repository check (scope-recorder.ts): the string or
 * template literal in src/modules that matches its text (its `${…}` pieces standing for any text), and
 * the repository method around that line; else the repository frame of the stack. The literal comes
 * first because a repository's arrow method (`get: (l, id) => store.get(…)`) is a tail call, which
 * JavaScriptCore leaves out of stacks.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** A statement's text on one line, as the recorder keeps it. */
export const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim()

/** The method a repository line belongs to: the nearest property name above it at an object literal's indentation. */
const methodNames = new Map<string, string[]>()
function methodAt(file: string, line: number): string {
  let lines = methodNames.get(file)
  if (!lines) methodNames.set(file, (lines = readFileSync(file, 'utf8').split('\n')))
  for (let i = line - 1; i >= 0; i--) {
    // a repository's methods sit at four spaces (`return {` in `createXRepo`), its helpers are functions
    const m = /^ {4}(?:async\s+)?([A-Za-z_]\w*)\s*(?::|\()/.exec(lines[i]!) ?? /^\s*(?:async\s+)?function\s+([A-Za-z_]\w*)/.exec(lines[i]!)
    if (m && !/^(if|for|while|return|switch|const|let|await|try|catch|else)$/.test(m[1]!)) return m[1]!
  }
  return '?'
}

/** A statement text of a source file, as a pattern (its `${…}` pieces any text), with where it is. */
interface SqlSite {
  pattern: RegExp
  /** characters the pattern fixes: of several that match, the most specific names the statement */
  fixed: number
  file: string
  line: number
}

const STATEMENT_START = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i

/** The string and template literals of a source file that hold SQL statements. */
function sqlSites(file: string, shown: string): SqlSite[] {
  const text = readFileSync(file, 'utf8')
  const out: SqlSite[] = []
  const escape = (x: string) => oneLine(x).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  for (let i = 0; i < text.length; i++) {
    const quote = text[i]
    if (quote !== '`' && quote !== "'") continue
    const start = i
    const parts: string[] = []
    let piece = ''
    for (i++; i < text.length && text[i] !== quote; i++) {
      if (quote === '`' && text[i] === '$' && text[i + 1] === '{') {
        parts.push(piece)
        piece = ''
        let depth = 1
        for (i += 2; i < text.length && depth > 0; i++) {
          if (text[i] === '{') depth++
          else if (text[i] === '}') depth--
        }
        i--
      } else if (text[i] === '\\') piece += text[++i]
      else if (quote === "'" && text[i] === '\n') break
      else piece += text[i]
    }
    parts.push(piece)
    const whole = parts.join(' ')
    if (!STATEMENT_START.test(parts[0]!) && !(parts[0]!.trim() === '' && STATEMENT_START.test(parts.slice(1).join(' ')))) {
      if (!/\b(FROM|INTO|UPDATE|WHERE|SET)\b/.test(whole) || parts.length === 1) continue
    }
    const fixed = parts.reduce((n, p) => n + oneLine(p).length, 0)
    if (fixed < 12) continue
    out.push({ pattern: new RegExp(`^${parts.map(escape).join('[\\s\\S]*?')}$`.replace(/\\ /g, '\\s*')), fixed, file: shown, line: text.slice(0, start).split('\n').length })
  }
  return out
}

let siteIndex: { sites: SqlSite[]; files: Set<string> } | null = null

/** The source sites of every statement of src/modules (and the files `more` adds), read once. */
function sitesOf(more: string[] = []): SqlSite[] {
  siteIndex ??= { sites: [], files: new Set() }
  const root = join(import.meta.dir, '..', '..')
  const files = [...new Bun.Glob('src/modules/**/*.ts').scanSync(root), ...more].filter(f => !siteIndex!.files.has(f))
  for (const f of files) {
    siteIndex.files.add(f)
    siteIndex.sites.push(...sqlSites(join(root, f), f))
  }
  return siteIndex.sites
}

/** Where a statement's text is written (file:line and the method there), or null when no literal matches it. */
function statementSite(sql: string, more: string[] = []): string | null {
  const text = oneLine(sql.replace(/\$\d+/g, '?'))
  let best: SqlSite | null = null
  for (const site of sitesOf(more)) if (site.pattern.test(text) && (!best || site.fixed > best.fixed)) best = site
  return best && `${best.file}:${best.line} ${methodAt(join(import.meta.dir, '..', '..', best.file), best.line)}`
}

/** The repository frame of the current stack (a file named *repo*), else the first frame in src/ outside src/db/. */
export function repoFrame(stack: string): string {
  const frames = stack.split('\n').map(l => /\(?(\/[^()\s]+\.ts):(\d+):\d+\)?$/.exec(l.trim())).filter(m => m !== null && !m[1]!.includes('/node_modules/'))
  const pick = frames.find(m => /repo[^/]*\.ts$/.test(m![1]!)) ?? frames.find(m => /\/src\//.test(m![1]!) && !/\/src\/db\//.test(m![1]!))
  if (!pick) return '(no src frame)'
  const [, file, line] = pick
  const from = Math.max(file!.lastIndexOf('/src/'), file!.lastIndexOf('/test/'))
  return `${file!.slice(from + 1)}:${line} ${methodAt(file!, Number(line))}`
}

const sites = new Map<string, string | null>()
/** statementSite, remembered by text */
export function siteOf(sql: string, more: string[]): string | null {
  if (!sites.has(sql)) sites.set(sql, statementSite(sql, more))
  return sites.get(sql)!
}

