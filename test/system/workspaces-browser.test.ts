import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import axe from 'axe-core'
import { firstLine, freePort, ROOT, tempDir } from '../helpers/process'
import { inSteps, submitWithEnter } from '../helpers/web'
import { startOidcProvider } from '../helpers/oidc-provider'

/**
 * Workspaces in headless Chromium (Debian's `chromium`) against a real server process: three people in
 * a team "Research". The owner makes the team, a folder, a team key, invites an editor (who joins
 * through the invitation's link, signing in first) and maps a group of the identity provider (a real
 * OpenID Connect provider on loopback) to viewer, so the viewer joins by signing in with single
 * sign-on; the editor renames a note the team key
 * made, the viewer sees the new title, and the viewer's write is refused with the API's message naming
 * the role; the owner removes the editor on the workspace page, and the editor's open page, their team
 * key and their next page are refused or back in their personal workspace. Another test: a workspace
 * and an email that are HTML run no script on the workspace page or in the switcher.
 * Screenshots (390 and 1280 px) go to docs/screenshots/ only with NOTESVC_SCREENSHOTS=1.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const SHOTS = process.env.NOTESVC_SCREENSHOTS === '1' ? join(ROOT, 'docs/screenshots') : null
const PASSWORD = 'a team passphrase'
const OWNER = 'owner@example.com'
const EDITOR = 'editor@example.com'
const VIEWER = 'viewer@example.com'
/** the viewer signs in with single sign-on at the loopback provider, in a group the team maps to viewer */
const VIEWERS_GROUP = 'research-viewers'
const CLIENT_ID = 'notesvc-workspaces'
const CLIENT_SECRET = 'a-client-secret-of-the-workspaces-test-0123456789'
const PROVIDER_NAME = 'Example Corp ID'
const HOSTILE_NAME = '<script>alert(1)</script>'
const HOSTILE_EMAIL = '"><img/src=x/onerror=alert(2)>@example.com'

const data = tempDir('notesvc-workspaces-')
let server: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
let browser: Browser | undefined
let base = ''
let serverSaid = ''
let provider: Awaited<ReturnType<typeof startOidcProvider>> | undefined

async function setPassword(env: Record<string, string | undefined>, email: string) {
  const cli = Bun.spawn(['bun', 'run', 'src/cli.ts', 'accounts', 'password', '--email', email], { cwd: ROOT, env, stdin: new TextEncoder().encode(PASSWORD + '\n'), stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text(), cli.exited])
  expect({ code, err, out }).toEqual({ code: 0, err: '', out: `${email}\tpassword set\taccount created\n` })
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  provider = await startOidcProvider({
    redirectUris: [`${base}/signin/oidc/callback`], clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
    people: { viewer: { email: VIEWER, email_verified: true, name: 'Vera', groups: [VIEWERS_GROUP, 'staff'] } },
  })
  const env = {
    ...process.env, NOTESVC_DATA_DIR: join(data.path, 'data'), PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_LLM: 'builtin',
    NOTESVC_OIDC_ISSUER: provider.issuer, NOTESVC_OIDC_CLIENT_ID: CLIENT_ID, NOTESVC_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    NOTESVC_OIDC_PROVIDER_NAME: PROVIDER_NAME, NOTESVC_OIDC_SCOPES: 'openid email profile groups', NOTESVC_OIDC_GROUPS_CLAIM: 'groups',
  }
  for (const email of [OWNER, EDITOR, HOSTILE_EMAIL]) await setPassword(env, email)
  server = Bun.spawn(['bun', 'run', 'test/fixtures/web-server.ts'], { cwd: ROOT, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  expect(await firstLine(server.stdout)).toBe(`listening ${port}`)
  void (async () => { for await (const chunk of server!.stderr) serverSaid = (serverSaid + new TextDecoder().decode(chunk)).slice(-4000) })()
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'],
  })
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  server?.kill('SIGTERM')
  await server?.exited
  await provider?.stop()
  data.remove()
})

