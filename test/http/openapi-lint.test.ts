import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp } from '../helpers/app'
import { ROOT, run, tempDir } from '../helpers/process'

/**
 * The document as outside tools see it: served by the app, written to a file, and linted by Redocly
 * (recommended rules) and Spectral (spectral:oas) through their command lines, with the rule files
 * of the repository. Neither may report an error or a warning; a rule that does not fit is switched
 * off in redocly.yaml or .spectral.yaml with its reason.
 */
const dir = tempDir('notesvc-openapi-')
afterAll(() => dir.remove())

async function servedDocument(): Promise<string> {
  const t = createTestApp()
  const res = await t.app.handle(new Request('http://localhost/v1/openapi.json'))
  expect(res.status).toBe(200)
  const file = join(dir.path, 'openapi.json')
  writeFileSync(file, await res.text())
  return file
}

interface Finding { tool: string; rule: string; severity: string; message: string; where: string }

async function redocly(file: string): Promise<Finding[]> {
  const r = await run([join(ROOT, 'node_modules/.bin/redocly'), 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'])
  const report = JSON.parse(r.stdout) as { problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[] }
  return report.problems.map(p => ({ tool: 'redocly', rule: p.ruleId, severity: p.severity, message: p.message, where: p.location[0]?.pointer ?? '' }))
}

const SPECTRAL_SEVERITY = ['error', 'warn', 'info', 'hint']

async function spectral(file: string): Promise<Finding[]> {
  const r = await run([join(ROOT, 'node_modules/.bin/spectral'), 'lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet'])
  const results = JSON.parse(r.stdout) as { code: string; severity: number; message: string; path: string[] }[]
  return results.map(p => ({ tool: 'spectral', rule: p.code, severity: SPECTRAL_SEVERITY[p.severity] ?? String(p.severity), message: p.message, where: p.path.join('/') }))
}

describe('the served OpenAPI document passes the linters outside tools use', () => {
  test('Redocly (recommended) and Spectral (spectral:oas): no error, no warning', async () => {
    const file = await servedDocument()
    const [fromRedocly, fromSpectral] = await Promise.all([redocly(file), spectral(file)])
    // hints and infos are advice, not findings
    const findings = [...fromRedocly, ...fromSpectral].filter(f => f.severity === 'error' || f.severity === 'warn')
    expect(findings).toEqual([])
  })

  test('the linters do find what they are run for: a leaked validation keyword and an unknown scheme', async () => {
    const file = await servedDocument()
    const doc = JSON.parse(await Bun.file(file).text())
    const list = doc.paths['/v1/notes'].get
    list.security = [{ cookie: [] }]
    list.parameters[0].schema.error = 'must be a date-time'
    writeFileSync(file, JSON.stringify(doc))
    const [fromRedocly, fromSpectral] = await Promise.all([redocly(file), spectral(file)])
    expect(fromRedocly.filter(f => f.severity === 'error').map(f => f.rule).sort()).toEqual(['security-defined', 'struct'])
    expect(fromSpectral.filter(f => f.severity === 'error').map(f => f.rule)).toEqual(['security-scheme-defined'])
  })
})
