import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { REPO_CONFIG } from '../../../infra/ephemeral';
import { startUnitEnv } from '../workflow-env';

/**
 * Workflows in flight when a new release of the orchestrator is deployed replay their history on
 * the new code: a command it issues in another order than the history recorded fails the workflow
 * task (nondeterminism) and the run stalls. test/fixtures/histories holds specialization runs
 * recorded on earlier releases (each file says which commit, in its name); every one must replay
 * on today's workflows. A change that cannot replay them needs workflow versioning (patched()).
 * Replaying needs no server: the workflows bundled once for the unit tier (test/unit/workflow-env.ts).
 */
const FIXTURES = path.join(path.dirname(REPO_CONFIG), 'test', 'fixtures', 'histories');

describe('recorded workflow histories replay on the current workflows', function () {
  this.timeout(120_000);

  it('every specialization run recorded before overlapped rounds (maxStaleness 0) replays without nondeterminism', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 2, `the fixtures hold the runs of one specialization: ${files.join(', ')}`);
    const { bundle: workflowBundle } = await startUnitEnv();
    for (const file of files) {
      const history = historyFromJSON(JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')));
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      assert.equal(started?.workflowType?.name, 'specialization', `${file} is a specialization's history`);
      assert.ok((history.events?.length ?? 0) > 20, `${file} holds a whole round`);
      await Worker.runReplayHistory({ workflowBundle, replayName: file }, history, file);
    }
  });

  it('a history whose commands differ from the code is refused (the check can fail): a child workflow recorded under another id', async () => {
    const { bundle: workflowBundle } = await startUnitEnv();
    const file = readdirSync(FIXTURES).find((f) => f.endsWith('.json'))!;
    const json = JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as { events: Array<Record<string, any>> };
    const child = json.events.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes !== undefined);
    assert.ok(child !== undefined, `${file} starts a child workflow`);
    child.startChildWorkflowExecutionInitiatedEventAttributes.workflowId += '-elsewhere';
    await assert.rejects(Worker.runReplayHistory({ workflowBundle, replayName: `${file} (altered)` }, historyFromJSON(json), file), (err: Error) => err.name === 'DeterminismViolationError');
  });
});
