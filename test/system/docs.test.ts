import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../helpers/process'
import { createTestApp } from '../helpers/app'

// What a clone of the project holds: the README and docs/ must make sense with nothing else beside them.
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter(f => f.endsWith('.md')).map(f => `docs/${f}`)]
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')

describe('the README and docs/ stand on their own', () => {
  test.each(DOCS)('%s links only to files in the project, and they exist', file => {
    const text = read(file)
    const from = dirname(join(ROOT, file))
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(m => m[1]!).filter(t => !/^(https?:|mailto:|#)/.test(t))
    // paths written as code that climb out of the folder, such as `../shared/SPEC.md`
    const climbing = [...text.matchAll(/`(\.\.\/[^`\s]*)`/g)].map(m => m[1]!)
    for (const target of [...links, ...climbing]) {
      const path = resolve(from, target.split('#')[0]!)
      expect({ target, inProject: !relative(ROOT, path).startsWith('..') }).toEqual({ target, inProject: true })
    }
    for (const target of [...links, ...climbing]) expect({ target, exists: existsSync(resolve(from, target.split('#')[0]!)) }).toEqual({ target, exists: true })
  })

  test('the API reference the README names is what the server serves', async () => {
    expect(read('README.md')).toContain('`/docs`')
    expect(read('README.md')).toContain('`/v1/openapi.json`')
    const t = createTestApp()
    const docs = await t.app.handle(new Request('http://localhost/docs'))
    expect(docs.status).toBe(200)
    expect(docs.headers.get('content-type')).toStartWith('text/html')
    const openapi = await t.app.handle(new Request('http://localhost/v1/openapi.json'))
    expect(openapi.status).toBe(200)
    expect(((await openapi.json()) as { openapi: string }).openapi).toBe('3.1.0')
    expect((await t.app.handle(new Request('http://localhost/docs/errors'))).status).toBe(200)
  })

  test('docs/api.md lists every operation the server serves, with its path, scopes, cost, class and statuses', async () => {
    const t = createTestApp()
    const doc = (await (await t.app.handle(new Request('http://localhost/v1/openapi.json'))).json()) as any
    const served: Record<string, unknown> = {}
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        served[op.operationId] = {
          route: `${method.toUpperCase()} ${path}`,
          scopes: op.security.find((s: Record<string, string[]>) => s.apiKey)?.apiKey ?? [],
          cost: String(op['x-service-credits']),
          class: op['x-rate-limit-class'],
          statuses: Object.keys(op.responses).filter(s => !['400', '401', '403', '429', '500'].includes(s)).sort(),
        }
      }
    }
    const documented: Record<string, unknown> = {}
    for (const m of read('docs/api.md').matchAll(/^\| (\w+) \| `(\w+ [^`]+)` \| ([^|]+) \| ([^|]+) \| (\w+) \| ([^|]+) \|$/gm)) {
      documented[m[1]!] = {
        route: m[2],
        scopes: m[3]!.trim() === 'none' ? [] : m[3]!.trim().split(' and '),
        cost: m[4]!.trim(),
        class: m[5],
        statuses: m[6]!.trim().split(', ').sort(),
      }
    }
    expect(Object.keys(served).length).toBeGreaterThanOrEqual(21)
    expect(documented).toEqual(served)
  })
})
