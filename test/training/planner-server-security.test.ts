import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { newPlannerKey, PYTHON } from '../../infra/small-planner/runs';
import { freePort } from '../stack';
import { LAUNCHER } from '../support/tiny-qwen';
import { tinyQwen } from '../../infra/small-planner/artifacts';

const NAME = 'tiny-guarded';
const KEY_ENV = 'CODA_TEST_PLANNER_KEY';
const MiB = 1024 * 1024;

/** A PNG of `width` x `height` black pixels; `truncated`, its header alone with a few bytes of data (no decoder gets through it). */
function png(width: number, height: number, truncated = false): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const framed = Buffer.alloc(body.length + 8);
    framed.writeUInt32BE(data.length, 0);
    body.copy(framed, 4);
    framed.writeUInt32BE(crc32(body), body.length + 4);
    return framed;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit grey
  const rows = truncated ? Buffer.alloc(16) : Buffer.alloc((width + 1) * height);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}
const dataUrl = (image: Buffer): string => `data:image/png;base64,${image.toString('base64')}`;

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * The real LLaMA-Factory 0.9.5 API server on CPU, started once by the project's launcher
 * (infra/serving/llamafactory_api.py) on the tiny Qwen2.5-VL, asked as a stranger on this machine
 * or a web page in the operator's browser would ask it (issue 44 item 1). Each refusal is shown by
 * its answer and, for a body, by how much of it the server can have read: every request stays on
 * 127.0.0.1, no image is decoded beyond its header, and `n` and the images stay a step past their
 * caps. The guard's checks without the server: test/unit/planner-guard.test.ts.
 * CODA_SKIP_REAL_TRAINERS=1 leaves this file out of the run (.mocharc.js).
 */
