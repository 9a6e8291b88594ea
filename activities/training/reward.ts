import type { GuiAction } from '../../core/actions';
import { parseExecutorOutput } from '../../core/executor-parser';
import { parsePlannerOutput, primitiveAction } from '../../core/planner-parser';
import { buildExecutorMessages } from '../../core/prompts/executor';
import { sampledResponse, type ExtraLogName, type RewardSample, type SampleReward } from '../../core/remote-reward';
import { actionReward } from '../../core/reward';
import { smartResize } from '../../core/smart-resize';
import { parseGrpoLabel, type GrpoLabel } from '../../core/training';
import { attemptOfManifest } from '../../core/keys';
import { type TrajectoryManifest } from '../../core/trajectory';
import type { Env } from '../../config/load';
import type { Config, TrainingConfig } from '../../config/schema';
import { PromiseCache } from '../cache';
import { Limiter } from '../concurrency';
import { s3Gateway, type ModelGateway } from '../models/gateway';
import type { ObjectStore } from '../storage/object-store';
import { trajectoryManifestSchema } from '../../apps/manifests';

/**
 * CODA's decoupled GRPO reward for one sampled planner thought (docs/method.md, "Specialization"): the frozen
 * executor turns the thought into an action on the step's screen, with the same prompt, history
 * and parser as in rollouts (activities/models/agent-step.ts), and core/reward.ts compares that
 * action with the judge-approved one of the label. A planner reply that ends the episode itself
 * (ANS, DONE, FAIL) is compared without the executor.
 */

export interface ScoredSample extends SampleReward {
  /** False when the outcome may differ next time (the executor failed or ran out of time): not kept in the cache. */
  readonly cacheable: boolean;
  /** Time of the executor call, when one was made and answered. */
  readonly executorMs?: number;
}

export interface RewardScorerDeps {
  /** The executor endpoint of temporal.yaml; screenshots read from S3. */
  readonly gateway: ModelGateway;
  /** The deployment's key prefix: a label may name only a rollout's manifest below it. */
  readonly prefix: string;
  /**
   * A trajectory's manifest by key (the label names it; the executor's earlier replies are its
   * history). Its errors never quote the object: a request names the key, so it would read them.
   */
  readonly manifests: (key: string) => Promise<TrajectoryManifest>;
  readonly executorConcurrency: number;
  /** A sample is answered by then, with reward 0 if the executor has not answered. */
  readonly deadlineMs: number;
}

export type RewardScorer = (sample: RewardSample) => Promise<ScoredSample>;

const failed = (log: ExtraLogName, error: string, cacheable = true): ScoredSample => ({ reward: 0, score: 0, logs: { [log]: 1 }, error, cacheable });

const scored = (candidate: GuiAction, label: GrpoLabel, logs: SampleReward['logs'], executorMs?: number): ScoredSample => {
  const reward = actionReward(candidate, label.action, label.screen);
  return { reward, score: reward / 2, logs: { ...logs, type_match: candidate.type === label.action.type ? 1 : 0 }, cacheable: true, ...(executorMs === undefined ? {} : { executorMs }) };
};

