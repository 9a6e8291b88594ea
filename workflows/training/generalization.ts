import { ApplicationFailure, executeChild, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { TaskSetSummary } from '../../activities/tasks/generation';
import { evaluation, type EvaluationResult } from '../evaluation/evaluation';
import { failOnBadInput, inputs } from '../inputs';
import { judgeRun, type JudgeRunResult } from '../judging/judge';
import {
  batchWorkflowId,
  evaluationRun,
  generalistName,
  generalizationEvaluationWorkflowId,
  generalizationSet,
  generatedRun,
  judgeRunWorkflowId,
  roundId,
  seriesName,
  specialistRow,
  taskGenerationWorkflowId,
} from '../names';
import { rolloutBatch, type BatchResult } from '../rollout/batch';
import { tagWorkflow } from '../search-attributes';
import { taskGeneration } from '../tasks/task-generation';
import type { GeneralizationInput } from './contract';
import { GENERALIZATION_STAGES, generalizationProgress, type GeneralizationProgress, type GeneralizationResult } from './progress';
import { datasets, gpu } from './rounds';

/**
 * Replay only, for generalizations started before the checkpoints recorded their task sets (the
 * `CARRIED_TASK_SETS` patch): the task sets of the specialization rounds behind a specialist
 * checkpoint `<run>-r<n>`, guessed from its name (a round's checkpoint, task set and id share the
 * name), each used if it exists; none for a checkpoint named otherwise.
 */
export function roundSetsOf(checkpoint: string): Array<{ set: string; round: number; rollouts: string; ifExists: true }> {
  const named = /^(.+)-r([1-9]\d{0,2})$/.exec(checkpoint);
  if (named === null) return [];
  return Array.from({ length: Number(named[2]) }, (_, i) => ({ set: roundId(named[1]!, i + 1), round: i + 1, rollouts: generatedRun(roundId(named[1]!, i + 1)), ifExists: true }));
}

/** The patch under which a specialist's earlier task sets are read from its checkpoint, not guessed from its name. */
export const CARRIED_TASK_SETS = 'carried-task-sets';

/** What a generalization's progress query reads: its input once checked, its stage, the software it works on, its counts so far. */
interface GeneralizationView {
  input: GeneralizationInput | undefined;
  stage: GeneralizationProgress['stage'];
  current: string | undefined;
  readonly counts: { rollouts: number; judged: number; trajectories: number; samples: number };
}

function progressOf(view: GeneralizationView): GeneralizationProgress {
  const { stage, current } = view;
  const STAGES = GENERALIZATION_STAGES;
  return {
    run: view.input?.run ?? '',
    stage,
    ...(current === undefined ? {} : { software: current }),
    counts: { ...view.counts },
    completed: stage === 'finished' ? STAGES.length : Math.max(0, STAGES.indexOf(stage as (typeof STAGES)[number])),
    total: STAGES.length,
  };
}

type Specialist = GeneralizationInput['specialists'][number] & { readonly checkpointKey: string; readonly model: string };

/** The specialists, checked to exist and registered with serving (idempotent), before anything runs. */
async function servedSpecialists(input: GeneralizationInput): Promise<Specialist[]> {
  const specialists: Specialist[] = [];
  for (const s of input.specialists) {
    const checkpointKey = await failOnBadInput(() => datasets.checkpointKey(s.checkpoint));
    const served = await gpu(input.gpuQueue).servePlanner({ checkpointKey });
    specialists.push({ ...s, checkpointKey, model: served.model });
  }
  return specialists;
}

/**
 * Each specialist rolls out on fresh generated tasks of its software, then the judge labels them;
 * the runs rolled out. With includeSeeds, each specialist's rollouts of its real tasks (its
 * specialization's evaluation of the round that trained it, which the report reuses) are judged
 * and trained on too.
 */
async function rollOutAndJudge(input: GeneralizationInput, specialists: readonly Specialist[], view: GeneralizationView): Promise<Array<{ run: string; software: string }>> {
  view.stage = 'rollouts';
  const sources: Array<{ run: string; software: string }> = [];
  for (const specialist of specialists) {
    view.current = specialist.software;
    const version = generalizationSet(input.run, specialist.software);
    // Fresh tasks: not those the specialist was trained on in its rounds, as its checkpoint records them.
    const earlier = patched(CARRIED_TASK_SETS) ? await datasets.checkpointTaskSets(specialist.checkpointKey) : roundSetsOf(specialist.checkpoint);
    const set: TaskSetSummary = await executeChild(taskGeneration, {
      workflowId: taskGenerationWorkflowId(specialist.software, version),
      args: [{ software: specialist.software, version, count: input.tasksPerSoftware, ...(earlier.length === 0 ? {} : { earlier }) }],
    });
    if (set.counts.kept === 0) continue;
    const batch: BatchResult = await executeChild(rolloutBatch, {
      workflowId: batchWorkflowId(version, specialist.software),
      args: [{ run: version, stage: 'generalization', software: specialist.software, taskSet: version, attempts: input.attempts, planner: { name: specialist.checkpoint, model: specialist.model } }],
    });
    view.counts.rollouts += batch.completed;
    sources.push({ run: version, software: specialist.software });
  }
  if (input.includeSeeds) sources.push(...specialists.map((s) => ({ run: evaluationRun(s.checkpoint), software: s.software })));
  view.stage = 'judging';
  for (const source of sources) {
    view.current = source.software;
    const judged: JudgeRunResult = await executeChild(judgeRun, {
      workflowId: judgeRunWorkflowId(source.run, source.software),
      args: [{ run: source.run, software: source.software, ...(input.judging === undefined ? {} : { plan: input.judging }) }],
    });
    view.counts.judged += judged.judged;
  }
  view.current = undefined;
  return sources;
}

/** Base, every specialist and the generalist on every software: one report, one row each. */
async function evaluateAll(input: GeneralizationInput, specialists: readonly Specialist[], generalistModel: string): Promise<EvaluationResult> {
  const { run } = input;
  return executeChild(evaluation, {
    workflowId: generalizationEvaluationWorkflowId(run),
    args: [
      {
        run: evaluationRun(run),
        series: seriesName('generalization', run),
        software: input.specialists.map((s) => s.software),
        attempts: input.evaluationAttempts,
        ...(input.evaluationTaskIds === undefined ? {} : { taskIds: input.evaluationTaskIds }),
        planners: [
          { name: 'base', model: input.base.model, ...(input.baseEvaluationRun === undefined ? {} : { run: input.baseEvaluationRun }) },
          // A specialist's rollouts of its own software's real tasks are its specialization's evaluation of the round that trained it: reused, not made again.
          ...specialists.map((s) => ({ name: specialistRow(s.software), model: s.model, run: evaluationRun(s.checkpoint), ...(input.crossEvaluation ? {} : { software: [s.software] }) })),
          { name: 'generalist', model: generalistModel },
        ],
      },
    ],
  });
}

/**
 * Generalization (docs/method.md, stage 2): each software's specialist rolls out on a fresh set
 * of generated tasks, the judge labels the trajectories, the successful ones are pooled across
 * software (at most perSoftwareCap each), a fresh planner is trained on them by SFT on the gpu
 * queue, and the base planner, every specialist and the generalist are evaluated on every
 * software (each specialist on its own software only when crossEvaluation is false): one report, one
 * row each. A specialist's row reuses the rollouts its specialization's evaluation made (same run),
 * so only what it has not rolled out yet is rolled out.
 */
export async function generalization(raw: unknown): Promise<GeneralizationResult> {
  const view: GeneralizationView = { input: undefined, stage: 'starting', current: undefined, counts: { rollouts: 0, judged: 0, trajectories: 0, samples: 0 } };
  setHandler(generalizationProgress, () => progressOf(view));
  const input = await failOnBadInput(() => inputs.resolveGeneralizationInput(raw, workflowInfo().workflowId));
  view.input = input;
  const { run } = input;
  tagWorkflow({ software: input.specialists.map((s) => s.software).join(','), stage: 'generalization', run });

  const specialists = await servedSpecialists(input);
  const sources = await rollOutAndJudge(input, specialists, view);

  view.stage = 'dataset';
  const name = generalistName(run);
  const dataset = await datasets.buildDataset({ id: name, kind: 'sft', sources, perSoftwareCap: input.perSoftwareCap });
  view.counts.trajectories = dataset.trajectories;
  view.counts.samples = dataset.rows;
  if (dataset.rows === 0) {
    throw ApplicationFailure.nonRetryable(`generalization ${run}: the judge approved no trajectory of any specialist, so there is nothing to train the generalist on`, 'NothingToLearn');
  }

  view.stage = 'training';
  const trained = await gpu(input.gpuQueue).train({ job: name, kind: 'sft', datasetKey: dataset.key, checkpoint: name, base: input.base });
  view.stage = 'serving';
  const served = await gpu(input.gpuQueue).servePlanner({ checkpointKey: trained.checkpointKey });

  view.stage = 'evaluation';
  const report = await evaluateAll(input, specialists, served.model);
  view.stage = 'finished';
  return {
    run,
    generalist: { name, model: served.model, checkpointKey: trained.checkpointKey },
    dataset: { key: dataset.key, rows: dataset.rows, trajectories: dataset.trajectories, bySoftware: dataset.bySoftware },
    report,
  };
}
