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
 * every trajectory and checkpoint to whoever reaches it.
 */

/** Shorter tokens are refused: a guessable token is no login. */
export const MIN_TOKEN_LENGTH = 16;

/** The realm of the Basic challenge: browsers show it in their login dialog. */
export const REALM = 'coda viewer';

export type ViewerLogin = { readonly kind: 'token'; readonly token: string; readonly tokenEnv: string } | { readonly kind: 'open'; readonly warning: string };

/**
 * The login of a viewer listening on `host`: the token when its variable is set; open on a
 * loopback address when it is not; otherwise refused, naming the field and the variable.
 */
export function viewerLogin(config: Pick<Config, 'viewer'>, host: string, env: Env): ViewerLogin {
  const tokenEnv = config.viewer.auth.tokenEnv;
  const token = env[tokenEnv];
  if (token === undefined || token === '') {
    if (isLoopback(host)) {
      return { kind: 'open', warning: `the viewer has no login (${tokenEnv} is not set, viewer.auth.tokenEnv): anyone on this machine can read it; it listens on ${host} only` };
    }
    throw new ValidationError('viewer login', [
      `viewer.auth.tokenEnv: environment variable ${tokenEnv} is not set, and the viewer would listen on ${host}, beyond this machine: set ${tokenEnv} to a token of at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 24), or listen on 127.0.0.1`,
    ]);
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new ValidationError('viewer login', [`viewer.auth.tokenEnv: the token in ${tokenEnv} has ${token.length} characters; expected at least ${MIN_TOKEN_LENGTH}`]);
  }
  return { kind: 'token', token, tokenEnv };
}

/** The challenge of a 401: Basic, so a browser asks for the token (scripts send Bearer unasked). */
export const CHALLENGE = `Basic realm="${REALM}", charset="UTF-8"`;
