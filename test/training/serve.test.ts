import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { TrainResult } from '../../activities/training/contract';
import { registerPlanner } from '../../activities/training/serving';
import type { LoadedConfig } from '../../config/load';
import { checkpointManifestSchema } from '../../core/training';
import { startScriptedServer } from '../../doubles/openai-server';
import { startGpuHarness, type GpuHarness } from '../support/gpu-harness';

describe('servePlanner: a trained planner registered with the planner server', function () {
  this.timeout(180_000);
  let g: GpuHarness;
  let checkpointKey: string;
  let name: string;

  /** A copy of the trained checkpoint's manifest under another name (same files); its key. */
  const renamed = async (suffix: string, lora: boolean): Promise<string> => {
    const manifest = checkpointManifestSchema.parse(await g.h.stack.store.getJson(checkpointKey));
    const key = checkpointKey.replace(name, `${name}-${suffix}`);
    await g.h.stack.store.putJson(key, { ...manifest, name: `${name}-${suffix}`, lora });
    return key;
  };

  /** The harness's config with `change` applied to it. */
  const configWith = (change: (c: any) => void): LoadedConfig => {
    const copy = structuredClone(g.h.config) as any;
    change(copy);
    return copy as LoadedConfig;
  };

  before(async () => {
    g = await startGpuHarness({ name: 'serve', runtimeLora: true });
    await g.startGpuWorker();
    const job = `serve-${Date.now()}`;
    name = `planner-${job}`;
    const result = (await (await g.startTraining({ job, kind: 'sft', datasetKey: g.sftDataset, checkpoint: name, base: g.h.config.training.basePlanner })).result()) as TrainResult;
    checkpointKey = result.checkpointKey;
  });
  after(async () => g?.stop());

  it('loads the LoRA adapter at run time; the server then answers the new name as it answers the planner', async () => {
    const served = await g.h.stack.client.workflow.execute('servePlannerOnGpu', {
      taskQueue: 'serve-training-tests',
      workflowId: `serve-${name}`,
      args: [{ checkpointKey, gpuQueue: g.h.config.taskQueues.gpu }],
    });
    assert.deepEqual(served, { model: name });
    const dir = path.join(g.h.config.training.serving.dir, name);
    assert.ok(existsSync(path.join(dir, 'adapter_config.json')), 'the adapter was put where the server reads it');
    const models = (await (await fetch(`${g.h.models.url}/models`)).json()) as { data: Array<{ id: string; root?: string; parent?: string }> };
    assert.deepEqual(models.data.find((m) => m.id === name), { id: name, object: 'model', owned_by: 'scripted-double', root: dir, parent: g.h.config.models.planner.model });

    const manifest = checkpointManifestSchema.parse(await g.h.stack.store.getJson(checkpointKey));
    const instruction = JSON.parse(readFileSync(path.join(g.h.config.training.workDir, 'datasets', manifest.dataset.split('/').at(-2)!, 'sft.json'), 'utf8'))[0].messages;
    const ask = async (model: string) => {
      const response = await fetch(`${g.h.models.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: instruction.slice(0, 2), temperature: 0 }),
      });
      return (await response.json()) as { model: string; choices: Array<{ message: { content: string } }> };
    };
    const [adapter, base] = [await ask(name), await ask(g.h.config.models.planner.model)];
    assert.equal(adapter.model, name);
    assert.equal(adapter.choices[0]!.message.content, base.choices[0]!.message.content, 'the double has no weights for an adapter to change');
    assert.match(adapter.choices[0]!.message.content, /^Thought: .*\nAction: /s);

    assert.deepEqual(await registerPlanner(g.h.config, g.h.stack.store, checkpointKey, g.h.env), { model: name }, 'registering again is a no-op');
  });

  it("refuses clearly: a server without runtime LoRA loading, an adapter the server cannot see, full weights as an adapter", async () => {
    const plain = await startScriptedServer(() => ({ texts: ['x'] }), { models: [g.h.config.models.planner.model] });
    try {
      const config = configWith((c) => (c.models.planner.baseUrl = plain.url));
      await assert.rejects(registerPlanner(config, g.h.stack.store, checkpointKey, g.h.env), (err: ApplicationFailure) => err.nonRetryable === true && /has no runtime LoRA loading: start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/.test(err.message));
    } finally {
      await plain.close();
    }
    // The same name from another folder: vLLM refuses a name already loaded.
    const elsewhere = configWith((c) => (c.training.serving.dir = path.join(g.h.config.dataDir, 'served-elsewhere')));
    await assert.rejects(registerPlanner(elsewhere, g.h.stack.store, checkpointKey, g.h.env), (err: ApplicationFailure) =>
      err.nonRetryable === true && err.message.startsWith(`${g.h.models.url} refused adapter ${name} at ${path.join(elsewhere.training.serving.dir, name)} (400): `) && /has already been loaded/.test(err.message),
    );
    // A folder the server does not find an adapter in (on a real deployment: a path it does not see).
    const unseen = await renamed('unseen', true);
    const copy = path.join(g.h.config.training.serving.dir, `${name}-unseen`);
    await registerPlanner(configWith((c) => (c.models.planner.baseUrl = 'http://127.0.0.1:9/v1')), g.h.stack.store, unseen, g.h.env).catch(() => undefined);
    rmSync(path.join(copy, 'adapter_config.json'));
    await assert.rejects(registerPlanner(g.h.config, g.h.stack.store, unseen, g.h.env), (err: ApplicationFailure) =>
      err.nonRetryable === true && err.message.startsWith(`${g.h.models.url} refused adapter ${name}-unseen at ${copy} (404): `) && /Loading lora .* failed: No adapter found for/.test(err.message),
    );
    await assert.rejects(registerPlanner(g.h.config, g.h.stack.store, await renamed('full', false), g.h.env), /full weights cannot be loaded as a LoRA adapter: set training\.serving\.kind to restart/);
  });

  it('full weights: runs the restart command with the checkpoint, then waits until the health URL is up and the new name is served', async () => {
    let servedNames: string[] = [];
    let healthy = false;
    const server = createServer((req, res) => {
      if (req.url === '/health') {
        res.writeHead(healthy ? 200 : 503).end();
      } else if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: servedNames.map((id) => ({ id })) }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const signal = path.join(g.h.config.dataDir, 'restarted.txt');
    // The "restart": the command records what it was given; the server comes back serving that name a little later.
    const watcher = setInterval(() => {
      if (existsSync(signal)) {
        const [, served] = readFileSync(signal, 'utf8').split('\n');
        setTimeout(() => {
          healthy = true;
          servedNames = [served!];
        }, 1_500);
        clearInterval(watcher);
      }
    }, 100);
    try {
      const fullKey = await renamed('restart', false);
      const config = configWith((c) => {
        c.models.planner.baseUrl = `http://127.0.0.1:${port}/v1`;
        c.training.serving = {
          kind: 'restart',
          dir: g.h.config.training.serving.dir,
          command: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(signal)}, process.argv[1] + '\\n' + process.argv[2])`, '{path}', '{name}'],
          healthUrl: `http://127.0.0.1:${port}/health`,
          timeoutSeconds: 30,
        };
      });
      assert.deepEqual(await registerPlanner(config, g.h.stack.store, fullKey, g.h.env), { model: `${name}-restart` });
      const [given] = readFileSync(signal, 'utf8').split('\n');
      assert.equal(given, path.join(g.h.config.training.serving.dir, `${name}-restart`), 'the command got the checkpoint folder');
      assert.ok(existsSync(path.join(given!, 'adapter_model.safetensors')));
    } finally {
      clearInterval(watcher);
      server.close();
    }
  });
});
