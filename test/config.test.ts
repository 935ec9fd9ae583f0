import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { applyFlags, ConfigError, describeDataDir, loadConfig } from '../src/config'
import { tempDir } from './helpers/process'

describe('job workers and leases in the configuration', () => {
  test.each([
    // serve's default: twice the chunk slots (shared/DECISIONS.md)
    [{ NOTESVC_ASR_SLOTS: '2' }, 4, 60],
    [{ NOTESVC_ASR_SLOTS: '3' }, 6, 60],
    [{ NOTESVC_WORKERS: '0' }, 0, 60],
    [{ NOTESVC_WORKERS: '64', NOTESVC_JOB_LEASE_SECONDS: '2' }, 64, 2],
    [{ NOTESVC_ASR_SLOTS: '1', NOTESVC_JOB_LEASE_SECONDS: '3600' }, 2, 3600],
  ])('%p → %d workers, leases of %d s', (env, workers, lease) => {
    const c = loadConfig(env)
    expect([c.workers, c.jobLeaseSeconds]).toEqual([workers, lease])
  })

  test.each([
    [{ NOTESVC_WORKERS: '65' }, 'NOTESVC_WORKERS=65 is not valid; use a whole number from 0 to 64'],
    [{ NOTESVC_WORKERS: '-1' }, 'NOTESVC_WORKERS=-1 is not valid; use a whole number from 0 to 64'],
    [{ NOTESVC_JOB_LEASE_SECONDS: '1' }, 'NOTESVC_JOB_LEASE_SECONDS=1 is not valid; use a whole number from 2 to 3600'],
    [{ NOTESVC_JOB_LEASE_SECONDS: '1.5' }, 'NOTESVC_JOB_LEASE_SECONDS=1.5 is not valid; use a whole number from 2 to 3600'],
    [{ NOTESVC_JOB_LEASE_SECONDS: 'soon' }, 'NOTESVC_JOB_LEASE_SECONDS=soon is not valid; use a whole number from 2 to 3600'],
  ])('%p is refused: %s', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })

  test('NOTESVC_ASR_SLOTS: the number of cores by default, 1 to 64', () => {
    expect(loadConfig({}).asrSlots).toBe(Math.min(64, require('node:os').availableParallelism()))
    expect(loadConfig({ NOTESVC_ASR_SLOTS: '3' }).asrSlots).toBe(3)
    for (const bad of ['0', '65', '1.5', 'many']) {
      expect(() => loadConfig({ NOTESVC_ASR_SLOTS: bad })).toThrow(`NOTESVC_ASR_SLOTS=${bad} is not valid; use a whole number from 1 to 64`)
    }
  })

  test('flags set them too: --workers 0, --job-lease-seconds 5', () => {
    const { env, rest } = applyFlags({}, ['serve', '--workers', '0', '--job-lease-seconds', '5'])
    expect(rest).toEqual(['serve'])
    expect(loadConfig(env)).toMatchObject({ workers: 0, jobLeaseSeconds: 5 })
  })
})

describe('the data folder: one rule for every command', () => {
  const cwd = tempDir('notesvc-cwd-')
  const withData = tempDir('notesvc-legacy-')
  mkdirSync(`${withData.path}/data`)
  writeFileSync(`${withData.path}/data/notesvc.db`, '')
  const emptyData = tempDir('notesvc-emptydata-')
  mkdirSync(`${emptyData.path}/data`)
  afterAll(() => { for (const d of [cwd, withData, emptyData]) d.remove() })

  test.each([
    ['nothing set: ~/.local/share/notesvc', {}, cwd.path, '/home/ann/.local/share/notesvc', 'default; NOTESVC_DATA_DIR overrides'],
    ['XDG_DATA_HOME', { XDG_DATA_HOME: '/srv/xdg' }, cwd.path, '/srv/xdg/notesvc', 'default; NOTESVC_DATA_DIR overrides'],
    ['a relative XDG_DATA_HOME is ignored (XDG spec)', { XDG_DATA_HOME: 'xdg' }, cwd.path, '/home/ann/.local/share/notesvc', 'default; NOTESVC_DATA_DIR overrides'],
    ['an empty XDG_DATA_HOME is unset', { XDG_DATA_HOME: '' }, cwd.path, '/home/ann/.local/share/notesvc', 'default; NOTESVC_DATA_DIR overrides'],
    ['NOTESVC_DATA_DIR, relative to the current folder', { NOTESVC_DATA_DIR: 'here', XDG_DATA_HOME: '/srv/xdg' }, '/opt/x', '/opt/x/here', 'set by NOTESVC_DATA_DIR or --data-dir'],
    ['./data holding notesvc.db is kept', { XDG_DATA_HOME: '/srv/xdg' }, withData.path, `${withData.path}/data`, './data of this folder holds a notesvc.db, so it is kept; NOTESVC_DATA_DIR overrides'],
    ['./data without a database is not', {}, emptyData.path, '/home/ann/.local/share/notesvc', 'default; NOTESVC_DATA_DIR overrides'],
    ['NOTESVC_DATA_DIR wins over ./data', { NOTESVC_DATA_DIR: '/srv/notesvc' }, withData.path, '/srv/notesvc', 'set by NOTESVC_DATA_DIR or --data-dir'],
  ])('%s', (_, env: Record<string, string>, dir, folder, why) => {
    const c = loadConfig({ HOME: '/home/ann', ...env }, dir)
    expect(c.dataDir).toBe(folder)
    expect(c.databasePath).toBe(`${folder}/notesvc.db`)
    expect(describeDataDir(c)).toBe(`data folder: ${folder} (${why})`)
  })
})

