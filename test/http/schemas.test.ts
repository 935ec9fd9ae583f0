import { describe, expect, test } from 'bun:test'
import { t } from 'elysia'
import { bodyValidator, compileCheck } from '../../src/http/schemas'
import { ApiError } from '../../src/http/errors'
import { createTestApp, expectEnvelope } from '../helpers/app'

/**
 * A list whose items must be unique (`uniqueItems`), as a webhook's `events`: the standing fuzz found
 * that one huge item held the server's event loop for seconds (TypeBox hashed every item, byte by
 * byte in BigInt arithmetic, before it looked at whether the items were even allowed).
 */
const Events = t.Object({ events: t.Array(t.Union([t.Literal('note.completed'), t.Literal('note.failed')]), { minItems: 1, uniqueItems: true }) })

/** An item that counts how often anything reads into it: hashing it reads its every key. */
function watchedItem() {
  const seen = { reads: 0 }
  const item = new Proxy({ text: 'x'.repeat(1000) }, {
    get(target, key, receiver) {
      seen.reads++
      return Reflect.get(target, key, receiver)
    },
    ownKeys(target) {
      seen.reads++
      return Reflect.ownKeys(target)
    },
  })
  return { item, seen }
}

describe('checks of what a client sends never read into an item they refuse', () => {
  test("an item that is not allowed is refused without being hashed for uniqueness (check and errors)", () => {
    const check = compileCheck(Events)
    const { item, seen } = watchedItem()
    expect(check.Check({ events: ['note.completed', item] })).toBe(false)
    expect([...check.Errors({ events: ['note.completed', item] })].length).toBeGreaterThan(0)
    expect(seen.reads).toBe(0)
  })

  test('uniqueness is still checked once every item is allowed', () => {
    const validate = bodyValidator(Events)
    expect(() => validate({ events: ['note.completed', 'note.failed'] })).not.toThrow()
    let refused: unknown
    try {
      validate({ events: ['note.failed', 'note.failed'] })
    } catch (err) {
      refused = err
    }
    expect(refused).toBeInstanceOf(ApiError)
    expect((refused as ApiError).options.details?.map(d => d.field)).toEqual(['events'])
  })

  test('POST /v1/webhooks with one 4 MB event name: 400 naming the item', async () => {
    const t = createTestApp()
    const res = await t.call('POST', '/v1/webhooks', { token: await t.key(), body: { url: 'https://example.com/hook', events: ['x'.repeat(4 * 1024 * 1024)] } })
    expectEnvelope(res, 400, 'invalid_request')
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['events.0'])
  })
})
