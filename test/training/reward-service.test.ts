import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelGateway } from '../../activities/models/gateway';
import { s3Images } from '../../activities/models/images';
import { s3RewardScorer } from '../../activities/training/reward';
import { startRewardService, type RewardService } from '../../activities/training/reward-service';
import { rewardServiceMetrics, type RewardServiceMetrics } from '../../activities/metrics';
import { formatPlannerOutput } from '../../core/planner-parser';
import { EXTRA_LOG_NAMES, type ExtraLogName } from '../../core/remote-reward';
import { grpoRows, plannerMessagesAt, type GrpoRow } from '../../core/training';
import { RewardClient } from '../../doubles/trainers/openrlhf-reward-client';
import { applyChatTemplate, END_OF_TURN, expandImagePads } from '../../doubles/trainers/qwen2-vl';
import { startHarness, type Harness } from '../support/harness';
import { freePort } from '../stack';
import { allSteps, recordTrajectory, SCREEN, type RecordedTrajectory } from './dataset';

/** The request OpenRLHF sends for one sample of `row` whose reply is `reply`. */
function openrlhfRequest(row: GrpoRow, reply: string) {
  const prompt = applyChatTemplate(row.prompt);
  return { query: [`${expandImagePads(prompt, row.images.map(() => SCREEN))}${reply}${END_OF_TURN}`], prompts: [prompt], labels: [row.label] };
}

/** The value of a counter (or a histogram's `_count`, `_bucket`...) summed over the samples whose labels include `labels`. */
async function value(metric: { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown>; metricName?: string }> }> }, labels: Record<string, string | number> = {}, suffix?: string): Promise<number> {
  const { values } = await metric.get();
  return values
    .filter((v) => (suffix === undefined || v.metricName?.endsWith(suffix)) && Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0);
}

/** extra_logs of a one-sample answer: every name, 0 but for `set`. */
const logs = (set: Partial<Record<ExtraLogName, number>>): Record<string, number[]> => Object.fromEntries(EXTRA_LOG_NAMES.map((name) => [name, [set[name] ?? 0]]));

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

