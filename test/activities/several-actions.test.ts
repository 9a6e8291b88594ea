import { readOnlyImages } from '../../activities/models/images';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { loadConfig } from '../../config/load';
import { formatPlannerOutput } from '../../core/planner-parser';
import { screenshotKey } from '../../core/keys';
import { parseTrajectoryManifest } from '../../apps/manifests';
import { createModelActivities } from '../../activities/models/activities';
import { decisionStore } from '../../activities/models/decision';
import { ModelGateway } from '../../activities/models/gateway';
import { createTrajectoryActivities } from '../../activities/storage/trajectory';
import { s3TaskReader, stageTasks, TaskLibrary } from '../../activities/tasks/library';
import { startScriptedServer, type ScriptedServer } from '../../doubles/openai-server';
import type { Decision } from '../../core/rollout-types';
import { REPO_CONFIG, testStack } from '../stack';

const SCREENSHOT = readFileSync(path.join(path.dirname(REPO_CONFIG), 'bench', 'fixtures', 'kalgebra-1920x1080.png'));

describe('an executor reply with several actions (decision in the real MinIO, manifest)', function () {
  this.timeout(60_000);
  let server: ScriptedServer;
  let executorReply = '';
  let plannerModel = '';

  before(async () => {
    // TEST DOUBLE of the planner and UI-TARS endpoints: the executor writes what the test sets.
    server = await startScriptedServer((request) => ({
      texts: [request.model === plannerModel ? formatPlannerOutput('Confirm the dialog.', { kind: 'instruction', text: 'click OK' }) : executorReply],
    }));
  });
  after(async () => server.close());

  it('is a malformed step naming its calls: no action performed, the raw reply kept in the decision and the step record', async () => {
    const { store, config, env } = await testStack();
    plannerModel = config.models.planner.model;
    const prefix = `test/several/${Date.now()}`;
    const gatewayEnv = { ...env, CODA_PLANNER_URL: server.url, CODA_EXECUTOR_URL: server.url, CODA_PLANNER_API_KEY: 'k', CODA_EXECUTOR_API_KEY: 'k' };
    const [task] = await stageTasks(store, prefix, new TaskLibrary().load('KAlgebra', ['A-01']));
    const ref = { run: 'r', software: 'KAlgebra', task: 'A-01', attempt: 0 };
    const shot = screenshotKey(prefix, ref, 0);
    await store.put(shot, SCREENSHOT, 'image/png');
    const deps = { decisions: decisionStore(store), prefix, tasks: s3TaskReader(store) };
    const models = createModelActivities({ ...deps, gateway: new ModelGateway({ models: loadConfig(REPO_CONFIG, gatewayEnv).models, images: readOnlyImages((key) => store.get(key)), env: gatewayEnv }) });
    const decide = (step: number, reply: string): Promise<Decision> => {
      executorReply = reply;
      const input = { ref, step, taskKey: task!.key, screenshotKey: shot, screen: { width: 1920, height: 1080 }, history: [] };
      return new MockActivityEnvironment().run(models.decideStep, input);
    };

    const reply = "Thought: OK it is.\nAction: click(start_box='(644,406)')\n\nhotkey(key='enter')\n\nfinished()";
    const error = 'executor output malformed: several actions in one reply (click, hotkey, finished): a step performs one action, so none is taken';
    const several = await decide(1, reply);
    assert.equal(several.action, null);
    assert.equal(several.error, error);
    const stored = await decisionStore(store).read(several.decisionKey); // a fresh cache: read back from S3
    assert.deepEqual([stored.action, stored.error, stored.executor?.raw, 'droppedActions' in stored], [null, error, reply, false]);

    const trajectories = createTrajectoryActivities({ store, prefix, tasks: deps.tasks, decisions: decisionStore(store) });
    const now = new Date().toISOString();
    const key = await trajectories.writeManifest({
      ref,
      stage: 'test',
      taskKey: task!.key,
      maxSteps: 5,
      steps: [{ ...several, index: 1, screenshotKey: shot, performed: false, startedAt: now }],
      desktop: { host: 'h', id: 'd' },
      initialScreenshotKey: shot,
      finalScreenshotKey: shot,
      stop: { reason: 'DONE' },
      resumes: 0,
      startedAt: now,
      endedAt: now,
    });
    const manifest = parseTrajectoryManifest(await store.getJson(key), key);
    const step = manifest.steps[0];
    assert.deepEqual([step?.action, step?.error, step?.executor?.raw, 'droppedActions' in (step ?? {})], [null, error, reply, false]);
    // A manifest written when the first of several calls was performed, the others kept unperformed, still reads.
    const older = { ...manifest, steps: [{ ...step, action: { type: 'click', x: 640, y: 400 }, error: undefined, droppedActions: ["hotkey(key='enter')"] }] };
    assert.deepEqual(parseTrajectoryManifest(JSON.parse(JSON.stringify(older)), 'older').steps[0]?.droppedActions, ["hotkey(key='enter')"]);
  });
});
