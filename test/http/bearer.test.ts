import { describe, expect, test } from 'bun:test'
import { bearerToken } from '../../src/http/auth'
import { createTestApp } from '../helpers/app'

describe('reading the bearer credential', () => {
  test.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER  abc ', 'abc'],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    ['Bearerabc', undefined],
    ['Basic YWxhZGRpbjpvcGVuc2VzYW1l', undefined],
    [undefined, undefined],
  ])('%p → %p', (header, token) => {
    expect(bearerToken(header)).toBe(token)
  })

  test('the scheme is case-insensitive over HTTP; a key in the query string is not accepted', async () => {
    const t = createTestApp()
    const key = await t.key()
    expect((await t.call('GET', '/v1/notes', { headers: { authorization: `bearer ${key}` } })).status).toBe(200)
    const q = await t.call('GET', `/v1/notes?access_token=${key}`)
    expect(q.status).toBe(401)
    expect(q.body.error.code).toBe('invalid_token')
  })
})