describe('reward service: OpenRLHF remote reward protocol, scored by the frozen executor', function () {
  this.timeout(120_000);
  let h: Harness;
  let trajectory: RecordedTrajectory;
  let rows: ReturnType<typeof grpoRows>;
  let service: Service;
  const started: RewardService[] = [];

  type Service = RewardService & { readonly metrics: RewardServiceMetrics };
  const startService = async (models: Harness['config']['models'] = h.config.models, settings: Partial<Harness['config']['training']['rewardService']> = {}): Promise<Service> => {
    const all = { ...h.config.training.rewardService, port: await freePort(), ...settings };
    const metrics = rewardServiceMetrics();
    const s = await startRewardService({ scorer: s3RewardScorer({ ...h.config, models }, h.stack.store, all, h.env), host: '127.0.0.1', port: all.port, cacheSize: all.cacheSize, limits: all, metrics, log: () => undefined });
    started.push(s);
    return { ...s, metrics };
  };
  /** What the scripted planner answers at a row's step (the reference step: the executor grounds it to the label's action). */
  const plannerReply = async (step: number): Promise<string> => {
    const gateway = new ModelGateway({ models: h.config.models, images: s3Images(h.stack.store, 60), env: h.env });
    return (await gateway.complete('planner', plannerMessagesAt(trajectory.manifest, step))).texts[0]!;
  };
  const executorCalls = (): number => h.models.served.get(h.config.models.executor.model) ?? 0;

  before(async () => {
    h = await startHarness({ name: 'reward', desktops: 1, displayFrom: 540 });
    trajectory = await recordTrajectory(h.stack.store, h.config, h.env, `reward${Date.now()}`, 'C-08');
    rows = grpoRows(trajectory.manifest, trajectory.manifestKey, allSteps(trajectory), { screen: SCREEN, box: h.config.models.planner.image! });
    service = await startService();
  });
  after(async () => {
    for (const s of started) await s.close();
    await h?.stop();
  });

  it('scores one sample: the planner thought the executor grounds to the labelled action earns 2', async () => {
    assert.deepEqual(rows.map((r) => r.step), [1, 2, 3, 4, 5], 'C-08: click, type, click, type, done');
    const before = executorCalls();
    const { status, body } = await post(service.url, openrlhfRequest(rows[2]!.row, await plannerReply(3)));
    assert.equal(status, 200);
    assert.deepEqual(body, { rewards: [2], scores: [1], extra_logs: logs({ type_match: 1 }), errors: [null] });
    assert.equal(executorCalls(), before + 1, 'one executor call');
  });

  it('scores a reply with the wrong kind of action, and an executor reply it cannot parse, as 0 with the reason', async () => {
    const answer = await post(service.url, openrlhfRequest(rows[0]!.row, formatPlannerOutput('The result is visible.', { kind: 'answer', text: '42' })));
    assert.deepEqual(answer.body, { rewards: [0], scores: [0], extra_logs: logs({ primitive: 1, type_match: 0 }), errors: [null] }, 'ANS against a click: no executor call, no match');
    const vague = await post(service.url, openrlhfRequest(rows[0]!.row, formatPlannerOutput('Look around the window.', { kind: 'instruction', text: 'look around' })));
    assert.equal(vague.status, 200);
    assert.deepEqual(vague.body.rewards, [0]);
    assert.deepEqual(vague.body.extra_logs, logs({ unparsable: 1 }));
    assert.match(vague.body.errors[0], /^executor output malformed: /);
  });

  it('scores a planner primitive without the executor', async () => {
    const before = executorCalls();
    const { body } = await post(service.url, openrlhfRequest(rows[4]!.row, await plannerReply(5)));
    assert.deepEqual(body, { rewards: [2], scores: [1], extra_logs: logs({ primitive: 1, type_match: 1 }), errors: [null] });
    assert.equal(executorCalls(), before);
  });

  it('answers empty lists with empty lists (what OpenRLHF 0.11.0 sent the servers after the first)', async () => {
    const { status, body } = await post(service.url, { query: [], prompts: [], labels: [] });
    assert.equal(status, 200);
    assert.deepEqual(body, { rewards: [], scores: [], extra_logs: Object.fromEntries(EXTRA_LOG_NAMES.map((name) => [name, []])), errors: [] });
  });

  it('writes rewards, scores and logs as floats, whole ones too (OpenRLHF makes int64 tensors of JSON integers)', async () => {
    const request = openrlhfRequest(rows[0]!.row, formatPlannerOutput('The result is visible.', { kind: 'answer', text: '42' }));
    const response = await fetch(service.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
    const text = await response.text();
    assert.match(text, /^\{"rewards":\[0\.0\],"scores":\[0\.0\],"extra_logs":\{"type_match":\[0\.0\],"primitive":\[1\.0\],/);
  });

  it('with several URLs, as OpenRLHF 0.11.2 calls them: each sample goes to the next server, which scores it and keeps it in its own cache', async () => {
    const servers = [await startService(), await startService(), await startService()];
    const requests = await Promise.all([1, 2, 3, 4].map(async (step) => openrlhfRequest(rows[step - 1]!.row, await plannerReply(step))));
    const client = new RewardClient(servers.map((s) => s.url));
    const before = executorCalls();
    // Samples 1, 2, 3, 4, then 1 and 3 again: servers 0, 1, 2, 0, 1, 2.
    const answers = [];
    for (const request of [...requests, requests[0]!, requests[2]!]) answers.push(await client.fetch({ queries: request.query, prompts: request.prompts, labels: request.labels }));
    assert.deepEqual(answers.map((a) => a.map((one) => one.rewards)), [[[2]], [[2]], [[2]], [[2]], [[2]], [[2]]], "one answer per call");
    const counts = async (s: Service) => ({ requests: await value(s.metrics.requests), empty: await value(s.metrics.requests, { outcome: 'empty' }), hits: await value(s.metrics.cacheHits) });
    assert.deepEqual(await Promise.all(servers.map(counts)), [
      { requests: 2, empty: 0, hits: 0 },
      { requests: 2, empty: 0, hits: 0 },
      { requests: 2, empty: 0, hits: 1 },
    ], 'sample 1 again reached a server that had not scored it; sample 3 again the one that had');
    assert.equal(executorCalls(), before + 5);
  });

  it('is idempotent: the same sample again is answered from the cache, without the executor', async () => {
    const fresh = await startService();
    const request = openrlhfRequest(rows[3]!.row, await plannerReply(4));
    const before = executorCalls();
    const first = await post(fresh.url, request);
    const again = await post(fresh.url, request);
    assert.deepEqual(again.body, first.body);
    assert.deepEqual(first.body.rewards, [2]);
    assert.equal(executorCalls(), before + 1, 'the executor was asked once');
    assert.equal(await value(fresh.metrics.requests, { outcome: 'ok' }), 2);
    assert.equal(await value(fresh.metrics.cacheHits), 1);
    assert.equal(await value(fresh.metrics.executorSeconds, {}, '_count'), 1, 'one executor call timed');
    assert.equal(await value(fresh.metrics.rewards, { le: 1.5 }, '_bucket'), 0, 'no reward below 2');
    assert.equal(await value(fresh.metrics.rewards, { le: 2 }, '_bucket'), 2);
    assert.equal(await value(fresh.metrics.seconds, {}, '_count'), 2);
  });

  it('answers 0 with the error when the executor is down, and asks again next time (a failure is not kept)', async () => {
    const port = await freePort();
    const down = await startService({ ...h.config.models, executor: { ...h.config.models.executor, baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 } });
    const request = openrlhfRequest(rows[0]!.row, await plannerReply(1));
    for (let i = 0; i < 2; i++) {
      const { status, body } = await post(down.url, request);
      assert.equal(status, 200);
      assert.deepEqual(body.rewards, [0]);
      assert.deepEqual(body.extra_logs, logs({ executor_failed: 1 }));
      assert.match(body.errors[0], /^executor: executor \(ui-tars-1\.5-7b at http:\/\/127\.0\.0\.1:\d+\/v1\) is unreachable/);
    }
    assert.equal(await value(down.metrics.cacheHits), 0);
    assert.equal(await value(down.metrics.failures, { reason: 'executor_failed' }), 2);
    assert.equal(await value(down.metrics.requests, { outcome: 'zero' }), 2);
  });

  it('answers 0 when no reward is ready by the deadline (an executor that never replies)', async () => {
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/v1`;
      const slow = await startService({ ...h.config.models, executor: { ...h.config.models.executor, baseUrl: url, maxRetries: 0 } }, { deadlineSeconds: 0.5 });
      const { status, body } = await post(slow.url, openrlhfRequest(rows[0]!.row, await plannerReply(1)));
      assert.equal(status, 200);
      assert.deepEqual(body.extra_logs, logs({ timed_out: 1 }));
      assert.match(body.errors[0], /^no reward within 500 ms/);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it('answers 0 with the reason for a label it cannot read, and for a query that does not continue its prompt', async () => {
    const request = openrlhfRequest(rows[0]!.row, await plannerReply(1));
    const label = JSON.parse(rows[0]!.row.label) as Record<string, any>;
    const cases: Array<[string[], string, RegExp]> = [
      [[...request.query], 'not json', /^label: not JSON$/],
      [[...request.query], JSON.stringify({ ...label, screen: { width: 0, height: 1080 } }), /^label: screen\.width: /],
      [[...request.query], JSON.stringify({ ...label, manifestKey: 'coda/runs/none/KAlgebra/X/0/manifest.json' }), /^label\.manifestKey coda\/runs\/none\/KAlgebra\/X\/0\/manifest\.json: /],
      [[request.query[0]!.replace('Task (in KAlgebra)', 'Task (in Celestia)')], rows[0]!.row.label, /^the query does not begin with its prompt/],
    ];
    for (const [query, labelText, reason] of cases) {
      const { status, body } = await post(service.url, { query, prompts: request.prompts, labels: [labelText] });
      assert.equal(status, 200, labelText);
      assert.deepEqual(body.rewards, [0]);
      assert.match(body.errors[0], reason);
    }
  });

  it('refuses what is not the protocol with a 400 naming the field, and unknown routes with a 404', async () => {
    assert.deepEqual(await post(service.url, '{"query": ['), { status: 400, body: { error: 'body: not JSON' } });
    assert.deepEqual(await post(service.url, { query: ['q'], prompts: ['p'] }), { status: 400, body: { error: 'labels: expected a list of strings' } });
    assert.deepEqual(await post(service.url, { query: ['q'], prompts: ['p'], labels: [1] }), { status: 400, body: { error: 'labels[0]: expected a string' } });
    assert.deepEqual(await post(service.url.replace('/get_reward', '/reward'), {}), { status: 404, body: { detail: 'Not Found' } });
    assert.equal((await fetch(service.url.replace('/get_reward', '/health'))).status, 200);
    assert.equal(await value(service.metrics.requests, { outcome: 'refused' }), 3);
  });
});
