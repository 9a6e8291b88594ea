import type { GuiAction } from '../../core/actions';
import { parseExecutorOutput } from '../../core/executor-parser';
import { parsePlannerOutput, plannerActionText, primitiveAction } from '../../core/planner-parser';
import { buildExecutorMessages } from '../../core/prompts/executor';
import { buildPlannerMessages } from '../../core/prompts/planner';
import { smartResize, type Size } from '../../core/smart-resize';
import type { Completion, ModelGateway } from './gateway';
import { memoizedImages } from './images';

/** An earlier step as the models see it again: what the planner said, the screen, the executor's reply. */
export interface AgentTurn {
  readonly thought: string;
  readonly actionText: string;
  readonly screenshotKey: string;
  readonly executorRaw?: string;
}

export interface AgentStepInput {
  readonly instruction: string;
  readonly software: string;
  readonly screenshotKey: string;
  readonly screen: Size;
  readonly history: readonly AgentTurn[];
  /** The planner model to ask for instead of the endpoint's. */
  readonly plannerModel?: string;
  /** The sampling seed of both requests (core/sampling-seed.ts). */
  readonly seed?: number;
}

export interface AgentStep {
  readonly planner: Completion;
  readonly executor?: Completion;
  readonly thought: string;
  readonly actionText: string;
  /** Null when a reply could not be parsed (`error` says why). */
  readonly action: GuiAction | null;
  readonly error?: string;
}

/**
 * One CODA step of thinking: the planner writes a thought; unless it is a primitive (ANS, DONE,
 * FAIL) the frozen executor turns the thought into one GUI action, whose coordinates are mapped
 * from the image the executor was sent back to the screen.
 */
export async function agentStep(gateway: ModelGateway, input: AgentStepInput): Promise<AgentStep> {
  // Planner and executor see the same screenshot: read it once.
  const scoped = gateway.withImages(memoizedImages(gateway.images));
  const planner = await scoped.complete(
    'planner',
    buildPlannerMessages({ instruction: input.instruction, software: input.software, screenshotKey: input.screenshotKey, history: input.history }),
    { sourceSize: input.screen, seed: input.seed, ...(input.plannerModel === undefined ? {} : { model: input.plannerModel }) },
  );
  const planned = parsePlannerOutput(planner.texts[0] ?? '');
  if (!planned.ok) return { planner, thought: '', actionText: '', action: null, error: `planner output malformed: ${planned.reason}` };
  const actionText = plannerActionText(planned.action);
  const primitive = primitiveAction(planned.action);
  if (primitive !== undefined) return { planner, thought: planned.thought, actionText, action: primitive };

  const executor = await scoped.complete(
    'executor',
    buildExecutorMessages({
      instruction: planned.thought,
      screenshotKey: input.screenshotKey,
      history: input.history.flatMap((turn) => (turn.executorRaw === undefined ? [] : [turn.executorRaw])),
    }),
    { sourceSize: input.screen, seed: input.seed },
  );
  const sent = executor.imageSize ?? input.screen;
  const parsed = parseExecutorOutput(executor.texts[0] ?? '', { screen: input.screen, modelImage: smartResize(sent.width, sent.height) });
  if (!parsed.ok) return { planner, executor, thought: planned.thought, actionText, action: null, error: `executor output malformed: ${parsed.reason}` };
  return { planner, executor, thought: planned.thought, actionText, action: parsed.action };
}