interface Person { context: BrowserContext; page: Page; errors: string[]; alerts: string[] }

/** A person's own browser (cookies of their own); confirm() accepted; alerts counted, never shown. */
async function person(width = 1280, o: { bypassCSP?: boolean } = {}): Promise<Person> {
  const context = await browser!.newContext({ viewport: { width, height: 900 }, bypassCSP: o.bypassCSP })
  const alerts: string[] = []
  await context.exposeFunction('__countAlert', (what: string) => { alerts.push(what) })
  // a script the page should never run would call alert: counted, with what it said
  await context.addInitScript(() => { (window as any).alert = (x: unknown) => (window as any).__countAlert(String(x)) })
  const page = await context.newPage()
  page.setDefaultTimeout(45_000)
  const errors: string[] = []
  page.on('pageerror', e => errors.push(String(e)))
  // the refused calls (403, 401) are what some steps look for: their console lines do not count
  page.on('console', m => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()) })
  page.on('dialog', d => void d.accept())
  return { context, page, errors, alerts }
}

async function signIn(page: Page, email: string, path: string) {
  await page.goto(`${base}${path}`)
  expect(new URL(page.url()).pathname).toBe('/signin')
  // an address the browser's own check of type=email refuses (the HTML one) is the server's to judge
  await page.$eval('form[action="/signin"]', f => { (f as HTMLFormElement).noValidate = true })
  await page.fill('input[name=email]', email)
  await page.fill('input[name=password]', PASSWORD)
  await Promise.all([page.waitForURL(u => u.pathname === path), page.click('button[type=submit]')])
}

/** The header's menu: the options' texts and the selected one's. */
async function switcher(page: Page): Promise<{ options: string[]; current: string }> {
  return page.evaluate(() => {
    const s = document.getElementById('workspace-select') as HTMLSelectElement
    return { options: [...s.options].map(o => o.textContent!), current: s.selectedOptions[0]!.textContent! }
  })
}

/** axe-core in the page: its serious and critical violations (none expected). */
async function seriousViolations(page: Page): Promise<{ id: string; nodes: number }[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source)
  const found = await page.evaluate(async () => (await (window as any).axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }))) as { id: string; impact: string; nodes: number }[]
  return found.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({ id: v.id, nodes: v.nodes }))
}

async function shoot(page: Page, name: string) {
  if (!SHOTS) return
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 })
    await page.screenshot({ path: join(SHOTS, `workspace-${name}-${width}px.png`), fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

/** An invitation made on the workspace page: its link, shown once. */
async function invite(page: Page, email: string, role: string): Promise<string> {
  await page.$eval('#invite-form', f => { (f as HTMLFormElement).noValidate = true })
  await page.fill('#invite-email', email)
  await page.selectOption('#invite-role', role)
  await page.click('#invite-form button[type=submit]')
  await page.locator('#invitations li').filter({ hasText: `${email} as ${role}` }).waitFor()
  const link = (await page.locator('#invite-link').textContent())!
  expect(link).toStartWith(`${base}/invitations/`)
  return link
}

/** Signs in through an invitation's link (sent to sign in first, then back) and joins: the team's library opens. */
async function joinTeam(p: Person, email: string, link: string, as: string) {
  await signIn(p.page, email, new URL(link).pathname)
  await expect(p.page.locator('#accept-invitation').textContent()).resolves.toBe(`Join Research as ${as}`)
  expect(await seriousViolations(p.page)).toEqual([])
  await Promise.all([p.page.waitForURL(`${base}/`), p.page.click('#accept-invitation')])
  await p.page.waitForSelector('#folders[aria-busy=false]')
  expect((await switcher(p.page)).current).toBe(`Research (${as})`)
}

const api = (key: string, path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } })

