import { ApplicationFailure, Context } from '@temporalio/activity';
import { FAILURES } from '../../core/failures';
import { decisionKey, type AttemptRef } from '../../core/keys';
import { EXECUTOR_PROMPT_VERSION } from '../../core/prompts/executor';
import { PLANNER_PROMPT_VERSION } from '../../core/prompts/planner';
import type { Size } from '../../core/smart-resize';
import type { Decision } from '../../core/rollout-types';
import { withHeartbeat } from '../heartbeat';
import type { TaskReader } from '../tasks/library';
import type { DecisionRecord, DecisionStore } from './decision';
import { agentStep } from './agent-step';
import { ModelRequestError, type Completion, type ModelGateway } from './gateway';
import { samplingSeed } from '../../core/sampling-seed';
import { truncate } from '../../core/text';

export interface DecideInput {
  readonly ref: AttemptRef;
  /** 1-based number of the step being decided. */
  readonly step: number;
  readonly taskKey: string;
  /** The screen now. */
  readonly screenshotKey: string;
  readonly screen: Size;
  /** Earlier steps: where their decision texts are, and the screen each one saw. */
  readonly history: ReadonlyArray<{ readonly decisionKey: string; readonly screenshotKey: string }>;
  /** The planner model to ask for instead of the endpoint's (a checkpoint under evaluation). */
  readonly plannerModel?: string;
}

export interface ModelDeps {
  readonly gateway: ModelGateway;
  /** Where decision texts go: S3, through the worker's cache (shared with the manifest writer). */
  readonly decisions: DecisionStore;
  readonly prefix: string;
  readonly tasks: TaskReader;
}


const callRecord = (completion: Completion, promptVersion: string) => ({
  raw: completion.texts[0] ?? '',
  model: completion.model,
  baseUrl: completion.baseUrl,
  latencyMs: completion.latencyMs,
  usage: completion.usage,
  promptVersion,
});

/**
 * The model gateway's activities (orchestrator queue). `decideStep` runs one agent step
 * (agent-step.ts) with the earlier turns read back from S3, and stores the raw texts. Malformed
 * output is not an activity failure: it comes back as a decision without an action, its raw text
 * kept, so the workflow records a failed step.
 */
export function createModelActivities(deps: ModelDeps) {
  const { decisions } = deps;

  async function decide(input: DecideInput): Promise<Decision> {
    const task = await deps.tasks.read(input.taskKey);
    const previous = await Promise.all(input.history.map((h) => decisions.read(h.decisionKey)));
    const { planner, executor, thought, actionText, action, error } = await agentStep(deps.gateway, {
      instruction: task.instruction,
      software: task.type,
      screenshotKey: input.screenshotKey,
      screen: input.screen,
      seed: samplingSeed(input.ref, input.step),
      ...(input.plannerModel === undefined ? {} : { plannerModel: input.plannerModel }),
      history: previous.map((d, i) => ({
        thought: d.planner.thought,
        actionText: d.planner.actionText,
        screenshotKey: input.history[i]!.screenshotKey,
        executorRaw: d.executor?.raw,
      })),
    });

    const record: DecisionRecord = {
      planner: { ...callRecord(planner, PLANNER_PROMPT_VERSION), thought, actionText },
      executor: executor === undefined ? undefined : callRecord(executor, EXECUTOR_PROMPT_VERSION),
      action,
      error,
    };
    const key = decisionKey(deps.prefix, input.ref, input.step, Context.current().info.attempt);
    await decisions.write(key, record);
    return {
      thought: truncate(thought, 300),
      actionText: truncate(actionText, 200),
      action,
      ...(error === undefined ? {} : { error: truncate(error, 500) }),
      decisionKey: key,
      plannerMs: planner.latencyMs,
      ...(executor === undefined ? {} : { executorMs: executor.latencyMs }),
    };
  }

  return {
    async decideStep(input: DecideInput): Promise<Decision> {
      try {
        return await withHeartbeat(() => decide(input), () => ({ step: input.step }), 5_000);
      } catch (err) {
        if (err instanceof ModelRequestError) throw ApplicationFailure.nonRetryable(err.message, FAILURES.modelRequest);
        throw err;
      }
    },
  };
}

export type ModelActivities = ReturnType<typeof createModelActivities>;
