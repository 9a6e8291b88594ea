import assert from 'node:assert/strict';
import { startUnitEnv } from '../workflow-env';

describe('the workflow bundle', () => {
  it('stays light: workflow code loads no zod (every workflow start would evaluate it again)', async () => {
    const { bundle: workflowBundle } = await startUnitEnv();
    assert.ok(!workflowBundle.code.includes('node_modules/zod'), 'a workflow imports a module that builds zod schemas');
    assert.ok(workflowBundle.code.includes('function rollout('), 'the bundle holds the rollout workflow');
  });
});