test('three people in a team: an invitation and a single sign-on group, an edit seen by a viewer, a viewer refused, a member removed', async () => {
  await inSteps(() => serverSaid, async step => {
    const owner = await person()
    const editor = await person()
    const viewer = await person(390)
    const o = owner.page

    step('the owner signs in and makes the team "Research"')
    await signIn(o, OWNER, '/')
    expect(await switcher(o)).toEqual({ options: ['Personal'], current: 'Personal' })
    await Promise.all([o.waitForURL(u => u.pathname === '/settings/workspace'), o.click('#new-team-link')])
    await o.fill('#new-team-name', 'Research')
    await Promise.all([o.waitForURL(u => u.pathname === '/settings/workspace' && u.hash === ''), o.click('#new-team-form button[type=submit]')])
    await expect(o.locator('#workspace-title').textContent()).resolves.toBe('Research')
    expect(await switcher(o)).toEqual({ options: ['Personal', 'Research (owner)'], current: 'Research (owner)' })
    await o.locator('#members tr[data-member="owner@example.com"]').waitFor()

    step('the owner makes a folder in the team\'s library, and a team key')
    await o.goto(`${base}/`)
    await o.waitForSelector('#folders[aria-busy=false]')
    await o.click('.new-folder summary')
    await o.fill('#new-folder-name', 'Shared')
    await o.click('#new-folder button[type=submit]')
    const folder = o.locator('#folders li.folder', { hasText: 'Shared' })
    await folder.waitFor()
    const folderId = (await folder.getAttribute('data-folder-id'))!
    await o.goto(`${base}/settings/workspace`)
    await o.fill('#workspace-key-name', 'owner script')
    await o.click('#workspace-key-form button[type=submit]')
    const ownerKey = (await o.locator('#workspace-new-key').textContent())!
    expect(ownerKey).toMatch(/^svc_live_/)

    step('a note made through the API with the team key, in the shared folder')
    const made = await api(ownerKey, '/v1/notes', { method: 'POST', body: JSON.stringify({ title: 'Kick-off', content: 'We plan the launch.', folderId }) })
    expect(made.status).toBe(201)
    const noteId = ((await made.json()) as { id: string }).id

    step('the owner invites an editor, and maps the provider\'s group to viewer')
    const editorLink = await invite(o, EDITOR, 'editor')
    await o.fill('#sso-mappings', `${VIEWERS_GROUP} = viewer`)
    await o.click('#sso-form button[type=submit]')
    await o.locator('#workspace-activity li[data-action="workspace.sso_groups_set"]').waitFor()
    await expect(o.locator('#sso-mappings').inputValue()).resolves.toBe(`${VIEWERS_GROUP} = viewer`)
    expect(await seriousViolations(o)).toEqual([])
    // a new free team has no credits of its own: the page says who adds them, with the team's reserved email
    const team = ((await (await api(ownerKey, '/v1/workspaces')).json()) as { data: { id: string; current: boolean }[] }).data.find(w => w.current)!.id
    await expect(o.locator('#usage-summary').textContent()).resolves.toContain(`Ask the operator of this notesvc to add credits (notesvc accounts credit --email ${team}@workspace.invalid --credits N)`)
    await shoot(o, 'admin')

    step('the editor joins through the link and renames the note in the shared folder')
    await joinTeam(editor, EDITOR, editorLink, 'editor')
    const e = editor.page
    await e.locator('#folders li.folder', { hasText: 'Shared' }).locator('a').click()
    await Promise.all([e.waitForURL(`${base}/notes/${noteId}`), e.locator(`li.note[data-note-id="${noteId}"] a.note-title`).click()])
    await e.waitForFunction(() => document.getElementById('note-title')?.textContent === 'Kick-off')
    await e.fill('#rename-input', 'Kick-off, edited by the editor')
    await e.click('#rename-form button[type=submit]')
    await e.waitForFunction(() => document.getElementById('action-status')?.textContent === 'Renamed.')

    step('the editor makes a key for the team on the settings page')
    await e.goto(`${base}/settings`)
    await expect(e.locator('#keys-workspace').textContent()).resolves.toContain('Keys you made for Research')
    await e.fill('#create-key input[name=name]', 'editor laptop')
    expect(await submitWithEnter(e, '#create-key input[name=name]', '/settings/keys')).toBe(200)
    await expect(e.locator('.newkey b').textContent()).resolves.toBe('New live key “editor laptop” for Research.')
    const editorKey = (await e.locator('#new-key').textContent())!
    const listed = await api(editorKey, '/v1/notes')
    expect(((await listed.json()) as { data: { title: string }[] }).data.map(n => n.title)).toEqual(['Kick-off, edited by the editor'])

    step('the viewer signs in with single sign-on, is a viewer of Research by the group, and sees the edit')
    const v = viewer.page
    await v.goto(`${base}/`)
    expect(new URL(v.url()).pathname).toBe('/signin')
    await v.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click()
    await v.waitForURL(u => u.origin === provider!.issuer)
    await v.locator('input[name=login]').fill('viewer')
    await v.locator('input[name=password]').fill('any password the dev login accepts')
    await v.getByRole('button', { name: 'Sign-in' }).click()
    await v.getByRole('button', { name: 'Continue' }).click()
    await v.waitForURL(`${base}/`)
    expect(await switcher(v)).toEqual({ options: ['Personal', 'Research (viewer)'], current: 'Personal' })
    await v.selectOption('#workspace-select', { label: 'Research (viewer)' })
    await v.click('#workspace-go')
    // the same URL again (/): the new page is told from the old by the option the server marked selected
    await v.locator('#workspace-select option[selected]', { hasText: 'Research (viewer)' }).waitFor({ state: 'attached' })
    await v.waitForSelector('#folders[aria-busy=false]')
    await v.locator(`li.note[data-note-id="${noteId}"] a.note-title`).waitFor()
    await expect(v.locator(`li.note[data-note-id="${noteId}"] a.note-title`).textContent()).resolves.toBe('Kick-off, edited by the editor')
    expect(await v.locator('#open-upload').isVisible()).toBe(false)
    await v.goto(`${base}/notes/${noteId}`)
    await v.waitForFunction(() => document.getElementById('note-title')?.textContent === 'Kick-off, edited by the editor')
    expect({ pin: await v.locator('#pin').isVisible(), del: await v.locator('#delete').isVisible(), rename: await v.locator('#rename-form').isVisible() }).toEqual({ pin: false, del: false, rename: false })
    expect(await seriousViolations(v)).toEqual([])
    await shoot(v, 'viewer-note')

    step('a write from the viewer\'s page is refused by the API, and the page says why')
    // a page that shows a write control anyway (an old page, an altered one): the API is the gate
    await v.evaluate(() => { document.body.dataset.role = 'editor' })
    await v.click('#pin')
    await v.waitForFunction(() => /viewer/.test(document.getElementById('action-status')?.textContent ?? ''))
    await expect(v.locator('#action-status').textContent()).resolves.toMatch(/^Your role in this workspace is viewer; updateNote needs editor or above\./)

    step('the editor opens the note again; the owner removes the editor on the workspace page')
    await e.goto(`${base}/notes/${noteId}`)
    await e.waitForFunction(() => document.getElementById('note-title')?.textContent === 'Kick-off, edited by the editor')
    await o.goto(`${base}/settings/workspace`)
    const editorRow = o.locator('#members tr[data-member="editor@example.com"]')
    await editorRow.waitFor()
    await editorRow.locator('button', { hasText: 'Remove' }).click()
    await editorRow.waitFor({ state: 'detached' })
    await o.locator('#workspace-activity li[data-action="workspace.member_removed"]', { hasText: `${EDITOR} (1 key revoked)` }).waitFor()
    expect(await o.locator('#members tbody tr').evaluateAll(rows => rows.map(r => [(r as HTMLElement).dataset.member, r.querySelectorAll('td')[2]!.textContent]))).toEqual([[OWNER, 'created it'], [VIEWER, 'single sign-on']])

    step('the editor: the open page is refused, the team key is refused, the next page is the personal workspace')
    await e.fill('#rename-input', 'renamed after removal')
    await e.click('#rename-form button[type=submit]')
    await e.waitForFunction(() => /not a member/.test(document.getElementById('action-status')?.textContent ?? ''))
    await expect(e.locator('#action-status').textContent()).resolves.toStartWith('You are not a member of the workspace')
    expect((await api(editorKey, '/v1/notes')).status).toBe(401)
    expect(((await (await api(ownerKey, `/v1/notes/${noteId}`)).json()) as { title: string }).title).toBe('Kick-off, edited by the editor')
    await e.goto(`${base}/`)
    expect(await switcher(e)).toEqual({ options: ['Personal'], current: 'Personal' })

    for (const p of [owner, editor, viewer]) {
      expect(p.errors).toEqual([])
      expect(p.alerts).toEqual([])
      await p.context.close()
    }
  })
}, 240_000)

