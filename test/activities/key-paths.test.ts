import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store';
import { restoreCheckpoint } from '../../activities/training/checkpoints';
import { registerPlanner } from '../../activities/training/serving';
import { prepareDataset } from '../../activities/training/trainer-inputs';
import * as keys from '../../core/keys';
import { CHECKPOINT_SCHEMA, DATASET_SCHEMA } from '../../core/training';
import { testStack, type TestStack } from '../stack';
import { startPlantedS3, type PlantedS3 } from './planted-s3';

const CODA = path.resolve(__dirname, '..', '..', 'cli', 'coda.js');

/**
 * `..` in S3 keys (issue 29, item 4): every place that makes a local path from a key or from a list
 * read from S3 goes through core/keys.ts safeRelative. Each case plants a key or a list whose
 * path would leave its folder, in a bucket that stores such keys as AWS S3 does (planted-s3.ts:
 * MinIO refuses them); the folder is nested in a scratch folder, so that where the path would land
 * is still the test's own (checked empty afterwards).
 */
describe('local paths made from S3 keys stay in their folder', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let s3: PlantedS3;
  let store: ObjectStore;
  let env: NodeJS.ProcessEnv;
  let scratch: string;
  /** A folder three levels below the scratch folder: `../../../x` from it lands in the scratch folder. */
  let folder: string;
  const run = `paths${Date.now()}`;
  const outside = (): string[] => readdirSync(scratch).filter((name) => name !== 'a');
  const now = new Date().toISOString();
  const ref = { run, software: 'KAlgebra', task: 'A-01', attempt: 0 };
  const checkpoint = (name: string, filesPrefix: string) => JSON.stringify({
    schema: CHECKPOINT_SCHEMA, name, kind: 'grpo', createdAt: now, base: { model: 'm', path: 'p' }, dataset: 'd', sources: [], job: 'j', steps: 1, metrics: {}, lora: true, filesPrefix, double: true,
  });

  before(async () => {
    stack = await testStack();
    const prefix = stack.config.storage.prefix;
    const files = `${keys.checkpointPrefix(prefix, `${run}-serve`)}/files`;
    const dataKey = `${keys.datasetPrefix(prefix, `${run}-data`)}/prompts.jsonl`;
    const job = keys.trainingJobPrefix(prefix, `${run}-restore`);
    s3 = await startPlantedS3(stack.config.storage.bucket, {
      [keys.manifestKey(prefix, ref)]: '{}',
      [`${keys.attemptPrefix(prefix, ref)}/../../../x.txt`]: 'planted',
      [`${job}/checkpoints/latest.json`]: JSON.stringify({ step: 5, files: ['../../../x.txt'], uploadedAt: now }),
      [`${job}/checkpoints/5/../../../x.txt`]: 'planted',
      [keys.checkpointManifestKey(prefix, `${run}-serve`)]: checkpoint(`${run}-serve`, files),
      [`${files}/adapter_config.json`]: '{}',
      [`${files}/../../../../x.txt`]: 'planted',
      [keys.checkpointManifestKey(prefix, `${run}-name`)]: checkpoint('../../../../y', files),
      [keys.datasetManifestKey(prefix, `${run}-data`)]: JSON.stringify({
        schema: DATASET_SCHEMA, id: '../../../z', kind: 'grpo', createdAt: now, software: ['KAlgebra'], dataKey, rows: 0, images: [], sources: [], bytes: { data: 0, images: 0 },
      }),
      [dataKey]: '',
    });
    env = { ...stack.env, CODA_S3_ENDPOINT: s3.endpoint };
    store = createObjectStore({ ...stack.config.storage, endpoint: s3.endpoint }, env, { outageToleranceMs: 0 });
  });
  after(async () => {
    await s3?.close();
  });
  beforeEach(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'coda-key-paths-'));
    folder = path.join(scratch, 'a', 'b', 'c');
    mkdirSync(folder, { recursive: true });
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('coda fetch trajectory refuses a planted …/0/../../../x.txt and writes nothing', async () => {
    const result = await promisify(execFile)(process.execPath, [CODA, 'fetch', 'trajectory', `${run}/KAlgebra/A-01/0`, '--out', folder], { env }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    assert.deepEqual(outside(), [], 'a file was written outside --out');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /path "\.\.\/\.\.\/\.\.\/x\.txt" would leave its folder/);
    assert.deepEqual(readdirSync(folder), [], 'nothing fetched once one key is refused');
  });

  it('the GPU worker\'s restore refuses a checkpoint marker listing ../../../x.txt', async () => {
    await assert.rejects(restoreCheckpoint(store, keys.trainingJobPrefix(stack.config.storage.prefix, `${run}-restore`), folder), /path "\.\.\/\.\.\/\.\.\/x\.txt" would leave its folder/);
    assert.deepEqual(outside(), []);
  });

  it('serving refuses a checkpoint whose files include a planted key, or whose name leaves the serving folder', async () => {
    const prefix = stack.config.storage.prefix;
    // served/<name> is four levels below the scratch folder: the planted key's ../../../../x.txt lands in it.
    const config = { ...stack.config, training: { ...stack.config.training, serving: { ...stack.config.training.serving, dir: path.join(folder, 'served') } } };
    await assert.rejects(registerPlanner(config, store, keys.checkpointManifestKey(prefix, `${run}-serve`), env), /path "\.\.\/\.\.\/\.\.\/\.\.\/x\.txt" would leave its folder/);
    await assert.rejects(registerPlanner(config, store, keys.checkpointManifestKey(prefix, `${run}-name`), env), /checkpoint name is invalid:\n {2}- path "\.\.\/\.\.\/\.\.\/\.\.\/y" would leave its folder/);
    assert.deepEqual(outside(), []);
  });

  it('training refuses a dataset whose id leaves the datasets folder', async () => {
    const datasetKey = keys.datasetManifestKey(stack.config.storage.prefix, `${run}-data`);
    await assert.rejects(prepareDataset(store, datasetKey, folder, new AbortController().signal), /id is invalid:\n {2}- path "\.\.\/\.\.\/\.\.\/z" would leave its folder/);
    assert.deepEqual(outside(), []);
  });
});
