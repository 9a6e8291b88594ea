import { temporal } from '@temporalio/proto';
import type { Command } from 'commander';
import { workflowUrl } from '../../client/connection';
import { print, UsageError, type LazyContext } from '../context';

/** `coda stop-after-round`, `cancel`, `terminate`, `retry`: a running or closed workflow told what to do. */
export function registerControl(program: Command, ctx: LazyContext): void {
  program
    .command('stop-after-round <workflowId>')
    .description('ask a specialization to stop once the round it is in is done')
    .action(async (workflowId: string) => {
      await (await ctx().client()).workflow.getHandle(workflowId).signal('stopAfterRound');
      print(`${workflowId} will stop after its current round`);
    });
  program
    .command('cancel <workflowId>')
    .description('ask the workflow to stop (it cleans up: running rollouts release their desktops)')
    .action(async (workflowId: string) => {
      await (await ctx().client()).workflow.getHandle(workflowId).cancel();
      print(`cancellation requested for ${workflowId}`);
    });
  program
    .command('terminate <workflowId>')
    .description('stop the workflow at once, without cleanup')
    .option('--reason <text>', 'recorded in its history', 'terminated with coda terminate')
    .action(async (workflowId: string, options: { reason: string }) => {
      await (await ctx().client()).workflow.getHandle(workflowId).terminate(options.reason);
      print(`terminated ${workflowId}`);
    });
  program
    .command('retry <workflowId>')
    .description('run a closed workflow again from its start, same id and input (finished rollouts, verdicts and sets are reused)')
    .action(async (workflowId: string) => {
      const c = ctx();
      const client = await c.client();
      const handle = client.workflow.getHandle(workflowId);
      const history = await handle.fetchHistory();
      const firstTask = (history.events ?? []).find((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      if (firstTask?.eventId == null) throw new UsageError(`${workflowId} has no completed workflow task to restart from`);
      const described = await handle.describe();
      const reset = await client.workflowService.resetWorkflowExecution({
        namespace: c.config.temporal.namespace,
        workflowExecution: { workflowId, runId: described.runId },
        reason: 'retried with coda retry',
        workflowTaskFinishEventId: firstTask.eventId,
        requestId: `coda-retry-${Date.now()}`,
      });
      print(`retrying ${workflowId} from its start as run ${reset.runId}\n  ${workflowUrl(c.config, workflowId)}`);
    });
}
