import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import { REPO_CONFIG } from '../../infra/ephemeral';
import { SMALL_PLANNER_BOX } from '../../infra/small-planner/rows';
import { LLAMAFACTORY, SMALL_PLANNER_GRPO } from '../../infra/small-planner/runs';
import { SMALL_GENERALIST_SFT, SMALL_PLANNER_NAME, SMALL_PLANNER_TEMPERATURE, smallPlannerPlaces, withPlannerKey, writeDeployment } from '../../infra/small-planner/demo';
import { devEnv } from '../../infra/stack';
import { workerSpec } from '../../infra/worker-process';

/**
 * The deployment `npm run demo -- --planner small` writes and every process of its stack loads
 * (infra/small-planner/demo.ts): temporal.yaml with the planner served by the real server, the
 * start as the base planner, the real trainers on CPU and one restart command for both kinds of
 * checkpoint, the data directory kept. Nothing is built or started here.
 */
describe('the small planner demo\'s deployment', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-small-deployment-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is temporal.yaml with the planner, the trainers and serving set for the real small planner, and the same data directory', () => {
    const env = { CODA_DATA_DIR: path.join(dir, 'data'), CODA_SMALL_PLANNER_PORT: '8899' };
    const repo = loadConfig(REPO_CONFIG, env);
    const places = smallPlannerPlaces(repo, env);
    const start = path.join(dir, 'cache', 'start');
    const deployed = writeDeployment(repo, places, start, 3, env);
    assert.equal(deployed.file, path.join(dir, 'data', 'small-planner', 'temporal.yaml'));
    assert.equal(deployed.dataDir, repo.dataDir, 'the stack keeps its data directory');
    assert.equal(deployed.training.workDir, path.resolve(path.dirname(REPO_CONFIG), repo.training.workDir));
    const { planner } = deployed.models;
    assert.deepEqual([planner.baseUrl, planner.model, planner.image, planner.imageTransport, planner.maxTokens, planner.temperature], ['http://127.0.0.1:8899/v1', SMALL_PLANNER_NAME, SMALL_PLANNER_BOX, 'data', 128, SMALL_PLANNER_TEMPERATURE]);
    assert.deepEqual(deployed.training.basePlanner, { model: SMALL_PLANNER_NAME, path: start });
    assert.equal(deployed.training.grpo.backend, 'trl');
    const flag = (name: string): string | undefined => deployed.training.grpo.args[deployed.training.grpo.args.indexOf(name) + 1];
    assert.deepEqual([flag('--seed'), flag('--learning-rate'), deployed.training.grpo.args.includes('--cpu')], ['3', String(SMALL_PLANNER_GRPO.learningRate), true]);
    assert.equal(deployed.training.sft.program, LLAMAFACTORY);
    const sft = deployed.training.sft.config;
    assert.deepEqual([sft.finetuning_type, sft.num_train_epochs, sft.learning_rate, sft.seed], ['full', SMALL_GENERALIST_SFT.epochs, SMALL_GENERALIST_SFT.learningRate, 3]);
    const serving = deployed.training.serving;
    assert.equal(serving.kind, 'restart');
    if (serving.kind !== 'restart') return;
    const command = serving.command.join(' ');
    assert.ok(command.includes(`--model ${deployed.training.basePlanner.path} --checkpoint {path} --name {name} --port 8899`), command);
    assert.ok(command.endsWith('--seed 3 --api-key-env CODA_PLANNER_API_KEY'), command);
    assert.equal(serving.healthUrl, 'http://127.0.0.1:8899/health', 'the one route the server answers without its key');
    assert.equal(planner.apiKeyEnv, 'CODA_PLANNER_API_KEY');
    // The executor, judges and task generator stay where temporal.yaml puts them: the scripted doubles.
    assert.equal(deployed.models.executor.baseUrl, repo.models.executor.baseUrl);
  });

  it("gives the server and the workers a key made for each start, in the environment, and restarts workers started with another", () => {
    const env = { CODA_DATA_DIR: path.join(dir, 'data') };
    const repo = loadConfig(REPO_CONFIG, env);
    const deployed = writeDeployment(repo, smallPlannerPlaces(repo, env), path.join(dir, 'cache', 'start'), 3, env);
    const [first, second] = [withPlannerKey(deployed, devEnv(deployed, env)), withPlannerKey(deployed, devEnv(deployed, env))];
    const [a, b] = [first.CODA_PLANNER_API_KEY!, second.CODA_PLANNER_API_KEY!];
    assert.notEqual(a, b, 'one key per start');
    assert.ok(a.length >= 16 && !/\s/.test(a), 'a key the launcher takes (16 characters or more, no whitespace)');
    assert.equal(devEnv(deployed, first).CODA_PLANNER_API_KEY, a, "the stack's environment keeps the start's key, not the dev default");
    const spec = workerSpec(deployed, 'gpu', [], first);
    assert.ok(spec.secretEnv?.includes('CODA_PLANNER_API_KEY'), 'a worker is started again when its key changes');
    assert.ok(!spec.args.some((arg) => arg.includes(a)), 'the key is in no argument');
  });

  it('refuses a port that is not one, naming the variable', () => {
    const repo = loadConfig(REPO_CONFIG, {});
    assert.throws(() => smallPlannerPlaces(repo, { CODA_SMALL_PLANNER_PORT: 'http' }), /CODA_SMALL_PLANNER_PORT: expected a port from 1 to 65535, got "http"/);
  });
});
