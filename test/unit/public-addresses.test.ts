import assert from 'node:assert/strict';
import { isPublicAddress } from '../../activities/desktop/osworld/download';

/**
 * The addresses a task's download may be fetched from (activities/desktop/osworld/download.ts):
 * public ones only. Nothing is resolved or connected here; test/desktop/download.test.ts refuses
 * such URLs before any connection.
 */
describe('public addresses for a task\'s download', () => {
  it('takes public addresses only: loopback, private, link-local, shared, multicast and reserved ones are not, IPv4-mapped ones included', () => {
    const closed = ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', 'not-an-address'];
    assert.deepEqual(closed.filter(isPublicAddress), []);
    const open = ['8.8.8.8', '1.1.1.1', '132.249.213.86', '2606:4700:4700::1111', '::ffff:8.8.8.8'];
    assert.deepEqual(open.filter((a) => !isPublicAddress(a)), []);
  });

  it('refuses every IPv6 form of a private IPv4 address: compatible, mapped, translated, NAT64, 6to4, Teredo; all but the mapped form whole, whatever IPv4 address they hold (issue 44 item 7)', () => {
    const forms: Record<string, readonly string[]> = {
      'IPv4-compatible ::/96': ['::7f00:1', '::127.0.0.1', '0:0:0:0:0:0:a00:1', '::c0a8:101', '::a9fe:a9fe', '::808:808'],
      'IPv4-mapped ::ffff:0:0/96': ['::ffff:7f00:1', '0:0:0:0:0:ffff:127.0.0.1', '::ffff:10.0.0.1', '::FFFF:192.168.1.1'],
      'IPv4-translated ::ffff:0:0:0/96': ['::ffff:0:7f00:1', '::ffff:0:10.0.0.1', '::ffff:0:808:808'],
      'NAT64 64:ff9b::/96': ['64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b::808:808'],
      'local NAT64 64:ff9b:1::/48': ['64:ff9b:1::7f00:1', '64:ff9b:1:7f:0:100::'],
      '6to4 2002::/16': ['2002:7f00:1::1', '2002:a00:1::', '2002:a9fe:a9fe::1', '2002:808:808::1'],
      // The Teredo client's address is its IPv4 address inverted: 80ff:fffe is 127.0.0.1.
      'Teredo 2001::/32': ['2001:0:7f00:1::1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001::a00:1'],
    };
    for (const [form, addresses] of Object.entries(forms)) assert.deepEqual(addresses.filter(isPublicAddress), [], form);
  });
});
