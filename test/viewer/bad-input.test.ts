import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { loadConfig } from '../../config/load';
import { checkpointManifestKey, manifestKey, reportSeriesPrefix } from '../../core/keys';
import { TRAJECTORY_SCHEMA } from '../../core/trajectory';
import { startViewer, type Viewer } from '../../viewer/server';
import { eventually } from '../support/rollouts';
import { freePort, REPO_CONFIG, testStack, type TestStack } from '../stack';

/**
 * A TCP relay to a real server that can be cut and restored, so the viewer meets S3 and Temporal
 * going down and coming back without the shared servers being stopped.
 */
class Relay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  /** Refuses new connections and drops the open ones: the service is gone. */
  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
    this.server = undefined;
  }
}

const hostPort = (address: string) => {
  const [host, port] = address.replace(/^https?:\/\//, '').split(':');
  return { host: host!, port: Number(port) };
};

describe('viewer: bad input, damaged data, and S3 or Temporal going down', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let viewer: Viewer;
  let s3: Relay;
  let temporal: Relay;
  const stamp = Date.now().toString(36);
  let prefix: string;

  before(async () => {
    stack = await testStack();
    prefix = stack.config.storage.prefix;
    s3 = new Relay(await freePort(), hostPort(stack.config.storage.endpoint));
    temporal = new Relay(await freePort(), hostPort(stack.config.temporal.address));
    await s3.up();
    await temporal.up();
    const env = { ...stack.env, CODA_S3_ENDPOINT: `http://127.0.0.1:${s3.port}`, CODA_TEMPORAL_ADDRESS: `127.0.0.1:${temporal.port}` };
    viewer = await startViewer(loadConfig(REPO_CONFIG, env), env, { port: 0 });
  });

  after(async () => {
    await viewer?.close();
    await s3?.down();
    await temporal?.down();
  });

  /** Status, the page's title and its message. */
  const get = async (path: string) => {
    const response = await fetch(`${viewer.url}${path}`);
    const page = await response.text();
    const text = (pattern: RegExp) => (pattern.exec(page)?.[1] ?? '').replace(/<[^>]+>/g, '').replace(/&quot;/g, '"');
    return { status: response.status, title: text(/<h1>(.*?)<\/h1>/s), message: text(/<section class="error"[^>]*><h1>.*?<\/h1><p>(.*?)<\/p>/s), problems: [...page.matchAll(/<li><code>(.*?)<\/code><\/li>/g)].map((m) => m[1]!.replace(/&quot;/g, '"')), page };
  };

  it('answers unknown runs, trajectories, reports, judge evaluations and checkpoints with a 404 naming what was not found', async () => {
    const cases: Array<[string, RegExp, RegExp]> = [
      [`/runs/no-such-${stamp}`, new RegExp(`Not found: workflow no-such-${stamp}`), /Temporal has no workflow .* in namespace coda-test/],
      [`/training/no-such-${stamp}`, /Not found: workflow/, /Temporal has no workflow/],
      [`/trajectories/r${stamp}/KAlgebra/A-01/0`, new RegExp(`Not found: trajectory r${stamp}/KAlgebra/A-01/0`), new RegExp(`there is no s3://coda/${manifestKey(prefix, { run: `r${stamp}`, software: 'KAlgebra', task: 'A-01', attempt: 0 })}`)],
      [`/trajectories/r${stamp}/KAlgebra/A-01/first`, /Not found: trajectory/, /attempt "first" is not an attempt number/],
      [`/trajectories/r${stamp}/Kal%20gebra/A-01/0`, /Not found: trajectory/, /software "Kal gebra" cannot be part of a storage key/],
      [`/trajectories/r${stamp}/KAlgebra`, new RegExp(`Not found: run r${stamp}/KAlgebra`), /there is no trajectory under/],
      [`/evaluation/nightly-${stamp}`, new RegExp(`Not found: report series nightly-${stamp}`), /there is no report under/],
      [`/judge/je-${stamp}`, new RegExp(`Not found: judge evaluation je-${stamp}`), /judge-evals\/je-.*\.json/],
      [`/checkpoints/ck-${stamp}`, new RegExp(`Not found: checkpoint ck-${stamp}`), /checkpoints\/ck-.*\/manifest\.json/],
      ['/no/such/page', /Not found: page \/no\/such\/page/, /no such page/],
    ];
    for (const [path, title, message] of cases) {
      const got = await get(path);
      assert.equal(got.status, 404, path);
      assert.match(got.title, title, path);
      assert.match(got.message, message, path);
    }
    assert.equal((await get('/runs?status=exploded')).status, 400);
  });

  it('answers 404 or 400, never 500, for names of Object.prototype as a static file or a status filter', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const got = await get(`/static/${name}`);
      assert.equal(got.status, 404, `/static/${name}: ${got.title} ${got.message}`);
      assert.match(got.title, new RegExp(`Not found: static file ${name}`));
      assert.match(got.message, /the viewer serves viewer\.js, viewer\.css, chart\.umd\.js/);
      const filtered = await get(`/runs?status=${name}`);
      assert.equal(filtered.status, 400, `/runs?status=${name}: ${filtered.title} ${filtered.message}`);
      assert.match(filtered.title, new RegExp(`Bad request: status "${name}"`));
    }
    assert.equal((await get('/static/viewer.js')).status, 200);
    assert.equal((await get('/runs?status=running')).status, 200);
  });

  /** A GET carrying the Host header given, as a browser sends the name in its address bar (fetch sends the URL's own). */
  const getAs = (host: string, path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(viewer.url);
      const req = request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject).end();
    });

  it('runs open on loopback and answers only a loopback Host: a name another site points at 127.0.0.1 gets a 403 and nothing of the page', async () => {
    const port = new URL(viewer.url).port;
    assert.equal(viewer.login.kind, 'open');
    const screenshot = `${prefix}/runs/host${stamp}/KAlgebra/A-01/0/step-0.png`;
    await stack.store.put(screenshot, Buffer.from('89504e470d0a1a0a', 'hex'), 'image/png');
    const paths = ['/runs', '/evaluation', '/healthz', '/static/viewer.js', `/objects/${screenshot}`, '/no/such/page'];
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, `10.0.0.1:${port}`, `[::2]:${port}`, `127.0.0.1:${port}@evil.example`]) {
      for (const path of paths) {
        const got = await getAs(host, path);
        assert.equal(got.status, 403, `${host} ${path}`);
        assert.match(got.body, /Not a loopback address/, `${host} ${path}`);
        assert.doesNotMatch(got.body, new RegExp(`host${stamp}|<nav|Runs</h1>|^ok`), `${host} ${path}`);
      }
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`, `[::1]:${port}`, '127.0.0.2', 'localhost']) {
      for (const path of paths.slice(0, -1)) assert.equal((await getAs(host, path)).status, 200, `${host} ${path}`);
    }
  });

  it('serves an object by its extension, never by the type it was stored with: anything but an image, JSON or text as bytes, with nosniff and a CSP that runs nothing', async () => {
    const base = `${prefix}/runs/planted${stamp}/KAlgebra/A-01/0`;
    const script = '<script>document.title = "ran"</script>';
    const planted: Array<[string, string, string]> = [
      [`${base}/page.html`, 'text/html', 'application/octet-stream'],
      [`${base}/figure.svg`, 'image/svg+xml', 'application/octet-stream'],
      [`${base}/notes`, 'text/html; charset=utf-8', 'application/octet-stream'],
      [`${base}/step-0.png`, 'text/html', 'image/png'],
      [`${base}/manifest.json`, 'text/html', 'application/json; charset=utf-8'],
      [`${base}/judge.md`, 'text/html', 'text/plain; charset=utf-8'],
    ];
    for (const [key, stored, served] of planted) {
      await stack.store.put(key, script, stored);
      const response = await fetch(`${viewer.url}/objects/${key}`);
      assert.equal(response.status, 200, key);
      assert.equal(response.headers.get('content-type'), served, key);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', key);
      assert.equal(response.headers.get('content-security-policy'), "default-src 'none'; sandbox", key);
      assert.equal(await response.text(), script, `${key}: the bytes as stored`);
    }
  });

  it('names the report of a series that does not exist, and what the series has', async () => {
    const series = `s${stamp}`;
    const base = reportSeriesPrefix(prefix, series);
    await stack.store.putJson(`${base}/20261120T020000Z-n1.json`, { schema: 'coda.evaluation-report/v1' });
    const got = await get(`/evaluation/${series}/20261121T020000Z-n2`);
    assert.equal(got.status, 404);
    assert.match(got.title, /Not found: report 20261121T020000Z-n2 of series/);
    assert.match(got.message, /the series has 1 reports, 20261120T020000Z-n1/);
  });

  it('shows a damaged manifest, report or checkpoint with the damage named, not a blank page', async () => {
    const ref = { run: `damaged${stamp}`, software: 'KAlgebra', task: 'A-01', attempt: 0 };
    await stack.store.putJson(manifestKey(prefix, ref), { schema: TRAJECTORY_SCHEMA, run: ref.run, software: 'KAlgebra', taskId: 'A-01', attempt: 0, stage: 'test', task: { maxSteps: 0 }, steps: [{ index: 2 }] });
    let got = await get(`/trajectories/${ref.run}/KAlgebra/A-01/0`);
    assert.equal(got.status, 422);
    assert.match(got.title, new RegExp(`Damaged: trajectory ${ref.run}/KAlgebra/A-01/0`));
    assert.match(got.message, new RegExp(`s3://coda/${manifestKey(prefix, ref)} cannot be shown as it is`));
    for (const field of ['task.instruction', 'task.maxSteps', 'models', 'desktop', 'steps[0].screenshotKey', 'stop', 'resumes']) {
      assert.ok(got.problems.some((p) => p.startsWith(`${field}:`)), `names ${field}: ${got.problems.join('; ')}`);
    }
    // A listing of the run still shows the others, and marks this one.
    got = await get(`/trajectories/${ref.run}/KAlgebra`);
    assert.equal(got.status, 200);
    assert.match(got.page, /damaged manifest/);

    const cut = { ...ref, task: 'A-03' };
    await stack.store.put(manifestKey(prefix, cut), '{"schema": "coda.trajectory/v1", "steps": [', 'application/json');
    got = await get(`/trajectories/${ref.run}/KAlgebra/A-03/0`);
    assert.equal(got.status, 422);
    assert.ok(got.problems.some((p) => p.startsWith('not JSON:')), got.problems.join('; '));

    const series = `d${stamp}`;
    await stack.store.putJson(`${reportSeriesPrefix(prefix, series)}/20261120T020000Z-d1.json`, { schema: 'coda.evaluation-report/v1', series, run: 'd1', k: 0, createdAt: '2026-11-20T02:00:00Z', softwares: ['KAlgebra'], rows: [{ planner: 'base' }], unsupported: [] });
    got = await get(`/evaluation/${series}`);
    assert.equal(got.status, 422);
    assert.match(got.title, /Damaged: report 20261120T020000Z-d1/);
    assert.ok(got.problems.some((p) => p.startsWith('k:')) && got.problems.some((p) => p.startsWith('rows[0].model:')), got.problems.join('; '));

    await stack.store.putJson(checkpointManifestKey(prefix, `ck${stamp}`), { schema: 'coda.checkpoint/v1', name: `ck${stamp}`, kind: 'ppo' });
    got = await get(`/checkpoints/ck${stamp}`);
    assert.equal(got.status, 422);
    assert.ok(got.problems.some((p) => p.startsWith('kind:')), got.problems.join('; '));
  });

  it('says S3 is down while it is, keeps serving what needs only Temporal, and recovers when S3 is back', async () => {
    await s3.down();
    try {
      for (const path of [`/trajectories/r${stamp}/KAlgebra/A-01/0`, '/evaluation', '/judge', `/checkpoints/ck-${stamp}`]) {
        const got = await get(path);
        assert.equal(got.status, 503, `${path}: ${got.status} ${got.title} ${got.message}`);
        assert.equal(got.title, 'S3 is not answering', `${path}: ${got.title} ${got.message}`);
        assert.match(got.message, new RegExp(`S3 at http://127\\.0\\.0\\.1:${s3.port} \\(bucket coda\\) did not answer: \\S`), `${path}: ${got.message}`);
      }
      assert.equal((await get('/runs')).status, 200, 'the runs page needs Temporal only');
      assert.equal((await fetch(`${viewer.url}/healthz`)).status, 200);
    } finally {
      await s3.up();
    }
    assert.equal((await get('/evaluation')).status, 200);
  });

  it('says Temporal is down while it is, keeps serving what needs only S3, and recovers when Temporal is back', async () => {
    await temporal.down();
    try {
      for (const path of ['/runs', `/runs/no-such-${stamp}`, '/training']) {
        const got = await get(path);
        assert.equal(got.status, 503, `${path}: ${got.status} ${got.title} ${got.message}`);
        assert.equal(got.title, 'Temporal is not answering', path);
        assert.match(got.message, new RegExp(`Temporal at 127\\.0\\.0\\.1:${temporal.port} \\(namespace coda-test\\) did not answer`), path);
      }
      assert.equal((await get('/evaluation')).status, 200, 'the evaluation pages need S3 only');
    } finally {
      await temporal.up();
    }
    // gRPC reconnects with its own backoff.
    await eventually('the runs page once Temporal is back', async () => ((await get('/runs')).status === 200 ? true : undefined), 60_000);
  });
});
