import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { configRelative, secretFromEnv, type Env, type LoadedConfig } from '../../config/load';
import { FAILURES } from '../../core/failures';
import { safeRelative } from '../../core/keys';
import { checkpointManifestSchema, type CheckpointManifest } from '../../core/training';
import { parseOrThrow, ValidationError } from '../../core/validation';
import type { ObjectStore } from '../storage/object-store';
import type { ServeResult } from './contract';

/**
 * Registers a trained planner with the planner's model server, so rollouts can ask for it by its
 * name (the checkpoint's). The checkpoint's files are put in `training.serving.dir` first, a path
 * the server must see as well. Then, checked against vLLM's serving code
 * (vllm/entrypoints/openai/models/serving.py, OpenAIServingModels; the lora api_router):
 * - `lora`: POST {baseUrl}/load_lora_adapter {"lora_name", "lora_path"}, a route vLLM has only with
 *   VLLM_ALLOW_RUNTIME_LORA_UPDATING (else FastAPI's 404 `{"detail": "Not Found"}`). Success is 200
 *   with a PLAIN-TEXT body; a name already loaded is a 400, a path without an adapter a 404
 *   ("Loading lora x failed: No adapter found for ..."). Loaded adapters are listed by GET
 *   {baseUrl}/models with `root` = their path, which makes registering again a no-op.
 * - `restart`, for a server that loads weights only at start (vLLM on full weights; LLaMA-Factory's
 *   API server on CPU, which merges a LoRA adapter at start: infra/serving/llamafactory_api.py): the
 *   configured command ({path}, {name} filled) restarts the server on the checkpoint, unless /models
 *   lists its name already; then `healthUrl` is polled and /models must list the name.
 */

interface ModelCard {
  readonly id: string;
  readonly root?: string;
}

async function readManifest(store: ObjectStore, key: string): Promise<CheckpointManifest> {
  const raw = await store.tryGet(key);
  if (raw === undefined) throw new ValidationError(key, ['no such checkpoint manifest in S3']);
  return parseOrThrow(checkpointManifestSchema, JSON.parse(raw.toString('utf8')), key);
}

/** The checkpoint's files in the serving folder (downloaded once per checkpoint). */
async function servingCopy(store: ObjectStore, manifest: CheckpointManifest, dir: string): Promise<string> {
  const target = path.join(dir, safeRelative(manifest.name, 'checkpoint name'));
  const complete = path.join(target, '.complete');
  if (existsSync(complete) && readFileSync(complete, 'utf8') === manifest.createdAt) return target;
  if ((await store.getFolder(manifest.filesPrefix, target)).length === 0) throw new ValidationError(manifest.filesPrefix, ['the checkpoint has no files in S3']);
  writeFileSync(complete, manifest.createdAt);
  return target;
}

export async function registerPlanner(config: LoadedConfig, store: ObjectStore, checkpointKey: string, env: Env): Promise<ServeResult> {
  const serving = config.training.serving;
  const planner = config.models.planner;
  const manifest = await readManifest(store, checkpointKey);
  const dir = await servingCopy(store, manifest, configRelative(config, serving.dir));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (planner.apiKeyEnv !== undefined) headers.authorization = `Bearer ${secretFromEnv(planner.apiKeyEnv, 'models.planner.apiKeyEnv', env)}`;
  const timeout = (): AbortSignal => AbortSignal.timeout(serving.timeoutSeconds * 1000);
  const served = async (): Promise<ModelCard | undefined> => {
    const response = await fetch(`${planner.baseUrl}/models`, { headers, signal: timeout() });
    if (!response.ok) throw new Error(`${planner.baseUrl}/models answered ${response.status}`);
    return ((await response.json()) as { data?: ModelCard[] }).data?.find((card) => card.id === manifest.name);
  };

  if (serving.kind === 'lora') {
    if (!manifest.lora) throw new ValidationError(checkpointKey, ['full weights cannot be loaded as a LoRA adapter: set training.serving.kind to restart']);
    if ((await served())?.root === dir) return { model: manifest.name };
    const response = await fetch(`${planner.baseUrl}/load_lora_adapter`, { method: 'POST', headers, body: JSON.stringify({ lora_name: manifest.name, lora_path: dir }), signal: timeout() });
    const body = await response.text();
    if (response.status === 404 && body.includes('"Not Found"')) {
      throw ApplicationFailure.nonRetryable(`${planner.baseUrl} has no runtime LoRA loading: start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`, FAILURES.serving);
    }
    if (response.status === 400 || response.status === 404) {
      throw ApplicationFailure.nonRetryable(`${planner.baseUrl} refused adapter ${manifest.name} at ${dir} (${response.status}): ${body} (the server must see ${dir}, and the name must be free)`, FAILURES.serving);
    }
    if (!response.ok) throw new Error(`${planner.baseUrl}/load_lora_adapter answered ${response.status}: ${body}`);
    if ((await served()) === undefined) throw new Error(`${planner.baseUrl} accepted adapter ${manifest.name} (${body}) but does not list it`);
    return { model: manifest.name };
  }

  if ((await served().catch(() => undefined)) !== undefined) return { model: manifest.name };
  await runRestart(serving.command.map((word) => word.replaceAll('{path}', dir).replaceAll('{name}', manifest.name)), env);
  const deadline = Date.now() + serving.timeoutSeconds * 1000;
  for (;;) {
    const healthy = await fetch(serving.healthUrl, { signal: AbortSignal.timeout(5_000) }).then((r) => r.ok, () => false);
    if (healthy && (await served().catch(() => undefined)) !== undefined) return { model: manifest.name };
    if (Date.now() > deadline) throw new Error(`${serving.healthUrl} did not serve ${manifest.name} within ${serving.timeoutSeconds} s of the restart`);
    await sleep(1_000);
  }
}

/** How much of the restart command's stderr an error quotes: its reason, not a whole server log. */
const QUOTED_STDERR_CHARS = 4_000;

/**
 * Runs the filled restart command. Its stderr goes to the worker's as it comes and its end is kept,
 * so a failed restart says why in the activity's error (a launcher names the folder it refused).
 */
async function runRestart(command: readonly string[], env: Env): Promise<void> {
  const [program, ...args] = command;
  let stderr = '';
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(program as string, args, { stdio: ['ignore', 'inherit', 'pipe'], env: { ...(process.env as Record<string, string>), ...(env as Record<string, string>) } });
    child.stderr.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderr = (stderr + chunk.toString('utf8')).slice(-QUOTED_STDERR_CHARS);
    });
    child.once('error', reject);
    // The rest of stderr comes by 'close', unless a process the command left running holds the pipe.
    child.once('exit', (exitCode) => {
      const late = setTimeout(() => resolve(exitCode), 1_000);
      child.once('close', () => {
        clearTimeout(late);
        resolve(exitCode);
      });
    });
  });
  if (code !== 0) throw new Error(`the serving restart command (${command.join(' ')}) exited with ${code}${stderr.trim() === '' ? '' : `: ${stderr.trim()}`}`);
}
