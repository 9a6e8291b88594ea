import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminal } from '../../core/episode';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { startDaemon, stopDaemon } from '../../infra/daemon';
import { workerSpec } from '../../infra/worker-process';
import type { RolloutResult } from '../../core/rollout-types';
import { startHarness, type Harness } from '../support/harness';
import { manifestOf, startRollout, waitForPoller } from '../support/rollouts';
import { freePort } from '../stack';
import { scrape, total, type Scrape } from '../support/prometheus';

describe('metrics: the Prometheus endpoints of the workers', function () {
  this.timeout(300_000);
  let h: Harness;
  const urls = { orchestrator: '', vmHost: '' };

  before(async () => {
    const ports = { orchestrator: await freePort(), vmHost: await freePort() };
    // The host's own port (hosts[].metricsPort, for machines with several vm-hosts), the orchestrator's from the environment.
    h = await startHarness({ name: 'metrics', desktops: 1, displayFrom: 590, edit: (doc) => void (doc.hosts[0].metricsPort = ports.vmHost) });
    // The workers run as the real processes here: the endpoint is theirs, the SDK's runtime too.
    await h.stopOrchestrator();
    const env = { ...h.env, CODA_ORCHESTRATOR_METRICS_PORT: String(ports.orchestrator) };
    const orchestrator = startDaemon(h.config.dataDir, workerSpec(h.config, 'orchestrator', [], env, 'metrics-orchestrator'));
    const vmHost = startDaemon(h.config.dataDir, workerSpec(h.config, 'vm-host', ['--host', h.hostId], env, 'metrics-vm-host'));
    await waitForPoller(h, orchestrator, h.config.taskQueues.orchestrator);
    await waitForPoller(h, vmHost, h.config.hosts[0]!.taskQueue);
    urls.orchestrator = `http://127.0.0.1:${ports.orchestrator}/metrics`;
    urls.vmHost = `http://127.0.0.1:${ports.vmHost}/metrics`;
  });

  after(async () => {
    for (const name of ['metrics-orchestrator', 'metrics-vm-host']) if (h) await stopDaemon(h.config.dataDir, name, 10_000);
    await h?.stop();
  });

  it("counts during a real rollout and its judging, on the orchestrator's and the vm-host's endpoints, beside the Temporal SDK's own metrics", async () => {
    const before = { orchestrator: await scrape(urls.orchestrator), vmHost: await scrape(urls.vmHost) };
    for (const samples of Object.values(before)) {
      assert.ok(samples.some((s) => s.name.startsWith('temporal_')), "the SDK's metrics");
      assert.ok(samples.some((s) => s.name === 'process_cpu_user_seconds_total'), "the process's metrics");
    }
    const steps = (s: Scrape) => total(s, 'coda_steps_total', { outcome: 'performed' });
    const handle = await startRollout(h, `metrics${Date.now().toString(36)}`, 'B-07');
    // Scraped over and over while the rollout runs: a counter never goes back.
    const seen: number[] = [];
    const leased: number[] = [];
    const result = handle.result() as Promise<RolloutResult>;
    let done = false;
    void result.finally(() => (done = true));
    while (!done) {
      const samples = await scrape(urls.vmHost);
      seen.push(steps(samples));
      leased.push(total(samples, 'coda_desktops_leased', { host: h.hostId }));
      await sleep(200);
    }
    assert.deepEqual(seen, [...seen].sort((a, b) => a - b), 'coda_steps_total only grows');
    assert.ok(leased.includes(1) && leased.every((n) => n === 0 || n === 1), `the one desktop was seen leased while the rollout ran: ${leased.join(' ')}`);
    const rollout = await result;
    const manifest = await manifestOf(h, rollout);

    const vmHost = await scrape(urls.vmHost);
    const performed = manifest.steps.filter((s) => s.action !== null && !isTerminal(s.action)).length;
    assert.equal(steps(vmHost) - steps(before.vmHost), performed, 'every action performed, counted once');
    assert.equal(total(vmHost, 'coda_desktop_resets_total', { host: h.hostId, kind: 'fresh', outcome: 'ok' }) - total(before.vmHost, 'coda_desktop_resets_total', { kind: 'fresh', outcome: 'ok' }), 1);
    assert.equal(total(vmHost, 'coda_desktop_reset_seconds_count', { kind: 'fresh' }) - total(before.vmHost, 'coda_desktop_reset_seconds_count', { kind: 'fresh' }), 1);
    assert.ok(total(vmHost, 'coda_desktop_reset_seconds_sum') > total(before.vmHost, 'coda_desktop_reset_seconds_sum'));
    assert.equal(total(vmHost, 'coda_desktops', { host: h.hostId }), 1);
    assert.equal(total(vmHost, 'coda_desktops_leased', { host: h.hostId }), 0, 'released once the rollout ended');
    assert.ok(total(vmHost, 'temporal_activity_execution_latency_seconds_count') > total(before.vmHost, 'temporal_activity_execution_latency_seconds_count'), "the SDK's count of the host's activities moved");

    let orchestrator = await scrape(urls.orchestrator);
    const calls = (s: Scrape, role: string) => total(s, 'coda_model_latency_seconds_count', { role, outcome: 'ok' });
    assert.equal(calls(orchestrator, 'planner') - calls(before.orchestrator, 'planner'), manifest.steps.length, 'one planner call per step');
    assert.equal(calls(orchestrator, 'executor') - calls(before.orchestrator, 'executor'), manifest.steps.filter((s) => s.executor !== undefined).length);
    assert.equal(total(orchestrator, 'coda_rollouts_total', { stop: manifest.stop.reason }) - total(before.orchestrator, 'coda_rollouts_total', { stop: manifest.stop.reason }), 1);
    assert.equal(total(orchestrator, 'coda_rollout_resumes_total'), total(before.orchestrator, 'coda_rollout_resumes_total'), 'nothing was resumed');
    assert.ok(total(orchestrator, 'temporal_workflow_completed_total') > total(before.orchestrator, 'temporal_workflow_completed_total'), "the SDK's count of completed workflows moved");

    const outcome = await h.execute<{ verdictKey: string }>('judgeTrajectory', `judge-metrics-${Date.now().toString(36)}`, { manifestKey: rollout.manifestKey });
    const verdict = verdictFileSchema.parse(await h.stack.store.getJson(outcome.verdictKey));
    orchestrator = await scrape(urls.orchestrator);
    assert.equal(total(orchestrator, 'coda_judge_calls_total') - total(before.orchestrator, 'coda_judge_calls_total'), verdict.votes.length, 'one call per vote');
    assert.equal(total(orchestrator, 'coda_judge_pixels_total') - total(before.orchestrator, 'coda_judge_pixels_total'), verdict.cost.pixels, 'the pixels the verdict says were sent');
    for (const resolution of ['low', 'high'] as const) {
      assert.equal(total(orchestrator, 'coda_judge_calls_total', { resolution }), verdict.votes.filter((v) => v.resolution === resolution).length + total(before.orchestrator, 'coda_judge_calls_total', { resolution }));
    }
    assert.equal(calls(orchestrator, 'judge') - calls(before.orchestrator, 'judge'), verdict.votes.length);
  });
});
