import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * What the project's HTTP servers that take a shared token have in common (the viewer's login,
 * the reward service): which listen addresses only this machine reaches, and whether a request's
 * Authorization header carries the token.
 */

/** Addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

/** Equal texts, compared in time independent of where they differ (both hashed first, so of one length). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Whether an Authorization header carries the token, as Bearer or as Basic's password (any user name). */
export function authorized(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const [scheme, value = ''] = header.trim().split(/\s+/, 2);
  switch (scheme?.toLowerCase()) {
    case 'bearer':
      return sameSecret(value, token);
    case 'basic': {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon >= 0 && sameSecret(decoded.slice(colon + 1), token);
    }
    default:
      return false;
  }
}