describe('NOTESVC_METERING', () => {
  test.each([
    [{}, true],
    [{ NOTESVC_METERING: 'on' }, true],
    [{ NOTESVC_METERING: 'off' }, false],
  ])('%p → metering %p', (env, metering) => {
    expect(loadConfig(env).metering).toBe(metering)
  })

  test('anything else is refused, naming the values', () => {
    expect(() => loadConfig({ NOTESVC_METERING: 'false' })).toThrow('NOTESVC_METERING=false is not valid; use one of: on, off')
  })
})

describe('the models folder', () => {
  test('NOTESVC_MODELS_DIR, else ./models when it holds a model, else models in the data folder', () => {
    const cwd = tempDir('notesvc-models-').path
    const data = join(cwd, 'data-home')
    const dir = (env: Record<string, string>) => loadConfig({ NOTESVC_DATA_DIR: data, ...env }, cwd).modelsDir
    // the checkout's models/ holds only a README: not a models folder
    mkdirSync(join(cwd, 'models'))
    writeFileSync(join(cwd, 'models', 'README.md'), 'models go here')
    expect(dir({})).toBe(join(data, 'models'))
    writeFileSync(join(cwd, 'models', 'ggml-base.en.bin'), 'x')
    expect(dir({})).toBe(join(cwd, 'models'))
    expect(dir({ NOTESVC_MODELS_DIR: 'elsewhere' })).toBe(join(cwd, 'elsewhere'))
  })
})

