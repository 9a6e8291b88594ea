import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * A task's `download` func, fetched on the vm-host as ScienceBoard does: the URL is whatever the
 * task file says, so by default only public http(s) addresses are fetched, never the host's own
 * network (a cloud's link-local metadata address, the cluster, loopback). The name is resolved
 * once and every address it gives is checked; the connection goes to the checked address (a name
 * that resolves again to something else is not asked twice); each redirect is checked the same
 * way; the body is capped. Hosts a deployment trusts though they are not public (a lab's mirror)
 * are listed in temporal.yaml (`hosts[].downloads.allowHosts`).
 */

export interface DownloadPolicy {
  /** Host names (or IP literals) fetched even where they resolve to an address that is not public. */
  readonly allowHosts: readonly string[];
  /** Largest body, declared or received. */
  readonly maxBytes: number;
  /** For the whole download, redirects included. */
  readonly timeoutMs: number;
  /** Resolves a name to its addresses: the system's resolver; tests give a stub. */
  readonly resolve?: (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>;
}

const MAX_REDIRECTS = 5;

/**
 * Addresses that are not on the public internet (IANA's special-purpose registries). An IPv6
 * address can hold an IPv4 one: IPv4-mapped ones (::ffff:0:0/96) are checked as the IPv4 address
 * they map (BlockList does so); every other form is refused whole, whatever IPv4 address it holds,
 * as the host may reach that address through it: IPv4-compatible (::/96, `::7f00:1`, with :: and
 * ::1), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), Teredo
 * (2001::/32, within 2001::/23) and 6to4 (2002::/16).
 */
const NOT_PUBLIC = (() => {
  const list = new BlockList();
  const v4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4'];
  const v6 = ['::/96', '::ffff:0:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/23', '2001:db8::/32', '2002::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8'];
  for (const net of v4) list.addSubnet(net.split('/')[0] as string, Number(net.split('/')[1]), 'ipv4');
  for (const net of v6) list.addSubnet(net.split('/')[0] as string, Number(net.split('/')[1]), 'ipv6');
  return list;
})();

/** Whether `address` (an IP literal) is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class DownloadRefused extends Error {
  override readonly name = 'DownloadRefused';
}

/** The address to connect to for `url`, checked against the policy; throws DownloadRefused. */
async function checkedAddress(url: URL, policy: DownloadPolicy): Promise<{ address: string; family: number }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DownloadRefused(`${url.href}: only http and https URLs are downloaded`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const allowed = policy.allowHosts.some((h) => h.toLowerCase() === host);
  const literal = isIP(host);
  const addresses = literal !== 0 ? [{ address: host, family: literal }] : await (policy.resolve ?? ((name) => lookup(name, { all: true })))(host);
  if (addresses.length === 0) throw new DownloadRefused(`${url.href}: ${host} has no address`);
  const closed = addresses.find((a) => !isPublicAddress(a.address));
  if (closed !== undefined && !allowed) {
    throw new DownloadRefused(`${url.href}: ${host} is ${closed.address}, not a public address (a host the deployment trusts goes in its hosts[].downloads.allowHosts)`);
  }
  return addresses[0] as { address: string; family: number };
}

/** One GET to the checked address (TLS still checks the name); the response, its body not yet read. */
function get(url: URL, to: { address: string; family: number }, signal: AbortSignal): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all === true) (callback as unknown as (err: null, all: Array<{ address: string; family: number }>) => void)(null, [to]);
    else callback(null, to.address, to.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', lookup: pinned, signal }, resolve);
    req.once('error', reject);
    req.end();
  });
}

/** The body, refused as soon as it is (or says it will be) larger than `maxBytes`. */
async function bodyOf(url: URL, response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = (): DownloadRefused => {
    response.destroy();
    return new DownloadRefused(`${url.href}: larger than ${maxBytes} bytes (hosts[].downloads.maxBytes)`);
  };
  if (Number(response.headers['content-length'] ?? 0) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Downloads `url` under the policy: its bytes, or a thrown error (DownloadRefused for what the policy refuses). */
export async function download(url: string, policy: DownloadPolicy): Promise<Buffer> {
  const signal = AbortSignal.timeout(policy.timeoutMs);
  let current = new URL(url);
  for (let redirects = 0; ; redirects++) {
    const response = await get(current, await checkedAddress(current, policy), signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
      response.resume();
      if (redirects === MAX_REDIRECTS) throw new DownloadRefused(`${url}: more than ${MAX_REDIRECTS} redirects`);
      current = new URL(location, current);
      continue;
    }
    if (status < 200 || status > 299) {
      response.resume();
      throw new Error(`GET ${current.href} answered HTTP ${status}`);
    }
    return bodyOf(current, response, policy.maxBytes);
  }
}
