import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { parseRewardRequest, rewardResponse, rewardResponseJson, zeroRewardLog, type RewardSample } from '../../core/remote-reward';
import { PromiseCache } from '../cache';
import { rewardServiceMetrics, type RewardServiceMetrics } from '../metrics';
import type { Env } from '../../config/load';
import type { TrainingConfig } from '../../config/schema';
import { ValidationError } from '../../core/validation';
import { authorized, isLoopback } from '../http-auth';
import type { RewardScorer, ScoredSample } from './reward';

/**
 * The reward service OpenRLHF's `--reward.remote_url` points at, run by every GPU worker
 * (core/remote-reward.ts has the protocol). POST /get_reward scores the samples of a request;
 * GET /health answers ok. What it counts (requests by outcome, cache hits, executor latency, the
 * rewards, failures by reason) goes to its Prometheus group (activities/metrics.ts), which the GPU
 * worker serves on metrics.ports.rewardService.
 *
 * OpenRLHF tries a request 5 times and a reward still missing after that breaks the training step,
 * so a well-formed request is always answered 200: a sample that cannot be scored gets reward 0,
 * its flag in extra_logs and its reason in `errors`. Every answer carries every extra_logs name and
 * writes its numbers as floats (core/remote-reward.ts says why). With several reward URLs OpenRLHF
 * 0.11.2 sends each sample to the next URL in turn: each GPU worker's service scores the samples it
 * gets and keeps its own cache. Only a body that is not the protocol
 * gets a 400. Scored samples are kept by query and label, so a repeated request (OpenRLHF's retry
 * of a request whose answer was lost) gets the same answer without calling the executor again;
 * outcomes that may change (the executor failed or was too slow) are not kept.
 *
 * What one request may cost is bounded (training.rewardService's limits, what a GRPO sample
 * needs): a body larger than maxBodyBytes or a query longer than maxQueryChars is answered 413,
 * and a request beyond maxConcurrentRequests in flight 503, both before anything is scored (the
 * oversized and the surplus body unread), so no request can hold the memory or the event loop
 * that /health, the other requests and the GPU worker's heartbeats share.
 *
 * Only the trainer may ask (docs/security.md): with a token (training.rewardService.tokenEnv) a
 * request must carry it, as HTTP Basic's password (OpenRLHF 0.11.2's aiohttp client sends the
 * credentials of its URL that way) or as Bearer, or it is answered 401 unread; without one the
 * service listens on a loopback address only. /health is open (the readiness probe) and tells
 * nothing. The trainer gets the token in its environment (TRAINER_TOKEN_ENV), never on its command
 * line, which every user of the machine reads (ps, /proc/<pid>/cmdline): the URL it is given has no
 * credentials, and its launcher puts the token into it inside the process
 * (infra/trainers/reward_token.py).
 *
 * No web page may ask either (`browserRefusal`): a browser can post a `text/plain` body to any
 * address without asking first (no CORS preflight), and a page whose own name resolves to this
 * address (DNS rebinding) is same-origin to the browser. So every request, /health included, whose
 * Host is not the service's own address or that carries an Origin header (browsers send one with
 * every POST; the trainers' clients never do) is answered 403, and a POST whose content type is not
 * application/json (the protocol's) 415, all unread, before the token, the in-flight count or
 * anything else.
 */

export interface RewardServiceOptions {
  readonly scorer: RewardScorer;
  readonly host: string;
  readonly port: number;
  readonly cacheSize: number;
  readonly limits: RewardServiceLimits;
  /** The token a request must carry (rewardServiceToken); none: `host` must be a loopback address. */
  readonly token?: string;
  readonly metrics?: RewardServiceMetrics;
  /** Where failed samples are reported (the worker's log): the first of each reason, then at each power of ten (core/remote-reward.ts zeroRewardLog). */
  readonly log?: (line: string) => void;
}

export interface RewardService {
  /** Its POST URL, without credentials: the trainer's `{rewardUrl}`. */
  readonly url: string;
  /** The token its requests must carry, if it has one: the trainer gets it in TRAINER_TOKEN_ENV. */
  readonly token?: string;
  close(): Promise<void>;
}

/**
 * The variable of a trainer's environment that holds the reward service's token (whatever
 * training.rewardService.tokenEnv names for the worker). A process's environment is readable by
 * its own user only (/proc/<pid>/environ is 0400), its command line by everyone.
 */