describe('single sign-on and password sign-in (NOTESVC_OIDC_*, NOTESVC_PASSWORD_SIGNIN)', () => {
  const provider = { NOTESVC_OIDC_ISSUER: 'https://id.example.com', NOTESVC_OIDC_CLIENT_ID: 'notesvc' }

  test('off unless issuer and client id are set; on with the defaults when they are', () => {
    expect(loadConfig({}).sso.enabled).toBe(false)
    expect(loadConfig({ NOTESVC_OIDC_ISSUER: 'https://id.example.com' }).sso.enabled).toBe(false)
    const c = loadConfig(provider)
    expect({ ...c.sso, passwordSignIn: c.passwordSignIn }).toEqual({
      enabled: true, providerName: 'id.example.com', scopes: 'openid email profile', allowedDomains: [],
      groupsClaim: undefined, allowedGroups: [], defaultPlan: 'free', passwordSignIn: true,
    })
    // ID tokens as bearers stay, the browser button goes
    expect(loadConfig({ ...provider, NOTESVC_OIDC_SIGNIN: 'off' }).sso.enabled).toBe(false)
  })

  test('domains are lower-cased without a leading @, groups listed, the groups claim defaults to "groups"', () => {
    const c = loadConfig({ ...provider, NOTESVC_OIDC_ALLOWED_DOMAINS: ' Example.COM, @sub.example.org ', NOTESVC_OIDC_ALLOWED_GROUPS: 'staff, notesvc users', NOTESVC_OIDC_PROVIDER_NAME: 'Example ID', NOTESVC_OIDC_DEFAULT_PLAN: 'pro', NOTESVC_PASSWORD_SIGNIN: 'off' })
    expect([c.sso.allowedDomains, c.sso.allowedGroups, c.sso.groupsClaim, c.sso.providerName, c.sso.defaultPlan, c.passwordSignIn])
      .toEqual([['example.com', 'sub.example.org'], ['staff', 'notesvc users'], 'groups', 'Example ID', 'pro', false])
    expect(loadConfig({ ...provider, NOTESVC_OIDC_GROUPS_CLAIM: 'roles', NOTESVC_OIDC_ALLOWED_GROUPS: 'admin' }).sso.groupsClaim).toBe('roles')
    // alone, too: the workspaces' SSO group mappings read it without restricting who signs in
    expect([loadConfig({ ...provider, NOTESVC_OIDC_GROUPS_CLAIM: 'roles' }).sso].map(c => [c.groupsClaim, c.allowedGroups])).toEqual([['roles', []]])
  })

  // each: what would be wrong, and the message that says what to set
  const refused: [string, Record<string, string>, string][] = [
    ['password sign-in off with no provider', { NOTESVC_PASSWORD_SIGNIN: 'off' },
      'NOTESVC_PASSWORD_SIGNIN=off leaves no way to sign in to the browser: set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID (single sign-on) first, or set NOTESVC_PASSWORD_SIGNIN=on'],
    ['password sign-in off with the button off', { ...provider, NOTESVC_OIDC_SIGNIN: 'off', NOTESVC_PASSWORD_SIGNIN: 'off' },
      'NOTESVC_PASSWORD_SIGNIN=off leaves no way to sign in to the browser'],
    ['password sign-in "no"', { ...provider, NOTESVC_PASSWORD_SIGNIN: 'no' }, 'NOTESVC_PASSWORD_SIGNIN=no is not valid; use one of: on, off'],
    ['a domain that is not one', { ...provider, NOTESVC_OIDC_ALLOWED_DOMAINS: 'example.com,not a domain' },
      'NOTESVC_OIDC_ALLOWED_DOMAINS: "not a domain" is not a domain; write the domains people\'s emails end in, comma-separated, e.g. example.com,example.org'],
    ['an email where a domain goes', { ...provider, NOTESVC_OIDC_ALLOWED_DOMAINS: 'bob@example.com' }, '"bob@example.com" is not a domain'],
    ['restrictions without a provider', { NOTESVC_OIDC_ALLOWED_DOMAINS: 'example.com' },
      'NOTESVC_OIDC_ALLOWED_DOMAINS and NOTESVC_OIDC_ALLOWED_GROUPS restrict single sign-on, which is off; set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID too, or unset them'],
    ['scopes without openid', { ...provider, NOTESVC_OIDC_SCOPES: 'email profile' },
      'NOTESVC_OIDC_SCOPES=email profile lacks "openid"; set it to space-separated scopes that include openid and email, e.g. "openid email profile"'],
    ['a default plan that does not exist', { ...provider, NOTESVC_OIDC_DEFAULT_PLAN: 'enterprise' }, 'NOTESVC_OIDC_DEFAULT_PLAN=enterprise is not valid; use one of: free, pro'],
    ['the button "maybe"', { ...provider, NOTESVC_OIDC_SIGNIN: 'maybe' }, 'NOTESVC_OIDC_SIGNIN=maybe is not valid; use one of: on, off'],
  ]
  test.each(refused)('refused: %s', (_what, env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })
})

describe('retention in the configuration', () => {
  test.each([
    [{}, { mode: 'forever', days: null, sweepMinutes: 60, auditDays: null }],
    [{ NOTESVC_RETENTION_MODE: 'media', NOTESVC_RETENTION_DAYS: '30' }, { mode: 'media', days: 30, sweepMinutes: 60, auditDays: null }],
    [{ NOTESVC_RETENTION_MODE: 'notes', NOTESVC_RETENTION_DAYS: '365', NOTESVC_RETENTION_SWEEP_MINUTES: '15', NOTESVC_AUDIT_RETENTION_DAYS: '730' }, { mode: 'notes', days: 365, sweepMinutes: 15, auditDays: 730 }],
  ])('%o → %o', (env, expected) => {
    expect(loadConfig(env).retention).toEqual(expected as never)
  })

  // each refused with a message naming what to set
  test.each([
    [{ NOTESVC_RETENTION_MODE: 'media' }, 'NOTESVC_RETENTION_MODE=media needs NOTESVC_RETENTION_DAYS'],
    [{ NOTESVC_RETENTION_DAYS: '30' }, 'set NOTESVC_RETENTION_MODE=media or notes, or unset NOTESVC_RETENTION_DAYS'],
    [{ NOTESVC_RETENTION_MODE: 'audio', NOTESVC_RETENTION_DAYS: '30' }, 'use one of: forever, media, notes'],
    [{ NOTESVC_RETENTION_MODE: 'notes', NOTESVC_RETENTION_DAYS: '0' }, 'NOTESVC_RETENTION_DAYS=0 is not valid; use a whole number from 1 to 36500'],
    [{ NOTESVC_RETENTION_SWEEP_MINUTES: '0' }, 'NOTESVC_RETENTION_SWEEP_MINUTES=0 is not valid'],
    [{ NOTESVC_AUDIT_RETENTION_DAYS: 'forever' }, 'NOTESVC_AUDIT_RETENTION_DAYS=forever is not valid; use a whole number from 1 to 36500'],
  ])('%o is refused', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message)
  })
})
