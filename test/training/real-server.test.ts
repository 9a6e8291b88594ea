import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import * as path from 'node:path';
import { s3Gateway, ModelRequestError, ModelUnavailableError, ModelGateway } from '../../activities/models/gateway';
import { ImagePreparer, readOnlyImages } from '../../activities/models/images';
import type { TrainResult } from '../../activities/training/contract';
import { registerPlanner } from '../../activities/training/serving';
import type { LoadedConfig } from '../../config/load';
import { preparedBoxes } from '../../config/schema';
import type { Size } from '../../core/images';
import { samplingSeed } from '../../core/sampling-seed';
import { smartResize } from '../../core/smart-resize';
import { checkpointManifestSchema, plannerMessagesAt } from '../../core/training';
import { SCREEN } from '../../doubles/scripted-models/recorded-trajectory';
import { type GpuHarness } from '../support/gpu-harness';
import { LLAMAFACTORY, PYTHON } from '../../infra/small-planner/runs';
import { LAUNCHER, PLANNER_KEY_ENV, startTinyPlannerHarness, type TinyPlannerHarness } from '../support/tiny-qwen';
import { SMALL_PLANNER_BOX } from '../../infra/small-planner/rows';
import { runSeed } from '../support/harness';
import { freePort } from '../stack';

const BASE = 'tiny-qwen2.5-vl';

/** Whether a process has exited (a zombie waiting for its reaper counts as exited). */
const gone = (pid: number): boolean => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');

/** The image tokens a Qwen2.5-VL processor (the tiny model's: 28 x 28 pixels a token, at most 1280) makes of an image of `size`. */
const imageTokens = (size: Size): number => {
  const seen = smartResize(size.width, size.height, { maxPixels: 28 * 28 * 1280 });
  return (seen.width / 28) * (seen.height / 28);
};

/**
 * The real LLaMA-Factory 0.9.5 API server (`llamafactory-cli api`, its Hugging Face backend, CPU)
 * serves the tiny Qwen2.5-VL made here (infra/trainers/tiny_qwen2_5_vl.py) through the project's
 * restart command (infra/serving/llamafactory_api.py) and the production code: the planner's
 * prompt of a recorded trajectory, its screenshots from MinIO through the gateway; then a LoRA
 * adapter the real LLaMA-Factory trained on the pipeline's SFT dataset, registered by
 * registerPlanner's restart path from its checkpoint manifest in MinIO. The weights are random:
 * what a reply says is not checked, how the server answered is.
 * CODA_SKIP_REAL_TRAINERS=1 leaves this file out of the run (.mocharc.js).
 */
