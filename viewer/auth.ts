import type { Env } from '../config/load';
import type { Config } from '../config/schema';
import { ValidationError } from '../core/validation';
import { isLoopback } from '../activities/http-auth';

export { authorized, isLoopback } from '../activities/http-auth';

/**
 * The viewer's login: one token from the environment variable temporal.yaml `viewer.auth.tokenEnv`
 * names (CODA_VIEWER_TOKEN by default), taken as `Authorization: Bearer <token>` (scripts,
 * probes) or as HTTP Basic with any user name and the token as password (a browser asks for it
 * after the 401's challenge and sends it with every later request of the page, its fetches too).
 * Without a token the viewer runs open on a loopback address only: anywhere else it would serve
 * every trajectory and checkpoint to whoever reaches it; and it answers only requests that name a
 * loopback address as their Host.
 */

/** Shorter tokens are refused: a guessable token is no login. */
export const MIN_TOKEN_LENGTH = 16;

/** The realm of the Basic challenge: browsers show it in their login dialog. */
export const REALM = 'coda viewer';

export type ViewerLogin = { readonly kind: 'token'; readonly token: string; readonly tokenEnv: string } | { readonly kind: 'open'; readonly warning: string };

/**
 * Whether an open viewer answers a request carrying this Host header: only one naming a loopback
 * address. A page of another site can point its own name at 127.0.0.1 (DNS rebinding) and read an
 * open viewer from the browser of someone on this machine; the browser then sends that name.
 */
export function loopbackHostHeader(header: string | undefined): boolean {
  const name = /^(\[[^\]]*\]|[^:]*)(:\d{1,5})?$/.exec(header ?? '')?.[1];
  return name !== undefined && name !== '' && isLoopback(name.toLowerCase());
}

/**
 * The login of a viewer listening on `host`: the token when its variable is set; open on a
 * loopback address when it is not; otherwise refused, naming the field and the variable. The
 * token is trimmed; whitespace inside it is refused.
 */
export function viewerLogin(config: Pick<Config, 'viewer'>, host: string, env: Env): ViewerLogin {
  const tokenEnv = config.viewer.auth.tokenEnv;
  const given = env[tokenEnv];
  if (given === undefined || given === '') {
    if (isLoopback(host)) {
      return { kind: 'open', warning: `the viewer has no login (${tokenEnv} is not set, viewer.auth.tokenEnv): anyone on this machine can read it; it listens on ${host} only` };
    }
    throw new ValidationError('viewer login', [
      `viewer.auth.tokenEnv: environment variable ${tokenEnv} is not set, and the viewer would listen on ${host}, beyond this machine: set ${tokenEnv} to a token of at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 24), or listen on 127.0.0.1`,
    ]);
  }
  // A token read from a secret file often ends in a newline: Bearer and Basic could never send it.
  const token = given.trim();
  if (/\s/.test(token)) {
    throw new ValidationError('viewer login', [`viewer.auth.tokenEnv: the token in ${tokenEnv} has whitespace inside it (character ${token.search(/\s/) + 1}); expected one word, as Authorization: Bearer sends it`]);
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new ValidationError('viewer login', [`viewer.auth.tokenEnv: the token in ${tokenEnv} has ${token.length} characters; expected at least ${MIN_TOKEN_LENGTH}`]);
  }
  return { kind: 'token', token, tokenEnv };
}

/** The challenge of a 401: Basic, so a browser asks for the token (scripts send Bearer unasked). */
export const CHALLENGE = `Basic realm="${REALM}", charset="UTF-8"`;