test('a workspace named and a member emailed as HTML: no script runs on the workspace page or in the switcher', async () => {
  await inSteps(() => serverSaid, async step => {
    // without the pages' CSP, so markup that slipped through would run and be counted
    const owner = await person(1280, { bypassCSP: true })
    const o = owner.page
    step('the owner makes the workspace')
    await signIn(o, OWNER, '/settings/workspace')
    await o.fill('#new-team-name', HOSTILE_NAME)
    await Promise.all([o.waitForResponse(r => new URL(r.url()).pathname === '/workspace/switch'), o.click('#new-team-form button[type=submit]')])
    await o.locator('#workspace-title', { hasText: HOSTILE_NAME }).waitFor()
    await o.waitForSelector('#workspace-activity li')
    expect(owner.alerts).toEqual([])
    expect((await switcher(o)).current).toBe(`${HOSTILE_NAME} (owner)`)

    step('invites the HTML email; that person joins')
    const link = await invite(o, HOSTILE_EMAIL, 'admin')
    const member = await person(1280, { bypassCSP: true })
    await signIn(member.page, HOSTILE_EMAIL, new URL(link).pathname)
    await expect(member.page.locator('#accept-invitation').textContent()).resolves.toBe(`Join ${HOSTILE_NAME} as admin`)
    await Promise.all([member.page.waitForURL(`${base}/`), member.page.click('#accept-invitation')])
    await member.page.goto(`${base}/settings/workspace`)
    await member.page.locator('#members tr', { hasText: OWNER }).waitFor()

    step('the workspace page and the switcher show them as text')
    await o.reload()
    const row = o.locator('#members tbody tr').nth(1)
    await row.waitFor()
    await expect(row.locator('td').first().textContent()).resolves.toBe(HOSTILE_EMAIL)
    await o.locator('#workspace-activity li').first().waitFor()
    await o.goto(`${base}/`)
    await o.waitForSelector('#folders[aria-busy=false]')
    expect(await o.locator('img').count()).toBe(0)
    await member.page.goto(`${base}/`)
    await member.page.waitForSelector('#folders[aria-busy=false]')
    expect((await switcher(member.page)).current).toBe(`${HOSTILE_NAME} (admin)`)
    await expect(member.page.locator('header .who').textContent()).resolves.toBe(HOSTILE_EMAIL)
    for (const p of [o, member.page]) expect(await p.evaluate(() => ({ imgs: document.images.length, inline: [...document.scripts].filter(s => !s.src).length }))).toEqual({ imgs: 0, inline: 0 })
    for (const p of [owner, member]) {
      expect({ alerts: p.alerts, errors: p.errors }).toEqual({ alerts: [], errors: [] })
      await p.context.close()
    }
  })
}, 120_000)
