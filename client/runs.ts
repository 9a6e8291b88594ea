import { ownValue } from '../core/records';

/** Workflow statuses as `coda runs --status` and the viewer's filter take them, and as visibility names them. */
export const STATUS_NAMES: Record<string, string> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
  terminated: 'Terminated',
  'continued-as-new': 'ContinuedAsNew',
  'timed-out': 'TimedOut',
};

export interface RunsFilter {
  readonly type?: string;
  /** Any of these workflow types (when `type` is not given). */
  readonly types?: readonly string[];
  readonly software?: string;
  readonly stage?: string;
  readonly run?: string;
  readonly status?: string;
  readonly round?: string;
}

/** The visibility query of `coda runs` and the viewer's runs page (Temporal's list filter language). */
export function runsQuery(options: RunsFilter): string {
  const quote = (v: string) => `"${v.replace(/"/g, '')}"`;
  const parts = [
    options.type ? `WorkflowType = ${quote(options.type)}` : options.types && options.types.length > 0 && `WorkflowType IN (${options.types.map(quote).join(', ')})`,
    options.software && `CodaSoftware = ${quote(options.software)}`,
    options.stage && `CodaStage = ${quote(options.stage)}`,
    options.run && `CodaRun = ${quote(options.run)}`,
    options.round && `CodaRound = ${Number(options.round)}`,
    options.status && `ExecutionStatus = ${quote(ownValue(STATUS_NAMES, options.status) ?? options.status)}`,
  ].filter((p): p is string => typeof p === 'string' && p !== '');
  return parts.join(' AND ');
}