describe('the real LLaMA-Factory API server on CPU: the small planner and a trained adapter served through the production serving code (real MinIO)', function () {
  this.timeout(600_000);
  let tiny: TinyPlannerHarness | undefined;
  let g: GpuHarness;
  let scratch: string;
  let model: string;
  let stateDir: string;
  let port: number;
  /** The harness's config with the planner served by the real server, and checkpoints registered by the restart command. */
  let config: LoadedConfig;
  const pid = (): number => Number(readFileSync(path.join(stateDir, 'server.pid'), 'utf8'));
  /** The launcher run with the harness's environment, which holds the server's key under PLANNER_KEY_ENV. */
  const launch = (...args: string[]): string => execFileSync(PYTHON, [LAUNCHER, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: g.h.env });
  /** Starts the base planner's server seeded by `seed`, fetching images from the harness's MinIO too. */
  const start = (seed: number): string =>
    launch('start', '--model', model, '--name', BASE, '--port', String(port), '--state-dir', stateDir, '--seed', String(seed), '--api-key-env', PLANNER_KEY_ENV, '--image-endpoint', g.h.config.storage.presignEndpoint ?? g.h.config.storage.endpoint);
  /** The base planner served, unless a server of this state directory runs already. */
  const ensureServer = (): void => {
    if (!existsSync(path.join(stateDir, 'server.pid'))) start(runSeed());
  };
  /** A gateway to the real server whose planner has `change` applied to its endpoint. */
  const gateway = (change: Partial<LoadedConfig['models']['planner']> = {}): ModelGateway =>
    s3Gateway({ ...config, models: { ...config.models, planner: { ...config.models.planner, ...change } } }, g.h.stack.store, { env: g.h.env });
  /** Trains `name` on the harness's SFT rows with the real LLaMA-Factory through a GPU worker, its SFT config changed by `change`; the result and the checkpoint's manifest. */
  const trainReal = async (name: string, change: Record<string, unknown> = {}) => {
    const real = structuredClone(g.h.config);
    real.training.sft.program = LLAMAFACTORY;
    real.training.sft.config = { ...real.training.sft.config, ...change };
    await g.startGpuWorker(real);
    const trained = (await (await g.startTraining({ job: name, kind: 'sft', datasetKey: g.sftDataset, checkpoint: name, base: { model: BASE, path: model } })).result()) as TrainResult;
    await g.stopGpuWorkers();
    return { trained, manifest: checkpointManifestSchema.parse(await g.h.stack.store.getJson(trained.checkpointKey)) };
  };
  const authorization = (): string => `Bearer ${g.h.env[PLANNER_KEY_ENV]}`;
  const listed = async (): Promise<string[]> => ((await (await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: authorization() } })).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);

  before(async () => {
    assert.ok(existsSync(LLAMAFACTORY), `${LLAMAFACTORY} is missing: run bash infra/install-trainers.sh`);
    tiny = await startTinyPlannerHarness({
      name: 'realserve',
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 760),
      edit: (doc) => {
        const training = doc.training as Record<string, any>;
        // A lab training on CPU: no GPU, no bf16, a small adapter; two steps are enough to write one.
        training.sft.config = { ...training.sft.config, use_cpu: true, bf16: false, lora_rank: 8, lora_alpha: 16, num_train_epochs: 1, max_steps: 2, save_steps: 1 };
        training.sft.env = { HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false' };
      },
    });
    ({ g, scratch, model } = tiny);
    port = await freePort();
    stateDir = path.join(scratch, 'planner-server');
    config = structuredClone(g.h.config);
    config.models.planner = { ...config.models.planner, baseUrl: `http://127.0.0.1:${port}/v1`, model: BASE };
    config.training.serving = {
      kind: 'restart',
      dir: path.join(scratch, 'served'),
      // One command for both kinds of checkpoint: --checkpoint merges an adapter on --model, or serves full weights instead of it.
      command: [PYTHON, LAUNCHER, 'start', '--model', model, '--checkpoint', '{path}', '--name', '{name}', '--port', String(port), '--state-dir', stateDir, '--seed', String(runSeed()), '--api-key-env', PLANNER_KEY_ENV],
      healthUrl: `http://127.0.0.1:${port}/health`,
      timeoutSeconds: 300,
    };
  });
  after(async () => {
    if (stateDir !== undefined && existsSync(path.join(stateDir, 'server.pid'))) launch('stop', '--state-dir', stateDir);
    await tiny?.stop();
  });

  it("answers the planner's prompt of a recorded step through the gateway: n samples, both screenshots read at the size sent, from data: URLs or presigned MinIO URLs; each request seeded by itself", async () => {
    start(runSeed());
    assert.deepEqual(await listed(), [BASE]);
    const t = g.trajectories[0]!;
    const messages = plannerMessagesAt(t.manifest, 2);
    const options = { n: 3, temperature: 1, maxTokens: 8, sourceSize: SCREEN, seed: samplingSeed({ software: t.manifest.software, task: t.manifest.taskId, attempt: t.manifest.attempt }, 2) };
    const served = await gateway().complete('planner', messages, options);
    assert.equal(served.texts.length, 3);
    assert.ok(new Set(served.texts).size > 1, `sampled, not one text thrice: ${JSON.stringify(served.texts)}`);
    assert.deepEqual({ count: served.images.count, size: served.imageSize }, { count: 2, size: SMALL_PLANNER_BOX }, 'the previous and the current screen, each its variant for the box');
    // The same prompt with the screenshots in a smaller box: only the image tokens differ.
    const small = { width: 160, height: 90 };
    const smaller = await gateway({ image: small }).complete('planner', messages, options);
    assert.equal(served.usage.promptTokens - smaller.usage.promptTokens, 2 * (imageTokens(SMALL_PLANNER_BOX) - imageTokens(small)), `the server counted both images at the size sent (${served.usage.promptTokens} and ${smaller.usage.promptTokens} prompt tokens)`);
    // Presigned URLs of the S3 endpoint given at start (MinIO on loopback) are fetched by the launcher's guard, and read as the data: URLs were.
    const byUrl = await gateway({ imageTransport: 'url' }).complete('planner', messages, options);
    assert.deepEqual({ count: byUrl.images.count, tokens: byUrl.usage.promptTokens }, { count: 2, tokens: served.usage.promptTokens });
    // Each request draws by the run seed and its own seed: the same request, after others, draws the same samples.
    await gateway().complete('planner', plannerMessagesAt(t.manifest, 1), { ...options, seed: options.seed + 7 });
    const again = await gateway().complete('planner', messages, options);
    assert.deepEqual(again.texts, served.texts, 'the same request, sent again after another, draws the same samples');
    assert.notDeepEqual((await gateway().complete('planner', messages, { ...options, seed: options.seed + 1 })).texts, served.texts, 'another seed draws otherwise');
    start(runSeed() + 1);
    assert.notDeepEqual((await gateway().complete('planner', messages, options)).texts, served.texts, 'restarted with another run seed, the same request draws otherwise');
  });

  it('refuses bad requests as recorded; the model-server double answers what the gateway reads the same way', async () => {
    ensureServer();
    // Each on a connection of its own: after the 500 of an unhandled error uvicorn closes the connection, which a pooled socket may meet next.
    const post = (body: unknown): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: authorization() } }, (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        });
        request.once('error', reject);
        request.end(JSON.stringify(body));
      });
    const user = (content: unknown) => ({ role: 'user', content });
    const notPng = `data:image/png;base64,${Buffer.from('not an image').toString('base64')}`;
    assert.deepEqual(await post({ model: BASE, messages: [] }), { status: 400, body: '{"detail":"Invalid length"}' });
    assert.deepEqual(await post({ model: BASE, messages: [user('a'), user('b')] }), { status: 400, body: '{"detail":"Only supports u/a/u/a/u..."}' });
    assert.deepEqual(await post({ model: BASE, messages: [user([{ type: 'image_url', image_url: { url: notPng } }])] }), { status: 500, body: 'Internal Server Error' });
    const unknownPart = await post({ model: BASE, messages: [user([{ type: 'video', video: 'x' }])] });
    assert.equal(unknownPart.status, 422, unknownPart.body);
    const greedyPair = await post({ model: BASE, messages: [user('hi')], n: 2, temperature: 0, max_tokens: 6 });
    const [first, second] = (JSON.parse(greedyPair.body) as { choices: Array<{ message: { content: string } }> }).choices.map((c) => c.message.content);
    assert.notEqual(first, second, 'n > 1 samples (at temperature 1) even when temperature 0 is asked');
    // LLaMA-Factory would answer it with the model it serves; the launcher's server answers as vLLM does.
    assert.deepEqual(await post({ model: 'not-served', messages: [user('hi')], max_tokens: 2 }), {
      status: 404,
      body: '{"object": "error", "message": "The model `not-served` does not exist.", "type": "NotFoundError", "param": null, "code": 404}',
    });

    // What the pipeline sees, from the real server and from the double standing for it: the same kinds of error.
    const screenshot = readOnlyImages(async () => Buffer.from('not an image'));
    const outcome = async (baseUrl: string, model: string, messages: Parameters<ModelGateway['complete']>[1]): Promise<string> => {
      const planner = { ...config.models.planner, baseUrl, model, maxRetries: 0 };
      // A screen that fits the box goes as it is stored, undecoded: the prepared boxes tell the preparer so.
      const client = new ModelGateway({ models: { ...config.models, planner }, images: screenshot, env: g.h.env, preparer: new ImagePreparer(preparedBoxes(config)) });
      return client.complete('planner', messages, { maxTokens: 2, sourceSize: { width: 10, height: 10 } }).then(
        (c) => `answered ${c.texts.length}`,
        (err: Error) => `${err instanceof ModelRequestError ? 'refused' : err instanceof ModelUnavailableError ? 'unavailable' : 'failed'} ${(err as ModelRequestError).status}`,
      );
    };
    // The 500 last: the gateway's client pools connections, and no retry here would cover meeting the one uvicorn closed after it.
    const cases: Array<[string, Parameters<ModelGateway['complete']>[1], string]> = [
      ['no messages', [], 'refused 400'],
      ['a planner prompt', [{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'text', text: 'Task: x' }] }], 'answered 1'],
      ['an undecodable screenshot', [{ role: 'user', content: [{ type: 'image_key', key: 'k' }] }], 'unavailable 500'],
    ];
    const prompt = cases[1]![1];
    assert.equal(await outcome(config.models.planner.baseUrl, 'not-served', prompt), 'refused 404', 'the real server, a model it does not serve');
    assert.equal(await outcome(g.h.models.url, 'not-served', prompt), 'refused 404', 'the double, a model it does not serve');
    for (const [what, messages, expected] of cases) {
      assert.equal(await outcome(config.models.planner.baseUrl, BASE, messages), expected, `the real server, ${what}`);
      assert.equal(await outcome(g.h.models.url, g.h.config.models.planner.model, messages), expected, `the double, ${what}`);
    }
  });

  /** The restart command with `--checkpoint {path}` written as an older form: `--adapter {path}` on the base, or `--model {path}`. */
  const withForm = (form: 'adapter' | 'model'): LoadedConfig => {
    const variant = structuredClone(config);
    const { command } = variant.training.serving as { command: string[] };
    command.splice(command.indexOf('--checkpoint'), 2, ...(form === 'adapter' ? ['--adapter', '{path}'] : []));
    if (form === 'model') command.splice(command.indexOf('--model'), 2, '--model', '{path}');
    return variant;
  };

  it("registers a LoRA adapter the real LLaMA-Factory trained through registerPlanner's restart path (--checkpoint {path}): the old server gone, the new name served and answering, a bad checkpoint refused by name", async () => {
    ensureServer();
    const previous = pid();
    const name = `planner-realserve-${Date.now()}`;
    const { trained, manifest } = await trainReal(name);
    const { store } = g.h.stack;
    assert.deepEqual({ lora: manifest.lora, double: manifest.double, steps: manifest.steps }, { lora: true, double: false, steps: 2 });

    assert.deepEqual(await registerPlanner(config, store, trained.checkpointKey, g.h.env), { model: name });
    assert.ok(gone(previous), `the previous server (pid ${previous}) is gone`);
    const serving = pid();
    assert.deepEqual(await listed(), [name]);
    const dir = path.join(config.training.serving.dir, name);
    assert.ok(readFileSync(path.join(stateDir, 'server.log'), 'utf8').includes(`Loaded adapter(s): ${dir}`), 'LLaMA-Factory merged the adapter registerPlanner put in the serving folder');
    const t = g.trajectories[1]!;
    const answer = await gateway().complete('planner', plannerMessagesAt(t.manifest, 1), { model: name, maxTokens: 8, sourceSize: SCREEN });
    assert.deepEqual({ samples: answer.texts.length, model: answer.model }, { samples: 1, model: name });
    assert.deepEqual(await registerPlanner(config, store, trained.checkpointKey, g.h.env), { model: name }, 'registering again is a no-op');
    assert.equal(pid(), serving, 'no restart for a name already served');

    // A checkpoint whose files hold no adapter_config.json: the command refuses before stopping anything.
    const broken = `${name}-broken`;
    await store.put(`${manifest.filesPrefix}-broken/adapter_model.safetensors`, await store.get(`${manifest.filesPrefix}/adapter_model.safetensors`));
    const brokenKey = trained.checkpointKey.replace(name, broken);
    await store.putJson(brokenKey, { ...manifest, name: broken, filesPrefix: `${manifest.filesPrefix}-broken` });
    const brokenDir = path.join(config.training.serving.dir, broken);
    await assert.rejects(registerPlanner(config, store, brokenKey, g.h.env), (err: Error) => err.message.includes(`the checkpoint folder ${brokenDir} holds neither adapter_config.json (an adapter) nor config.json (full weights): nothing was restarted`));
    await assert.rejects(registerPlanner(withForm('adapter'), store, brokenKey, g.h.env), (err: Error) => err.message.includes(`the adapter folder ${brokenDir} holds no adapter_config.json: nothing was restarted`));
    assert.ok(!gone(serving), 'the serving server still runs');
    assert.deepEqual(await listed(), [name]);

    launch('stop', '--state-dir', stateDir);
    assert.ok(gone(serving), 'stopped: nothing left running');
    assert.equal(existsSync(path.join(stateDir, 'server.pid')), false);
  });

  it("registers full weights the real LLaMA-Factory trained (finetuning_type full, lora: false) through the same restart command, served as the model with no adapter; a folder without config.json, or an adapter given as --model {path}, is refused by name", async () => {
    ensureServer();
    const name = `planner-realfull-${Date.now()}`;
    const { trained, manifest } = await trainReal(name, { finetuning_type: 'full' });
    const { store } = g.h.stack;
    assert.deepEqual({ lora: manifest.lora, double: manifest.double }, { lora: false, double: false });

    // The same command as for the adapter: --checkpoint finds config.json and serves the checkpoint as the model.
    const previous = pid();
    assert.deepEqual(await registerPlanner(config, store, trained.checkpointKey, g.h.env), { model: name });
    assert.ok(gone(previous), `the previous server (pid ${previous}) is gone`);
    const serving = pid();
    assert.deepEqual(await listed(), [name]);
    const dir = path.join(config.training.serving.dir, name);
    const log = readFileSync(path.join(stateDir, 'server.log'), 'utf8');
    assert.ok(log.slice(log.lastIndexOf('==== ')).includes(`--model_name_or_path ${dir} --template`), 'the server was started on the checkpoint registerPlanner put in the serving folder');
    assert.ok(!log.slice(log.lastIndexOf('==== ')).includes('--adapter_name_or_path'), 'with no adapter');
    const t = g.trajectories[0]!;
    const answer = await gateway().complete('planner', plannerMessagesAt(t.manifest, 1), { model: name, maxTokens: 8, sourceSize: SCREEN });
    assert.deepEqual({ samples: answer.texts.length, model: answer.model }, { samples: 1, model: name });

    // Full weights without config.json, and a LoRA checkpoint given to the full-weights command: refused before anything stops.
    const weights = (await store.list(`${manifest.filesPrefix}/`)).filter((k) => !k.endsWith('/config.json'));
    const broken = `${name}-broken`;
    for (const key of weights) await store.put(key.replace(manifest.filesPrefix, `${manifest.filesPrefix}-broken`), await store.get(key));
    const brokenKey = trained.checkpointKey.replace(name, broken);
    await store.putJson(brokenKey, { ...manifest, name: broken, filesPrefix: `${manifest.filesPrefix}-broken` });
    const brokenDir = path.join(config.training.serving.dir, broken);
    await assert.rejects(registerPlanner(config, store, brokenKey, g.h.env), (err: Error) => err.message.includes(`the checkpoint folder ${brokenDir} holds neither adapter_config.json (an adapter) nor config.json (full weights): nothing was restarted`));
    await assert.rejects(registerPlanner(withForm('model'), store, brokenKey, g.h.env), (err: Error) => err.message.includes(`the model folder ${brokenDir} holds no config.json: nothing was restarted`));
    const adapter = `${name}-adapter`;
    await store.put(`${manifest.filesPrefix}-adapter/adapter_config.json`, Buffer.from('{}'));
    const adapterKey = trained.checkpointKey.replace(name, adapter);
    await store.putJson(adapterKey, { ...manifest, name: adapter, lora: true, filesPrefix: `${manifest.filesPrefix}-adapter` });
    await assert.rejects(registerPlanner(withForm('model'), store, adapterKey, g.h.env), (err: Error) => err.message.includes(`the model folder ${path.join(config.training.serving.dir, adapter)} holds a LoRA adapter, not full weights`));
    assert.equal(pid(), serving, 'the serving server was left alone');
    assert.deepEqual(await listed(), [name]);
    launch('stop', '--state-dir', stateDir);
    assert.ok(gone(serving), 'stopped: nothing left running');
  });
});
