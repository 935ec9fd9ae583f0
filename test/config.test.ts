import { describe, expect, test } from 'bun:test'
import { applyFlags, ConfigError, loadConfig } from '../src/config'

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
