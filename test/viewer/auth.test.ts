import assert from 'node:assert/strict';
import { loadConfig } from '../../config/load';
import { checkpointManifestKey, reportSeriesPrefix } from '../../core/keys';
import { buildEvaluationReport } from '../../core/report';
import { CHECKPOINT_SCHEMA, checkpointManifestSchema } from '../../core/training';
import { authorized } from '../../viewer/auth';
import { startViewer, type Viewer } from '../../viewer/server';
import { REPO_CONFIG, testStack, type TestStack } from '../stack';
import { APPS } from '../../apps/index';

const TOKEN = 'viewer-test-token-3f9a1c7e5b';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * A viewer behind its login and an open one on the same real S3 and Temporal: without the token
 * every route but /healthz is a 401 with a Basic challenge; with it, each route answers exactly
 * as the open viewer does (200 where the data exists, the page's own 404 where it does not).
 */
describe('viewer behind its login, on real S3 and Temporal', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let guarded: Viewer;
  let open: Viewer;
  const stamp = Date.now().toString(36);
  const series = `auth-${stamp}`;
  let routes: Array<{ path: string; status: number }>;

  before(async () => {
    stack = await testStack();
    const prefix = stack.config.storage.prefix;
    const env = { ...stack.env, CODA_VIEWER_TOKEN: TOKEN };
    guarded = await startViewer(loadConfig(REPO_CONFIG, env), env, { port: 0 });
    open = await startViewer(stack.config, { ...stack.env, CODA_VIEWER_TOKEN: '' }, { port: 0 });
    assert.equal(guarded.login.kind, 'token');
    assert.equal(open.login.kind, 'open');

    const report = buildEvaluationReport(APPS, {
      series,
      run: `auth${stamp}`,
      k: 1,
      createdAt: new Date().toISOString(),
      rows: [{ planner: 'base', model: 'coda-planner', runs: { KAlgebra: `auth${stamp}` }, records: [{ software: 'KAlgebra', taskId: 'A-01', run: 0, success: true }, { software: 'KAlgebra', taskId: 'A-02', run: 0, success: false }] }],
    });
    const reportKey = `${reportSeriesPrefix(prefix, series)}/20261125T010000Z-auth${stamp}.json`;
    await stack.store.putJson(reportKey, report);
    const checkpoint = `ck${stamp}`;
    await stack.store.putJson(
      checkpointManifestKey(prefix, checkpoint),
      checkpointManifestSchema.parse({ schema: CHECKPOINT_SCHEMA, name: checkpoint, kind: 'grpo', createdAt: new Date().toISOString(), base: { model: 'coda-planner', path: 'Qwen/Qwen2.5-VL-32B-Instruct' }, dataset: `${prefix}/datasets/${checkpoint}/manifest.json`, sources: [], job: checkpoint, steps: 1, metrics: {}, lora: true, filesPrefix: `${prefix}/checkpoints/${checkpoint}/files`, double: true }),
    );
    const screenshotKey = `${prefix}/runs/auth${stamp}/KAlgebra/A-01/0/step-0.png`;
    await stack.store.put(screenshotKey, Buffer.from('89504e470d0a1a0a', 'hex'), 'image/png');

    const paths = [
      '/',
      '/runs',
      `/runs/no-such-${stamp}`,
      `/runs/no-such-${stamp}/progress`,
      `/trajectories/auth${stamp}/KAlgebra`,
      `/trajectories/auth${stamp}/KAlgebra/A-01/0`,
      '/evaluation',
      `/evaluation/${series}`,
      `/evaluation/${series}/20261125T010000Z-auth${stamp}`,
      '/training',
      `/training/no-such-${stamp}`,
      `/checkpoints/${checkpoint}`,
      '/judge',
      `/judge/je-${stamp}`,
      `/objects/${reportKey}`,
      `/objects/${screenshotKey}`,
      '/static/viewer.js',
      '/static/viewer.css',
      '/static/chart.umd.js',
      '/favicon.ico',
      '/no/such/page',
    ];
    routes = [];
    for (const path of paths) routes.push({ path, status: (await fetch(`${open.url}${path}`, { redirect: 'manual' })).status });
  });

  after(async () => {
    await guarded?.close();
    await open?.close();
  });

  it('answers 200 on the open viewer where the data exists (what the routes below are checked against)', () => {
    const ok = routes.filter((r) => r.status === 200).map((r) => r.path);
    for (const path of ['/runs', '/evaluation', `/evaluation/${series}`, '/training', `/checkpoints/ck${stamp}`, '/judge', '/static/viewer.js']) assert.ok(ok.includes(path), `${path}: ${JSON.stringify(routes)}`);
    assert.equal(routes.filter((r) => r.path.startsWith('/objects/')).every((r) => r.status === 200), true);
  });

  it('refuses every page, object and static file without the token: 401, a Basic challenge, and nothing of the page', async () => {
    for (const { path } of routes) {
      const response = await fetch(`${guarded.url}${path}`, { redirect: 'manual' });
      assert.equal(response.status, 401, path);
      assert.equal(response.headers.get('www-authenticate'), 'Basic realm="coda viewer", charset="UTF-8"', path);
      const body = await response.text();
      assert.match(body, /Login needed/, path);
      assert.doesNotMatch(body, new RegExp(`auth${stamp}|ck${stamp}`), `${path} shows nothing of what exists`);
    }
  });

  it('refuses a wrong token, as Bearer and as Basic', async () => {
    for (const authorization of [`Bearer ${TOKEN}-wrong`, basic('admin', 'not-the-token-at-all'), `Bearer ${TOKEN.toUpperCase()}`]) {
      for (const path of ['/runs', `/evaluation/${series}`, routes.find((r) => r.path.endsWith('.json'))!.path]) {
        assert.equal((await fetch(`${guarded.url}${path}`, { headers: { authorization } })).status, 401, `${authorization} ${path}`);
      }
    }
  });

  it('answers every route with the token exactly as the open viewer does, as Bearer and as Basic', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, basic('lab-member', TOKEN)]) {
      for (const { path, status } of routes) {
        const response = await fetch(`${guarded.url}${path}`, { headers: { authorization }, redirect: 'manual' });
        assert.equal(response.status, status, `${authorization.split(' ')[0]} ${path}`);
        assert.notEqual(response.status, 401, path);
      }
    }
  });

  it('answers /healthz without a login', async () => {
    const response = await fetch(`${guarded.url}/healthz`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'ok\n');
  });
});
