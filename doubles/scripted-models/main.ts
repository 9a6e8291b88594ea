import { loadConfig, type Env, type LoadedConfig } from '../../config/load';
import { defaultStartState, type StartState } from '../../core/generated-task';
import { parseTask, type Task } from '../../core/task';
import { parseTrajectoryManifest } from '../../core/trajectory';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store';
import { TaskLibrary } from '../../activities/tasks/library';
import { startScriptedServer, type Policy, type ScriptedServer } from '../openai-server';
import { scriptedAgentPolicy } from './agent-policy';
import { readTask, type TemplateContext } from './generated-tasks';
import { judgePolicy } from './judge';
import { taskGeneratorPolicy } from './task-generator';

/**
 * TEST DOUBLE entry point: the scripted model server for the dev stack and the tests, configured
 * by temporal.yaml's `dev.scriptedModels` (port, error rates, the judges' error rates) and
 * `models` (which names it serves: planner, executor, task generator, judges).
 */

/** What a software's generated tasks start from (core/generated-task.ts) and the document it shows. */
function startOf(seeds: readonly Task[]): { start: StartState; context: TemplateContext } | undefined {
  const start = defaultStartState(seeds);
  if (start === undefined) return undefined;
  const touched = start.initialize.filter((step) => step.func === 'touch');
  return { start, context: touched.length === 0 ? {} : { document: (touched.at(-1) as { text: string }).text } };
}

/** A generated task known by its instruction, as a runnable task whose `ans` is the plan the generator double wrote. */
function generatedTaskOf(software: string, instruction: string, start: { start: StartState; context: TemplateContext }): Task | undefined {
  const written = readTask(software, instruction, start.context);
  if (written === undefined) return undefined;
  return parseTask(
    {
      type: software,
      sort: 'generated',
      steps: 15,
      instruction,
      version: start.start.version,
      snapshot: start.start.snapshot,
      initialize: start.start.initialize,
      evaluate: [],
      ...(written.ans === undefined ? {} : { ans: written.ans }),
      generated: { set: 'double', seedTaskIds: ['seeds'], model: 'task-generator double', promptVersion: 'templates' },
    },
    'generated',
  );
}

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
  const library = options.library ?? new TaskLibrary();
  const host = config.hosts.find((h) => h.kind === 'local');
  const screen = host?.kind === 'local' ? host.screen : { width: 1920, height: 1080 };
  const tasks = library.software().flatMap((software) => library.load(software));
  const starts = new Map(library.software().flatMap((software) => {
    const start = startOf(tasks.filter((t) => t.type === software));
    return start === undefined ? [] : [[software, start] as const];
  }));
  const resolve = (instruction: string): Task | undefined => {
    for (const [software, start] of starts) {
      const task = generatedTaskOf(software, instruction, start);
      if (task !== undefined) return task;
    }
    return undefined;
  };
  const agent = scriptedAgentPolicy({
    tasks,
    resolve,
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
    resolveTask: (instruction) => tasks.find((t) => t.instruction === instruction) ?? resolve(instruction),
    screen,
    evaluatorVerdict: evaluatorVerdicts(createObjectStore(config.storage, options.env)),
    seed: settings.seed,
  });
  const generator = taskGeneratorPolicy({
    model: config.models.taskGenerator.model,
    seed: settings.seed,
    brokenRate: settings.brokenTaskReplyRate,
    contextOf: (software) => starts.get(software)?.context ?? {},
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
