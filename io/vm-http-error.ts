/**
 * How a request to a VM's server failed. Kept apart from vm-http.ts, which sends the requests, so
 * that an app's vm.ts can tell failures apart without loading any Node module.
 */

/** How a request failed: an HTTP status, no answer in time, no connection, or an answer of the wrong shape. */
export type VmHttpFailure = 'status' | 'timeout' | 'connection' | 'protocol';

/** One failed request to a VM, naming the server, the endpoint and (for `status`) the HTTP status. */
export class VmHttpError extends Error {
  constructor(
    /** Base URL of the server, e.g. http://10.0.3.11:5000. */
    readonly server: string,
    /** Method and path, e.g. `POST /execute`. */
    readonly endpoint: string,
    readonly failure: VmHttpFailure,
    detail: string,
    readonly status?: number,
    /** Low-level error code of a connection failure, e.g. ECONNREFUSED. */
    readonly code?: string,
  ) {
    super(`${endpoint} on ${server}: ${detail}`);
    this.name = 'VmHttpError';
  }

  /** The request provably never reached the server, so sending it again is safe whatever it does. */
  get undelivered(): boolean {
    return this.failure === 'connection' && this.code !== undefined && UNDELIVERED_CODES.has(this.code);
  }
}

/** Connection errors raised before a single byte of the request was accepted. */
const UNDELIVERED_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
