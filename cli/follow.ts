import type { Client, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { decodePayload } from '../client/payloads';
import { ProgressLine, type ProgressOutput } from './progress-line';

/**
 * Follows a workflow to its end as a progress line per stage: the stage its `progress` query
 * names, its own counts, and the counts of the child it waits on (a rollout batch's rollouts done
 * of all, a judge run's trajectories, an evaluation's batches and the rollouts of the one running)
 * or the trainer's step (the train activity's last heartbeat).
 * Each stage ends with a line of its final counts and time; the stages' times are returned.
 */

export interface StageTime {
  readonly stage: string;
  readonly seconds: number;
  /** False for a stage never seen running: it ended between two polls, or was not run (a round with nothing to train). */
  readonly seen: boolean;
}

/** What a workflow's progress says: the stage it is in and its counts in words. */
export type ReadProgress = (progress: Record<string, any>) => { readonly stage: string; readonly counts: string };

/** What a waited-on child's `completed`/`total` counts, by workflow type. */
const CHILD_COUNTS: Readonly<Record<string, string>> = {
  rolloutBatch: 'rollouts',
  judgeRun: 'trajectories judged',
  evaluation: 'evaluation batches',
};
/** Children whose own children are followed too (an evaluation runs its batches). */
const FOLLOWED_INTO = new Set(['evaluation']);

/** `training step 40/210`: the train activity's last heartbeat (activities/training/progress.ts), or nothing. */
export function trainingStep(activities: readonly temporal.api.workflow.v1.IPendingActivityInfo[]): string[] {
  const train = activities.find((a) => a.activityType?.name === 'train');
  const beat = decodePayload(train?.heartbeatDetails?.payloads?.at(-1)) as { phase?: unknown; step?: unknown; totalSteps?: unknown } | undefined;
  if (typeof beat?.phase !== 'string') return [];
  if (beat.phase !== 'training' || typeof beat.step !== 'number') return [`trainer ${beat.phase}`];
  return [`training step ${beat.step}/${typeof beat.totalSteps === 'number' ? beat.totalSteps : '?'}`];
}

/** `rollouts 12/40, trajectories judged 3/12`: the counts of the children `workflowId` waits on now, and the trainer's step. */
export async function childCounts(client: Client, workflowId: string, depth = 0): Promise<string[]> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const parts: string[] = trainingStep(description.raw.pendingActivities ?? []);
  for (const child of description.raw.pendingChildren ?? []) {
    const type = child.workflowTypeName ?? '';
    if (CHILD_COUNTS[type] === undefined || !child.workflowId) continue;
    const progress = (await client.workflow.getHandle(child.workflowId).query('progress').catch(() => undefined)) as { completed?: unknown; total?: unknown } | undefined;
    if (typeof progress?.completed === 'number' && typeof progress.total === 'number') parts.push(`${CHILD_COUNTS[type]} ${progress.completed}/${progress.total}`);
    if (FOLLOWED_INTO.has(type) && depth < 2) parts.push(...(await childCounts(client, child.workflowId, depth + 1)));
  }
  return parts;
}

export interface FollowOptions {
  /** Leads every line, e.g. `KAlgebra specialization`. */
  readonly label: string;
  readonly read: ReadProgress;
  /** The workflow's stages in order: one that began and ended between two polls still gets its line. */
  readonly stages: readonly string[];
  readonly out?: ProgressOutput;
  readonly pollMs?: number;
}

export async function followStages<T>(client: Client, handle: WorkflowHandle, opts: FollowOptions): Promise<{ result: T; stages: StageTime[] }> {
  const stages: StageTime[] = [];
  /** The stage in progress: its line, and its own counts (a child's are left out of its last line: they stop at the last poll). */
  let current: { stage: string; line: ProgressLine; counts: string } | undefined;
  const out = opts.out ?? process.stdout;
  /** A line for each stage before `stage` (undefined: the end) never seen running. */
  const unseenBefore = (stage: string | undefined): void => {
    const from = stages.length === 0 ? 0 : opts.stages.indexOf(stages.at(-1)!.stage) + 1;
    const to = stage === undefined ? opts.stages.length : opts.stages.indexOf(stage);
    for (const skipped of opts.stages.slice(from, Math.max(from, to))) {
      out.write(`  · ${opts.label}: ${skipped} — not seen running (over within a poll, or not run)\n`);
      stages.push({ stage: skipped, seconds: 0, seen: false });
    }
  };
  const endStage = (): void => {
    if (current === undefined) return;
    current.line.end(`  ✓ ${opts.label}: ${current.stage} — ${current.counts}`);
    stages.push({ stage: current.stage, seconds: current.line.elapsedSeconds(), seen: true });
    current = undefined;
  };
  const poll = async (): Promise<void> => {
    const progress = (await handle.query('progress').catch(() => undefined)) as Record<string, any> | undefined;
    if (progress === undefined) return;
    const { stage, counts } = opts.read(progress);
    if (stage === 'starting' || stage === 'finished') return;
    if (current !== undefined && current.stage !== stage) endStage();
    if (current === undefined) {
      unseenBefore(stage);
      current = { stage, line: new ProgressLine(out), counts };
    }
    current.counts = counts;
    const children = await childCounts(client, handle.workflowId).catch(() => []);
    current.line.update(`  ${opts.label}: ${stage} — ${[counts, ...children].filter((part) => part !== '').join(', ')}`);
  };
  let polling = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(poll).catch(() => undefined);
  }, opts.pollMs ?? 1_000);
  try {
    const result = (await handle.result()) as T;
    clearInterval(timer);
    await polling;
    await poll().catch(() => undefined);
    endStage();
    unseenBefore(undefined);
    return { result, stages };
  } finally {
    clearInterval(timer);
  }
}
