import { describe, expect, test } from 'bun:test'
import { classifyAddress } from '../../src/net/address-policy'

/** The table of addresses that are never a destination of an outbound request, and what each is. */
describe('address classification', () => {
  test.each([
    ['10.0.0.5', 'private'], ['172.16.3.4', 'private'], ['192.168.1.1', 'private'], ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'], ['169.254.1.1', 'link-local'], ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'shared (CGNAT)'], ['100.100.100.200', 'shared (CGNAT)'], ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'], ['224.0.0.251', 'multicast'], ['240.0.0.1', 'reserved'], ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'], ['::', 'unspecified'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['fd00::1', 'unique-local'],
    ['fc12:3456::1', 'unique-local'], ['fd00:ec2::254', 'cloud metadata'], ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.0.0.5', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'], ['::127.0.0.1', 'loopback'], ['64:ff9b::a00:5', 'private'],
    ['2002:a9fe:a9fe::1', 'cloud metadata'], ['2001:db8::1', 'reserved'], ['2001::1', 'reserved'],
    // 172.16.0.0/12 (RFC 1918) from its first address to its last, also inside IPv6 forms
    ['172.16.0.0', 'private'], ['172.31.255.255', 'private'], ['::ffff:172.31.255.255', 'private'], ['2002:ac1f:ffff::1', 'private'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls as ReturnType<typeof classifyAddress>)
  })

  test.each([
    '93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::6810:85e5', '::ffff:8.8.8.8', '64:ff9b::808:808',
    // just outside 172.16.0.0/12, on either side
    '172.15.255.255', '172.32.0.0', '::ffff:172.15.255.255', '::ffff:172.32.0.0',
  ])('%s is public', address => {
    expect(classifyAddress(address)).toBeNull()
  })
})
