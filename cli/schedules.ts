import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction } from '@temporalio/client';
import { loadConfig, type LoadedConfig } from '../config/load';
import { resolveEvaluationInput } from '../workflows/evaluation/contract';
import { resolveJudgeEvaluationInput, resolveJudgeRunInput } from '../workflows/judging/contract';
import { resolveBatchInput } from '../workflows/rollout/contract';
import { resolveTaskGenerationInput } from '../workflows/tasks/contract';
import { ValidationError } from '../core/validation';
import { TaskLibrary } from '../activities/tasks/library';
import * as workflows from '../workflows';
import { connectClient } from '../client/connection';

/** Checks a scheduled workflow's input as the workflow will when it starts, so a bad one is refused now. */
function checkInput(config: LoadedConfig, workflow: string, input: unknown, id: string, library: TaskLibrary): void {
  switch (workflow) {
    case 'rolloutBatch':
      resolveBatchInput(config, input, id);
      return;
    case 'evaluation':
      resolveEvaluationInput(config, input, id, library.software());
      return;
    case 'taskGeneration':
      resolveTaskGenerationInput(config, input, id);
      return;
    case 'judgeRun':
      resolveJudgeRunInput(config, input);
      return;
    case 'judgeEvaluation':
      resolveJudgeEvaluationInput(config, input, id);
      return;
    default:
      return;
  }
}

/** A note on every schedule this command manages, so people can tell them apart in the Web UI. */
const NOTE = 'managed by cli/schedules.ts from temporal.yaml';

/**
 * Makes Temporal's schedules match temporal.yaml's `schedules` (e.g. the nightly evaluation):
 * creates the missing ones, updates the others in place (cron, workflow, input, paused, catch-up
 * window). Each run starts `workflow` with `input` on the named task queue; an overlapping run is
 * skipped, and a run missed during an outage of up to `catchupWindow` is caught up. Every input is
 * checked first as its workflow will check it. Returns one line per schedule.
 */
export async function syncSchedules(client: Client, config: LoadedConfig, library = new TaskLibrary()): Promise<string[]> {
  const known = Object.keys(workflows);
  const unknown = config.schedules.filter((s) => !known.includes(s.workflow));
  if (unknown.length > 0) {
    throw new ValidationError(
      config.file,
      unknown.map((s) => `schedules[${config.schedules.indexOf(s)}].workflow: unknown workflow "${s.workflow}" (expected one of ${known.join(', ')})`),
    );
  }
  const problems: string[] = [];
  config.schedules.forEach((schedule, i) => {
    try {
      checkInput(config, schedule.workflow, schedule.input, schedule.id, library);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      problems.push(...err.problems.map((p) => `schedules[${i}].input.${p}`));
    }
  });
  if (problems.length > 0) throw new ValidationError(config.file, problems);
  const done: string[] = [];
  for (const schedule of config.schedules) {
    const action: ScheduleOptionsAction = {
      type: 'startWorkflow',
      workflowType: schedule.workflow,
      taskQueue: config.taskQueues[schedule.taskQueue as keyof typeof config.taskQueues],
      workflowId: schedule.id,
      args: [schedule.input],
    };
    const spec = { cronExpressions: [schedule.cron] };
    try {
      await client.schedule.create({
        scheduleId: schedule.id,
        spec,
        action,
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: schedule.catchupWindow },
        state: { paused: schedule.paused, note: NOTE },
      });
      done.push(`created ${schedule.id} (${schedule.cron}, ${schedule.workflow})`);
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(schedule.id).update((previous) => ({
        ...previous,
        spec,
        action,
        policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: schedule.catchupWindow },
        // A pause an operator made (coda schedules pause) survives; temporal.yaml can only add one.
        state: { ...previous.state, paused: schedule.paused || previous.state.paused, note: NOTE },
      }));
      done.push(`updated ${schedule.id} (${schedule.cron}, ${schedule.workflow})`);
    }
  }
  return done;
}

if (require.main === module) {
  (async () => {
    const config = loadConfig();
    const client = await connectClient(config);
    try {
      const lines = await syncSchedules(client, config);
      console.log(lines.length > 0 ? lines.join('\n') : 'temporal.yaml declares no schedules');
    } finally {
      await client.connection.close();
    }
  })().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