export function createRewardScorer(deps: RewardScorerDeps): RewardScorer {
  const executorSlots = new Limiter(deps.executorConcurrency);

  /**
   * The trajectory of a label, read only when its key is a rollout manifest's under the
   * deployment's prefix, and its step's screenshot is the label's: a request names both, and
   * nothing else in the bucket is read for it (a checkpoint, a secret, another deployment's data).
   */
  async function labelledTrajectory(label: GrpoLabel): Promise<TrajectoryManifest | ScoredSample> {
    try {
      attemptOfManifest(deps.prefix, label.manifestKey);
    } catch {
      return failed('bad_label', `label.manifestKey ${label.manifestKey}: not a trajectory manifest key (${deps.prefix === '' ? '' : `${deps.prefix}/`}runs/{run}/{software}/{task}/{attempt}/manifest.json)`);
    }
    let manifest: TrajectoryManifest;
    try {
      manifest = await deps.manifests(label.manifestKey);
    } catch (err) {
      return failed('bad_label', `label.manifestKey ${label.manifestKey}: ${(err as Error).message}`, (err as Error).name === 'NoSuchKey');
    }
    if (manifest.steps[label.step - 1]?.screenshotKey !== label.screenshotKey) {
      return failed('bad_label', `label.screenshotKey ${label.screenshotKey}: not the screenshot of step ${label.step} of ${label.manifestKey}`);
    }
    return manifest;
  }

  async function viaExecutor(thought: string, label: GrpoLabel, signal: AbortSignal): Promise<ScoredSample> {
    const manifest = await labelledTrajectory(label);
    if (!('steps' in manifest)) return manifest;
    const history = manifest.steps.slice(0, label.step - 1).flatMap((s) => (s.executor === undefined ? [] : [s.executor.raw]));
    const messages = buildExecutorMessages({ instruction: thought, screenshotKey: label.screenshotKey, history });
    let completion;
    try {
      completion = await executorSlots.run(() => {
        signal.throwIfAborted();
        return deps.gateway.complete('executor', messages, { temperature: 0, signal, sourceSize: label.screen });
      });
    } catch (err) {
      return failed('executor_failed', `executor: ${(err as Error).message}`, false);
    }
    const sent = completion.imageSize ?? label.screen;
    const parsed = parseExecutorOutput(completion.texts[0] ?? '', { screen: label.screen, modelImage: smartResize(sent.width, sent.height) });
    if (!parsed.ok) return { ...failed('unparsable', `executor output malformed: ${parsed.reason}`), executorMs: completion.latencyMs };
    return scored(parsed.action, label, {}, completion.latencyMs);
  }

  return async (sample) => {
    const label = parseGrpoLabel(sample.label);
    if (typeof label === 'string') return failed('bad_label', label);
    const response = sampledResponse(sample.query, sample.prompt);
    if (!response.ok) return failed('bad_query', response.reason);
    const planned = parsePlannerOutput(response.text);
    if (!planned.ok) return failed('unparsable', `planner output malformed: ${planned.reason}`);
    const primitive = primitiveAction(planned.action);
    if (primitive !== undefined) return scored(primitive, label, { primitive: 1 });
    // Past the deadline the sample is answered anyway (S3 reads wait out outages longer than that).
    const signal = AbortSignal.timeout(deps.deadlineMs);
    const late = new Promise<ScoredSample>((resolve) =>
      signal.addEventListener('abort', () => resolve(failed('timed_out', `no reward within ${deps.deadlineMs} ms (manifest, screenshot or executor)`, false)), { once: true }),
    );
    return Promise.race([viaExecutor(planned.thought, label, signal), late]);
  };
}

/** Manifests are a few hundred KiB at most (one entry per step, screenshots by key). */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** A trajectory manifest from S3, or an error that names what is wrong with it without quoting it. */
async function readManifest(store: ObjectStore, key: string): Promise<TrajectoryManifest> {
  let raw: unknown;
  try {
    raw = JSON.parse((await store.get(key, MAX_MANIFEST_BYTES)).toString('utf8'));
  } catch (err) {
    if (err instanceof SyntaxError) throw new Error('not JSON');
    throw err;
  }
  const parsed = trajectoryManifestSchema.safeParse(raw);
  if (!parsed.success) throw new Error('not a trajectory manifest');
  return parsed.data;
}

/**
 * The scorer of a GPU worker: the executor endpoint of temporal.yaml, screenshots and trajectory
 * manifests read from S3 and kept (a GRPO group asks about the same step eight times).
 */
export function s3RewardScorer(config: Pick<Config, 'models' | 'judging' | 'storage'>, store: ObjectStore, settings: TrainingConfig['rewardService'], env?: Env): RewardScorer {
  const manifests = new PromiseCache<TrajectoryManifest>(1024);
  return createRewardScorer({
    // As the orchestrator's gateway: the screenshot variant the host stored for the executor, each read once (the preparer keeps them).
    gateway: s3Gateway(config, store, { env }),
    prefix: config.storage.prefix,
    manifests: (key) => manifests.get(key, () => readManifest(store, key)),
    executorConcurrency: settings.executorConcurrency,
    deadlineMs: settings.deadlineSeconds * 1000,
  });
}