describe('the planner server refuses strangers (the real LLaMA-Factory API server on CPU, behind the launcher)', function () {
  this.timeout(300_000);
  let scratch: string;
  let model: string;
  let port: number;
  const key = newPlannerKey();
  const env = { ...(process.env as Record<string, string>), [KEY_ENV]: key };
  const stateDir = (): string => path.join(scratch, 'server');
  const start = (args: readonly string[], keyed: Record<string, string> = env) =>
    spawnSync(PYTHON, [LAUNCHER, 'start', '--model', model, '--name', NAME, '--state-dir', stateDir(), '--seed', '1', '--timeout', '240', ...args], { encoding: 'utf8', env: keyed });

  /** One request on a connection of its own, its body as given. */
  const ask = (opts: { method?: string; path?: string; headers?: Record<string, string>; body?: unknown; keyed?: boolean }): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...(opts.keyed === false ? {} : { authorization: `Bearer ${key}` }), ...opts.headers };
      const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
      if (body !== undefined) headers['content-type'] = 'application/json';
      const request = httpRequest({ host: '127.0.0.1', port, path: opts.path ?? '/v1/chat/completions', method: opts.method ?? (body === undefined ? 'GET' : 'POST'), agent: false, headers }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      });
      request.once('error', reject);
      request.end(body);
    });
  const chat = (extra: Record<string, unknown>, content: unknown = 'hi') => ({ model: NAME, messages: [{ role: 'user', content }], max_tokens: 1, ...extra });
  const images = (...urls: string[]) => urls.map((url) => ({ type: 'image_url', image_url: { url } }));

  /**
   * Declares a body of `declared` bytes with `Expect: 100-continue`, as curl does for a large one:
   * zeros are sent only once the server asks for them (100 Continue, which uvicorn sends when the
   * app first reads the body). The final status and the bytes sent before it: all the server read.
   */
  const declareBody = (declared: number, headers: Record<string, string>): Promise<{ status: number; sent: number }> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let sent = 0;
      let reply = '';
      let continued = false;
      const chunk = Buffer.alloc(64 * 1024);
      const pump = (): void => {
        while (sent < declared) {
          const piece = chunk.subarray(0, Math.min(chunk.length, declared - sent));
          sent += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
      };
      socket.on('data', (data: Buffer) => {
        reply += data.toString('latin1');
        if (!continued && /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.test(reply)) {
          continued = true;
          reply = reply.replace(/^HTTP\/1\.1 100 [^\r]*\r\n\r\n/, '');
          pump();
        }
        const final = /^HTTP\/1\.1 (\d{3})/.exec(reply);
        if (final !== null) {
          socket.destroy();
          resolve({ status: Number(final[1]), sent });
        }
      });
      socket.once('error', reject);
      socket.on('connect', () => {
        const lines = ['POST /v1/chat/completions HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', `Content-Length: ${declared}`, 'Expect: 100-continue', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
        socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      });
    });

  before(async () => {
    assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run bash infra/install-trainers.sh`);
    scratch = mkdtempSync(path.join(tmpdir(), 'coda-planner-guard-'));
    model = (await tinyQwen()).dir; // read only: the server loads it
    port = await freePort();
    const started = start(['--port', String(port), '--api-key-env', KEY_ENV, '--allow-host', 'planner.test']);
    assert.equal(started.status, 0, started.stderr);
  });
  after(() => {
    if (scratch === undefined) return;
    // The server, and one a launcher that took no key would have started (on code without the refusal).
    for (const dir of [stateDir(), path.join(scratch, 'unstarted')]) {
      if (existsSync(path.join(dir, 'server.pid'))) execFileSync(PYTHON, [LAUNCHER, 'stop', '--state-dir', dir], { stdio: 'ignore' });
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  it('is never started without a key: none, one not set, a short one, and on 0.0.0.0 alike; the key stays off its command line', async () => {
    const other = path.join(scratch, 'unstarted');
    const attempt = (args: string[], keyed?: Record<string, string>) => {
      const run = spawnSync(PYTHON, [LAUNCHER, 'start', '--model', model, '--name', NAME, '--port', '1', '--state-dir', other, ...args], { encoding: 'utf8', env: keyed ?? env });
      return { status: run.status, said: run.stderr.trim().split('\n').at(-1) };
    };
    assert.deepEqual(attempt([]), { status: 2, said: 'llamafactory_api.py start: error: the following arguments are required: --api-key-env' });
    assert.deepEqual(attempt(['--host', '0.0.0.0']), { status: 2, said: 'llamafactory_api.py start: error: the following arguments are required: --api-key-env' });
    assert.deepEqual(attempt(['--api-key-env', 'CODA_TEST_UNSET_KEY']), { status: 1, said: 'llamafactory_api.py: --api-key-env names CODA_TEST_UNSET_KEY, which is not set (the server always demands a key): nothing was restarted' });
    assert.deepEqual(attempt(['--api-key-env', KEY_ENV, '--host', '0.0.0.0'], { ...env, [KEY_ENV]: 'EMPTY' }), {
      status: 1,
      said: `llamafactory_api.py: --api-key-env names ${KEY_ENV}, whose key is shorter than 16 characters or holds whitespace: nothing was restarted`,
    });
    assert.equal(existsSync(path.join(other, 'server.pid')), false, 'no server was started');
    const pid = readFileSync(path.join(stateDir(), 'server.pid'), 'utf8').trim();
    assert.ok(!readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(key), 'the key is not on the command line of the server');
  });

  it('answers every route but /health only with the key', async () => {
    for (const route of ['/docs', '/openapi.json', '/v1/models']) {
      assert.deepEqual(await ask({ path: route, keyed: false }).then((a) => [a.status, a.body]), [401, '{"detail": "Invalid API key."}'], route);
      assert.equal((await ask({ path: route, keyed: false, headers: { authorization: `Bearer ${key.slice(1)}` } })).status, 401, route);
    }
    assert.equal((await ask({ body: chat({}), keyed: false })).status, 401);
    assert.deepEqual(await ask({ path: '/health', keyed: false }).then((a) => [a.status, a.body]), [200, '{}']);
    assert.equal((await ask({ path: '/v1/models' })).status, 200);
  });

  it('refuses a Host other than its bind address or the names given at start, and any Origin, with no CORS header', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const answer = await ask({ path: '/v1/models', headers: { host } });
      assert.deepEqual([answer.status, answer.body], [403, '{"detail": "Not a host this server answers"}'], host);
    }
    for (const host of [`127.0.0.1:${port}`, `planner.test:${port}`]) assert.ok((await ask({ path: '/v1/models', headers: { host } })).body.includes(NAME), host);
    for (const [method, headers] of [
      ['GET', { origin: 'http://evil.example' }],
      ['OPTIONS', { origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' }],
      ['GET', { origin: `http://127.0.0.1:${port}` }],
    ] as const) {
      const answer = await ask({ method, path: '/v1/models', headers });
      assert.deepEqual([answer.status, answer.body], [403, '{"detail": "Cross-origin requests are not answered"}'], `${method} ${JSON.stringify(headers)}`);
      assert.equal(answer.headers['access-control-allow-origin'], undefined);
    }
  });

  it('checks the key before reading the body, and reads no more than its cap of a keyed one', async () => {
    // 64 MiB declared without the key: answered from the headers, no byte of the body asked for.
    assert.deepEqual(await declareBody(64 * MiB, {}), { status: 401, sent: 0 });
    assert.deepEqual(await declareBody(16 * MiB + 1, { authorization: `Bearer ${key}` }), { status: 413, sent: 0 }, 'a body declared beyond the 16 MiB cap');
    // Within the cap, the keyed body is asked for and read (here not JSON, which LLaMA-Factory refuses itself).
    assert.deepEqual(await declareBody(MiB, { authorization: `Bearer ${key}` }), { status: 422, sent: MiB });
  });

  it('caps n, the images a request carries and their pixels (by the header), and takes no image from a path or another host', async () => {
    assert.deepEqual(await ask({ body: chat({ n: 17 }) }).then((a) => [a.status, a.body]), [400, '{"detail": "n: at most 16 samples a request, got 17"}']);
    const small = dataUrl(png(28, 28));
    assert.deepEqual(await ask({ body: chat({}, images(...Array<string>(9).fill(small))) }).then((a) => [a.status, a.body]), [400, '{"detail": "at most 8 images a request, got 9"}']);
    assert.deepEqual(await ask({ body: chat({}, images(dataUrl(png(5000, 5000, true)))) }).then((a) => [a.status, a.body]), [400, '{"detail": "an image of at most 8294400 pixels, got 25000000"}']);
    assert.equal((await ask({ body: chat({}, [{ type: 'text', text: 'hi' }, ...images(small)]) })).status, 200, 'one small image is answered');

    // A file that exists and one that does not are answered alike; a loopback server is not asked.
    const asked: string[] = [];
    const stranger = createServer((q, r) => (asked.push(q.url ?? ''), r.end('x'))).listen(0, '127.0.0.1');
    await new Promise((resolve) => stranger.once('listening', resolve));
    try {
      const where = stranger.address() as { port: number };
      const answers = [];
      for (const url of [path.join(model, 'config.json'), path.join(model, 'no-such-file.png'), `http://127.0.0.1:${where.port}/secret.png`]) {
        const answer = await ask({ body: chat({}, images(url)) });
        answers.push([answer.status, answer.body]);
      }
      assert.deepEqual(answers, Array(3).fill([400, '{"detail": "image_url: expected a data: URL"}']));
      const video = await ask({ body: chat({}, [{ type: 'video_url', video_url: { url: path.join(model, 'config.json') } }]) });
      assert.deepEqual([video.status, video.body], [400, '{"detail": "the planner server takes text and images only"}']);
      assert.deepEqual(asked, []);
    } finally {
      stranger.close();
    }
  });

  it("gives a request the same samples whatever was asked before it: no request consumes another's draws", async () => {
    const texts = async (content: string, seed?: number): Promise<string[]> => {
      const answer = await ask({ body: chat({ n: 2, max_tokens: 6, temperature: 1, ...(seed === undefined ? {} : { seed }) }, content) });
      assert.equal(answer.status, 200, answer.body);
      return (JSON.parse(answer.body) as { choices: Array<{ message: { content: string } }> }).choices.map((c) => c.message.content);
    };
    const first = await texts('plan the next step', 5);
    await texts('another request between', 5);
    await texts('and one more, unseeded');
    assert.deepEqual(await texts('plan the next step', 5), first, 'the same request after two others');
    assert.notDeepEqual(await texts('plan the next step', 6), first, 'another seed draws otherwise');
    const unseeded = await texts('no seed given');
    await texts('a stranger in between');
    assert.deepEqual(await texts('no seed given'), unseeded, 'a request without a seed draws by itself too');
  });
});
