import { loadConfig, type Env, type LoadedConfig } from '../../config/load';
import { referencePlanFor } from '../../apps/policies';
import { parseTrajectoryManifest } from '../../apps/manifests';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store';
import { TaskLibrary } from '../../activities/tasks/library';
import { kindOf } from '../learning-planner/situation';
import { startScriptedServer, type Policy, type ScriptedServer } from '../openai-server';
import { scriptedAgentPolicy } from './agent-policy';
import { judgePolicy } from './judge';
import { taskGeneratorPolicy } from './task-generator';
import { screenOf, taskResolver } from './task-resolver';

/**
 * TEST DOUBLE entry point: the scripted model server for the dev stack and the tests, configured
 * by temporal.yaml's `dev.scriptedModels` (port, error rates, the judges' error rates) and
 * `models` (which names it serves: planner, executor, task generator, judges).
 */

/** What the task's evaluators said about a stored trajectory, read from its manifest (cached: manifests never change). */
function evaluatorVerdicts(store: ObjectStore): (manifestKey: string) => Promise<boolean | undefined> {
  const known = new Map<string, boolean | undefined>();
  return async (key) => {
    if (known.has(key)) return known.get(key);
    const raw = await store.tryGet(key).catch(() => undefined);
    const passed = raw === undefined ? undefined : parseTrajectoryManifest(JSON.parse(raw.toString('utf8')), key).evaluation?.passed;
    known.set(key, passed);
    return passed;
  };
}

export interface ScriptedModelsOptions {
  readonly port?: number;
  readonly library?: TaskLibrary;
  /** Where the S3 credentials are (the judge doubles read the evaluators' results from manifests). */
  readonly env?: Env;
  /** vLLM's runtime LoRA loading routes; default: VLLM_ALLOW_RUNTIME_LORA_UPDATING in `env`, read as vLLM reads it. */
  readonly runtimeLoraUpdating?: boolean;
  /** Overrides dev.scriptedModels.latencyMs. */
  readonly latencyMs?: number;
}

export async function startScriptedModels(config: LoadedConfig, options: ScriptedModelsOptions = {}): Promise<ScriptedServer> {
  const settings = config.dev.scriptedModels;
  if (settings === undefined) throw new Error(`${config.file}: dev.scriptedModels is not set, so there is no scripted model server to start`);
  const resolver = taskResolver(options.library ?? new TaskLibrary());
  const screen = screenOf(config);
  const { tasks } = resolver;
  const agent = scriptedAgentPolicy({
    tasks,
    resolve: (instruction) => resolver.generated(instruction),
    generated: () => resolver.everyGenerated(),
    screen,
    plannerModel: config.models.planner.model,
    executorModel: config.models.executor.model,
    errorRate: settings.errorRate,
    malformedRate: settings.malformedRate,
    seed: settings.seed,
  });
  const judges = judgePolicy({
    judges: Object.fromEntries(
      config.models.judges.map((j) => {
        const rates = settings.judges[j.model] ?? { high: { falsePositive: 0, falseNegative: 0 }, low: { falsePositive: 0, falseNegative: 0 }, unreadable: 0 };
        return [j.model, { ...rates, ...(j.maxImages === undefined ? {} : { maxImages: j.maxImages }) }];
      }),
    ),
    lowResolutionWidth: config.judging.images.low.width,
    resolveTask: (instruction) => resolver.taskOf(instruction),
    screen,
    evaluatorVerdict: evaluatorVerdicts(createObjectStore(config.storage, options.env)),
    seed: settings.seed,
  });
  const generator = taskGeneratorPolicy({
    model: config.models.taskGenerator.model,
    seed: settings.seed,
    brokenRate: settings.brokenTaskReplyRate,
    contextOf: (software) => resolver.contextOf(software),
    kindOf: (instruction, software) => {
      const task = resolver.taskOf(instruction, software);
      const plan = task === undefined ? undefined : referencePlanFor(task, screen);
      return plan === undefined ? undefined : plan.replayable ? kindOf(plan.actions) : 'no plan';
    },
  });
  const judgeModels = new Set(config.models.judges.map((j) => j.model));
  const policy: Policy = (request) => {
    if (request.model === config.models.taskGenerator.model) return generator(request);
    if (judgeModels.has(request.model)) return judges(request);
    return agent(request);
  };
  const models = [config.models.planner.model, config.models.executor.model, config.models.taskGenerator.model, ...judgeModels];
  const runtimeLoraUpdating = options.runtimeLoraUpdating ?? ['1', 'true'].includes((options.env?.VLLM_ALLOW_RUNTIME_LORA_UPDATING ?? '0').trim().toLowerCase());
  return startScriptedServer(policy, { port: options.port ?? settings.port, models, runtimeLoraUpdating, latencyMs: options.latencyMs ?? settings.latencyMs });
}

if (require.main === module) {
  startScriptedModels(loadConfig(), { env: process.env })
    .then((server) => console.log(`scripted model server (test double) on ${server.url}`))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