export const TRAINER_TOKEN_ENV = 'CODA_REWARD_TOKEN';

export type RewardServiceLimits = Pick<TrainingConfig['rewardService'], 'maxQueryChars' | 'maxBodyBytes' | 'maxConcurrentRequests'>;

/** What a token may hold: OpenRLHF's launcher puts it as it is into the reward URLs, which OpenRLHF splits at commas. */
const TOKEN = /^[A-Za-z0-9._~-]{16,}$/;

/** The token of training.rewardService.tokenEnv, undefined when the variable is unset or empty; a token that cannot be one is refused, naming the field. */
export function rewardServiceToken(settings: Pick<TrainingConfig['rewardService'], 'tokenEnv'>, env: Env): string | undefined {
  const token = env[settings.tokenEnv];
  if (token === undefined || token === '') return undefined;
  if (!TOKEN.test(token)) {
    throw new ValidationError('reward service token', [`training.rewardService.tokenEnv: the token in ${settings.tokenEnv} must be at least 16 characters of A-Z a-z 0-9 . _ ~ - (it goes into the URL OpenRLHF's client posts to), e.g. openssl rand -hex 32`]);
  }
  return token;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), headers);
}

function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Answers a request whose body is left unread, and closes its connection (the rest of the body is not waited for). */
const refuseUnread = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => send(res, status, body, { connection: 'close', ...headers });

/** The body, or undefined as soon as it grows beyond `maxBytes` (what came is dropped). */
async function bodyOf(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Why a request is too large to score, or undefined. */
function tooLarge(samples: readonly RewardSample[], limits: RewardServiceLimits): string | undefined {
  const long = samples.findIndex((s) => s.query.length > limits.maxQueryChars);
  return long === -1 ? undefined : `query[${long}]: ${samples[long]?.query.length} characters, more than the ${limits.maxQueryChars} a sample may have (training.rewardService.maxQueryChars)`;
}

/** A result that must not stay in the cache: thrown out of the loader (the cache forgets rejected loads) and caught. */
class Uncacheable {
  constructor(readonly result: ScoredSample) {}
}

/** The media type of a Content-Type header, lower case, without its parameters (`; charset=utf-8`). */
const mediaType = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

/** A header's value as an error may quote it: bounded, as JSON. */
const quoted = (value: string): string => JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);

/** Why a request may come from a web page and is refused (403), or undefined; `own` is the service's host:port. */
function browserRefusal(req: IncomingMessage, own: string): string | undefined {
  const host = req.headers.host ?? '';
  if (host.toLowerCase() !== own.toLowerCase()) {
    return `Host ${quoted(host)}: this reward service answers only at ${own}, the address its trainer is given (another name may be a web page's, pointed here)`;
  }
  if (req.headers.origin !== undefined) return `Origin ${quoted(req.headers.origin)}: a web page's request; this reward service answers its trainer only`;
  return undefined;
}

