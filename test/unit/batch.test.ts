import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { FAILURES } from '../../core/failures';
import type { Decision, TaskEntry } from '../../core/rollout-types';
import type { LeaseRequest } from '../../activities/desktop/pool';
import { rolloutSettings } from '../../workflows/rollout/contract';
import { unitConfig, unitWorkerForTests, type RealActivities } from './workflow-env';

/**
 * The rollout batch on stub activities, its rollouts real child workflows on stub desktops and
 * models (the real-stack runs are test/rollouts/batch.test.ts and crash.test.ts): a batch that
 * drains and continues as new every `rolloutsPerRun` rollouts carries its tasks, cursor and
 * totals, so every attempt runs once and the totals count every outcome once.
 */

const QUEUE = 'unit-batch';
const RUN = 'batch-can';

/** Three tasks: A is solved, B is not, C's planner request is refused (the rollout ends in ERROR). */
const entries: TaskEntry[] = ['A', 'B', 'C'].map((id) => ({ id: `${id}-01`, software: 'KAlgebra', key: `tasks/${id}-01.json`, maxSteps: 5, evaluated: true }));

const seen = { resolved: [] as Array<number | undefined>, staged: 0, leases: [] as string[], manifests: [] as string[], summaries: 0 };

const taskOfLease = (leaseId: string): string => leaseId.split('/')[1] ?? '';

const stubs = (real: RealActivities) => ({
  async resolveBatchInput(raw: unknown, workflowId: string) {
    const input = await real.resolveBatchInput(raw, workflowId);
    seen.resolved.push(input.carried?.cursor);
    return input;
  },
  async stageTaskSet() {
    seen.staged += 1;
    return { entries, unsupported: [] };
  },
  async leaseDesktop(request: LeaseRequest) {
    // The request id is the rollout's workflow id, `rollout-<run>-<software>-<task>-<attempt>`, then `#<resumes>`.
    const rolloutId = request.requestId.slice(0, request.requestId.indexOf('#'));
    seen.leases.push(rolloutId);
    const task = rolloutId.slice(`rollout-${RUN}-KAlgebra-`.length, rolloutId.lastIndexOf('-'));
    return { leaseId: `${rolloutId}/${task}`, hostId: 'host', hostQueue: QUEUE, desktopId: rolloutId, screen: { width: 1280, height: 720 }, software: request.software };
  },
  async resetDesktop(input: { leaseId: string }) {
    return { screenshotKey: `${input.leaseId}/reset`, ms: 1 };
  },
  async decideStep(input: { ref: { task: string }; step: number }): Promise<Decision> {
    if (input.ref.task === 'C-01') throw ApplicationFailure.create({ message: 'refused', type: FAILURES.modelRequest, nonRetryable: true });
    return { thought: 'done', actionText: 'DONE', action: { type: 'done' }, decisionKey: `decisions/${input.ref.task}`, plannerMs: 1 };
  },
  async evaluateDesktop(input: { leaseId: string }) {
    return { passed: taskOfLease(input.leaseId) === 'A-01', checks: [] };
  },
  async releaseDesktop() {
    return true;
  },
  async writeManifest(input: { ref: { task: string; attempt: number } }) {
    const key = `${input.ref.task}/${input.ref.attempt}`;
    seen.manifests.push(key);
    return `manifests/${key}`;
  },
  async summarizeRun(input: { run: string }) {
    seen.summaries += 1;
    return { key: `summaries/${input.run}`, averageAtK: 0, passAtK: 0 };
  },
});

let client: () => Client;

describe('rolloutBatch workflow on stub activities', () => {
  client = unitWorkerForTests(QUEUE, stubs);

  it('continues as new every rolloutsPerRun rollouts carrying its tasks, cursor and totals: every attempt runs once, every outcome counted once', async () => {
    const settings = { ...rolloutSettings(unitConfig), leaseQueue: QUEUE };
    const result = (await client().workflow.execute('rolloutBatch', {
      taskQueue: QUEUE,
      workflowId: `batch-${RUN}`,
      args: [{ run: RUN, stage: 'unit', software: 'KAlgebra', attempts: 2, concurrency: 2, rolloutsPerRun: 2, settings }],
    })) as { total: number; started: number; completed: number; passed: number; failed: number; errors: number; unevaluated: number; appNotRunning: number; summaryKey: string };
    // Three runs of the workflow (6 rollouts, 2 a run); the tasks were staged by the first only.
    assert.deepEqual(seen.resolved, [undefined, 2, 4]);
    assert.equal(seen.staged, 1);
    // Round-robin over the tasks, two a run (each run drains before it continues; within a run the two go in either order), each attempt leased and written once.
    const byRun = [0, 2, 4].map((from) => seen.leases.slice(from, from + 2).map((id) => id.slice(`rollout-${RUN}-KAlgebra-`.length)).sort());
    assert.deepEqual(byRun, [['A-01-0', 'B-01-0'], ['A-01-1', 'C-01-0'], ['B-01-1', 'C-01-1']]);
    assert.equal(seen.leases.length, 6);
    assert.deepEqual([...seen.manifests].sort(), ['A-01/0', 'A-01/1', 'B-01/0', 'B-01/1', 'C-01/0', 'C-01/1']);
    const { total, started, completed, passed, failed, errors, unevaluated, appNotRunning } = result;
    assert.deepEqual({ total, started, completed, passed, failed, errors, unevaluated, appNotRunning }, { total: 6, started: 6, completed: 6, passed: 2, failed: 2, errors: 2, unevaluated: 0, appNotRunning: 0 });
    assert.deepEqual([seen.summaries, result.summaryKey], [1, `summaries/${RUN}`]);
  });
});
