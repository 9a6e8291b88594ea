import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { loadConfig } from '../../../config/load';
import { rewardServiceMetrics, trainerMetrics } from '../../../activities/metrics';
import { freePort, REPO_CONFIG } from '../../../infra/ephemeral';
import { startProcessMetrics } from '../../../workers/metrics';
import { scrape, total } from '../../support/prometheus';

/** A process's own metrics endpoint, without the Temporal SDK and without a server (the workers' endpoints during a real rollout: test/metrics/metrics.test.ts). */
describe('metrics: the endpoint of a process without the SDK', () => {
  it("serves a process's own registry without the SDK (the reward service's endpoint), off at port 0, and names the field of a taken port", async () => {
    const port = await freePort();
    const config = loadConfig(REPO_CONFIG, { CODA_REWARD_SERVICE_METRICS_PORT: String(port), CODA_GPU_METRICS_PORT: '0' });
    const endpoint = await startProcessMetrics(config, 'rewardService', { temporal: false });
    try {
      assert.equal(endpoint.url, `http://127.0.0.1:${port}/metrics`);
      const reward = rewardServiceMetrics(endpoint.registry);
      reward.requests.inc({ outcome: 'ok' }, 3);
      reward.cacheHits.inc();
      const trainer = trainerMetrics(endpoint.registry);
      trainer.step.set({ job: 'spec-r1', kind: 'grpo' }, 17);
      trainer.running.inc({ kind: 'grpo' });
      const samples = await scrape(endpoint.url!);
      assert.equal(total(samples, 'coda_reward_requests_total', { outcome: 'ok' }), 3);
      assert.equal(total(samples, 'coda_reward_cache_hits_total'), 1);
      assert.equal(total(samples, 'coda_trainer_step', { job: 'spec-r1' }), 17);
      assert.equal(total(samples, 'coda_trainers_running', { kind: 'grpo' }), 1);
      assert.ok(!samples.some((s) => s.name.startsWith('temporal_')));
      assert.equal((await fetch(`http://127.0.0.1:${port}/elsewhere`)).status, 404);
    } finally {
      await endpoint.close();
    }

    const off = await startProcessMetrics(config, 'gpu', { temporal: false });
    assert.equal(off.url, undefined);

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      await assert.rejects(startProcessMetrics(config, 'rewardService', { temporal: false }), new RegExp(`metrics port ${port} of the rewardService \\(metrics\\.ports\\.rewardService\\) on 127\\.0\\.0\\.1 is in use`));
    } finally {
      taken.close();
    }
  });
});
