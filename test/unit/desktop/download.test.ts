import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { parseConfig } from '../../../config/load';
import type { OsworldHostConfig } from '../../../config/schema';
import { download, type DownloadPolicy } from '../../../activities/desktop/osworld/download';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');

/**
 * A task's `download` func (issue 29, item 6). No request here leaves 127.0.0.1: the one web server
 * is on loopback, which the guard refuses unless a name is allow-listed, and names are resolved
 * by a stub (`*.test` never resolves for real). Refused addresses are refused before any connection.
 * (test/desktop/osworld-desktop.test.ts: an OSWorld desktop's reset fails such a download step;
 * test/unit/public-addresses.test.ts: the address ranges.)
 */
describe('downloads of a task\'s download func: public addresses only', function () {
  this.timeout(30_000);
  let server: Server;
  let port: number;
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  /** Resolves *.test names as the test says; anything else is a failure of the test. */
  const stub = (names: Record<string, string>): DownloadPolicy['resolve'] => async (host) => {
    const address = names[host];
    if (address === undefined) throw new Error(`the test resolves no ${host}`);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  const policy = (overrides: Partial<DownloadPolicy> = {}): DownloadPolicy => ({ allowHosts: [], maxBytes: 1000, timeoutMs: 10_000, resolve: stub({}), ...overrides });
  const mirror = (overrides: Partial<DownloadPolicy> = {}): DownloadPolicy => policy({ allowHosts: ['mirror.test'], resolve: stub({ 'mirror.test': '127.0.0.1', 'metadata.test': '169.254.169.254' }), ...overrides });

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (req.url === '/file') return void res.end('data_3PPD\n');
      if (req.url === '/to-loopback') return void res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
      if (req.url === '/to-metadata') return void res.writeHead(301, { location: 'http://metadata.test/latest/meta-data/' }).end();
      if (req.url === '/to-file') return void res.writeHead(307, { location: `http://mirror.test:${port}/file` }).end();
      if (req.url === '/declared') return void res.writeHead(200, { 'content-length': 1001 }).end('x'.repeat(1001));
      if (req.url === '/streamed') {
        res.writeHead(200);
        res.write('x'.repeat(600));
        return void res.end('x'.repeat(600));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (seen.length = 0));

  it('refuses a loopback URL, a name that resolves to a link-local address and a scheme that is not http(s), without connecting', async () => {
    const cases: Array<[string, DownloadPolicy, RegExp]> = [
      [`http://127.0.0.1:${port}/file`, policy(), /127\.0\.0\.1 is 127\.0\.0\.1, not a public address \(a host the deployment trusts goes in its hosts\[\]\.downloads\.allowHosts\)/],
      [`http://[::1]:${port}/file`, policy(), /::1 is ::1, not a public address/],
      // 127.0.0.1 as an IPv4-compatible and an IPv4-mapped IPv6 address (issue 44 item 7).
      [`http://[::127.0.0.1]:${port}/file`, policy(), /::7f00:1 is ::7f00:1, not a public address/],
      [`http://[::ffff:127.0.0.1]:${port}/file`, policy(), /::ffff:7f00:1 is ::ffff:7f00:1, not a public address/],
      ['http://metadata.test/latest/meta-data/', policy({ resolve: stub({ 'metadata.test': '169.254.169.254' }) }), /metadata\.test is 169\.254\.169\.254, not a public address/],
      ['file:///etc/passwd', policy(), /only http and https URLs are downloaded/],
    ];
    for (const [url, p, reason] of cases) await assert.rejects(download(url, p), (err: Error) => err.name === 'DownloadRefused' && reason.test(err.message), url);
    assert.deepEqual(seen, []);
  });

  it('fetches an allow-listed name from the very address it was checked at, the name kept for the request', async () => {
    assert.equal((await download(`http://mirror.test:${port}/file`, mirror())).toString(), 'data_3PPD\n');
    assert.deepEqual(seen.map((s) => [s.url, s.headers.host]), [['/file', `mirror.test:${port}`]]);
  });

  it('checks every redirect again: one to loopback or to a link-local name is refused unfetched, one to an allowed name followed', async () => {
    await assert.rejects(download(`http://mirror.test:${port}/to-loopback`, mirror()), /127\.0\.0\.1 is 127\.0\.0\.1, not a public address/);
    await assert.rejects(download(`http://mirror.test:${port}/to-metadata`, mirror()), /metadata\.test is 169\.254\.169\.254, not a public address/);
    assert.equal((await download(`http://mirror.test:${port}/to-file`, mirror())).toString(), 'data_3PPD\n');
    assert.deepEqual(seen.map((s) => s.url), ['/to-loopback', '/to-metadata', '/to-file', '/file']);
  });

  it('refuses a body larger than maxBytes, declared or as it comes', async () => {
    for (const file of ['declared', 'streamed']) {
      await assert.rejects(download(`http://mirror.test:${port}/${file}`, mirror()), new RegExp(`/${file}: larger than 1000 bytes \\(hosts\\[\\]\\.downloads\\.maxBytes\\)`), file);
    }
    assert.equal((await download(`http://mirror.test:${port}/file`, mirror({ maxBytes: 10 }))).length, 10, 'exactly maxBytes is taken');
  });

  it('reads hosts[].downloads from temporal.yaml, public addresses only when it is left out', () => {
    const text = readFileSync(path.join(REPO, 'temporal.yaml'), 'utf8');
    const host = (downloads: string) =>
      text.replace('hosts:\n', `hosts:\n  - { id: rack-9, kind: osworld, taskQueue: coda-vm-rack-9, vms: [{ url: "http://10.0.3.11:5000", resetCommand: ["true"] }]${downloads} }\n`);
    const osworld = (yaml: string) => parseConfig(yaml, 'temporal.yaml', {}).hosts.find((h): h is OsworldHostConfig => h.kind === 'osworld')?.downloads;
    assert.deepEqual(osworld(host('')), { allowHosts: [], maxBytes: 64 * 1024 * 1024 });
    assert.deepEqual(osworld(host(', downloads: { allowHosts: [mirror.lab.internal], maxBytes: 1000 }')), { allowHosts: ['mirror.lab.internal'], maxBytes: 1000 });
    assert.throws(() => osworld(host(', downloads: { allowHosts: mirror.lab.internal }')), /hosts\[0\]\.downloads\.allowHosts: Invalid input: expected array/);
  });
});
