import type { Command } from 'commander';
import { print, type LazyContext } from '../context';
import { syncSchedules } from '../schedules';
import { textTable } from '../table';

/** `coda schedules`: the schedules temporal.yaml declares, listed, created, triggered, paused. */

async function listSchedules(ctx: LazyContext): Promise<void> {
  const c = ctx();
  const client = await c.client();
  const rows: string[][] = [];
  for await (const s of client.schedule.list()) {
    const described = await client.schedule.getHandle(s.scheduleId).describe();
    const action = described.action.type === 'startWorkflow' ? described.action.workflowType : described.action.type;
    const cron = c.config.schedules.find((d) => d.id === s.scheduleId)?.cron ?? '(not in temporal.yaml)';
    rows.push([s.scheduleId, action, cron, described.state.paused ? 'paused' : 'active', described.info.nextActionTimes[0]?.toISOString() ?? '-', String(described.info.recentActions.length)]);
  }
  print(rows.length === 0 ? 'no schedules (coda schedules create makes those of temporal.yaml)' : textTable([['SCHEDULE', 'WORKFLOW', 'CRON', 'STATE', 'NEXT RUN', 'RECENT RUNS'], ...rows]));
}

export function registerSchedules(program: Command, ctx: LazyContext): void {
  const schedules = program.command('schedules').description("the schedules of temporal.yaml's `schedules` (the nightly evaluation)");
  schedules
    .command('list')
    .description('every schedule, with its next run and whether it is paused')
    .action(() => listSchedules(ctx));
  schedules
    .command('create')
    .description("create or update temporal.yaml's schedules in place (idempotent)")
    .action(async () => {
      const c = ctx();
      const lines = await syncSchedules(await c.client(), c.config);
      print(lines.length > 0 ? lines.join('\n') : 'temporal.yaml declares no schedules');
    });
  schedules
    .command('trigger <scheduleId>')
    .description('start a run now')
    .action(async (scheduleId: string) => {
      await (await ctx().client()).schedule.getHandle(scheduleId).trigger();
      print(`triggered ${scheduleId}`);
    });
  for (const [name, paused] of [
    ['pause', true],
    ['unpause', false],
  ] as const) {
    schedules
      .command(`${name} <scheduleId>`)
      .description(paused ? 'stop starting runs until unpaused' : 'start runs again')
      .option('--note <text>', 'why, shown in the Web UI')
      .action(async (scheduleId: string, options: { note?: string }) => {
        const handle = (await ctx().client()).schedule.getHandle(scheduleId);
        await (paused ? handle.pause(options.note) : handle.unpause(options.note));
        print(`${paused ? 'paused' : 'unpaused'} ${scheduleId}`);
      });
  }
}