/** Answers one admitted POST /get_reward: 413 for what is too large, 400 for what is not the protocol, else the scores. */
async function answer(req: IncomingMessage, res: ServerResponse, limits: RewardServiceLimits, metrics: RewardServiceMetrics, scoreOne: (sample: RewardSample) => Promise<ScoredSample>): Promise<void> {
  const declared = Number(req.headers['content-length'] ?? 0);
  const bodyTooLarge = `body: larger than ${limits.maxBodyBytes} bytes (training.rewardService.maxBodyBytes)`;
  if (declared > limits.maxBodyBytes) {
    metrics.requests.inc({ outcome: 'too_large' });
    return refuseUnread(res, 413, { error: bodyTooLarge });
  }
  const timer = metrics.seconds.startTimer();
  const text = await bodyOf(req, limits.maxBodyBytes);
  if (text === undefined) {
    metrics.requests.inc({ outcome: 'too_large' });
    return refuseUnread(res, 413, { error: bodyTooLarge });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const parsed = body === undefined ? { ok: false as const, reason: 'body: not JSON' } : parseRewardRequest(body);
  if (!parsed.ok) {
    metrics.requests.inc({ outcome: 'refused' });
    return send(res, 400, { error: parsed.reason });
  }
  const large = tooLarge(parsed.samples, limits);
  if (large !== undefined) {
    metrics.requests.inc({ outcome: 'too_large' });
    return send(res, 413, { error: large });
  }
  const results = await Promise.all(parsed.samples.map(scoreOne));
  sendText(res, 200, rewardResponseJson(rewardResponse(results)));
  timer();
  metrics.requests.inc({ outcome: results.length === 0 ? 'empty' : results.some((r) => r.error !== undefined) ? 'zero' : 'ok' });
}

/** A service without a token must listen where only this machine reaches it. */
function checkExposure(host: string, token: string | undefined): void {
  if (token !== undefined || isLoopback(host)) return;
  throw new ValidationError('reward service', [
    `training.rewardService.host is ${host}, beyond this machine, and training.rewardService.tokenEnv names no token: anyone reaching it could make the executor score and read the bucket; set the token (docs/deploy.md), or listen on 127.0.0.1`,
  ]);
}

export async function startRewardService(options: RewardServiceOptions): Promise<RewardService> {
  const { limits, token } = options;
  checkExposure(options.host, token);
  const metrics = options.metrics ?? rewardServiceMetrics();
  const cache = new PromiseCache<ScoredSample>(options.cacheSize);
  const log = options.log ?? ((line: string) => console.warn(line));
  const zeroLine = zeroRewardLog();

  async function scoreOne(sample: RewardSample): Promise<ScoredSample> {
    const key = createHash('sha256').update(sample.query).update('\0').update(sample.label).digest('hex');
    let computed = false;
    const result = await cache
      .get(key, async () => {
        computed = true;
        const outcome = await options.scorer(sample).catch((err: Error): ScoredSample => ({ reward: 0, score: 0, logs: { internal_error: 1 }, error: err.message, cacheable: false }));
        if (!outcome.cacheable) throw new Uncacheable(outcome);
        return outcome;
      })
      .catch((err: unknown) => {
        if (err instanceof Uncacheable) return err.result;
        throw err;
      });
    if (computed && result.executorMs !== undefined) metrics.executorSeconds.observe(result.executorMs / 1000);
    if (!computed) metrics.cacheHits.inc();
    metrics.rewards.observe(result.reward);
    if (result.error !== undefined) {
      const reasons = Object.keys(result.logs);
      for (const reason of reasons) metrics.failures.inc({ reason });
      const line = computed ? zeroLine(reasons, result.error) : undefined;
      if (line !== undefined) log(line);
    }
    return result;
  }

  let inFlight = 0;
  let own = '';
  const server: Server = createServer((req, res) => {
    const url = req.url?.split('?')[0];
    const foreign = browserRefusal(req, own);
    if (foreign !== undefined) {
      metrics.requests.inc({ outcome: 'forbidden' });
      return refuseUnread(res, 403, { error: foreign });
    }
    if (req.method === 'GET' && url === '/health') return send(res, 200, { status: 'ok' });
    if (req.method !== 'POST' || url !== '/get_reward') return send(res, 404, { detail: 'Not Found' });
    const type = mediaType(req.headers['content-type']);
    if (type !== 'application/json') {
      metrics.requests.inc({ outcome: 'refused' });
      return refuseUnread(res, 415, { error: `content-type ${quoted(type)}: expected application/json (a web page may post other types without asking first)` });
    }
    if (token !== undefined && !authorized(req.headers.authorization, token)) {
      metrics.requests.inc({ outcome: 'unauthorized' });
      return refuseUnread(res, 401, { error: 'unauthorized: the reward service takes requests with its token only (training.rewardService.tokenEnv)' }, { 'www-authenticate': 'Basic realm="coda reward service"' });
    }
    if (inFlight >= limits.maxConcurrentRequests) {
      metrics.requests.inc({ outcome: 'busy' });
      return refuseUnread(res, 503, { error: `${inFlight} requests in flight, the most this service takes (training.rewardService.maxConcurrentRequests)` }, { 'retry-after': '1' });
    }
    inFlight += 1;
    res.once('close', () => (inFlight -= 1));
    answer(req, res, limits, metrics, scoreOne).catch((err: unknown) => send(res, 500, { error: (err as Error).message }));
  });
  // OpenRLHF keeps each try open up to 180 s; Node's default request timeout would cut long ones.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // What the service's clients send as Host: the host and port of the URL they are given (the URL's `host`, without a port 80).
  own = new URL(`http://${isIP(options.host) === 6 ? `[${options.host}]` : options.host}:${port}`).host;
  const address = `${own}/get_reward`;
  return {
    url: `http://${address}`,
    ...(token === undefined ? {} : { token }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
