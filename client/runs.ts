import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { ownValue } from '../core/records';
import { CODA_ROUND, CODA_RUN, CODA_SOFTWARE, CODA_STAGE } from '../workflows/search-attributes';

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

/** Workflows matching the filter, newest first, at most `limit`; whether there were more, and the query. */
export async function listRuns(client: Client, filter: RunsFilter, limit: number): Promise<{ rows: WorkflowExecutionInfo[]; more: boolean; query: string }> {
  const query = runsQuery(filter);
  const rows: WorkflowExecutionInfo[] = [];
  for await (const execution of client.workflow.list({ ...(query === '' ? {} : { query }), pageSize: Math.min(limit + 1, 1000) })) {
    if (rows.length === limit) return { rows, more: true, query };
    rows.push(execution);
  }
  return { rows, more: false, query };
}

/** The search attributes every CODA workflow sets (workflows/search-attributes.ts), empty where one is not set. */
export function runAttributes(e: WorkflowExecutionInfo): { software: string; stage: string; run: string; round: number | undefined } {
  const attrs = e.typedSearchAttributes;
  return { software: attrs.get(CODA_SOFTWARE) ?? '', stage: attrs.get(CODA_STAGE) ?? '', run: attrs.get(CODA_RUN) ?? '', round: attrs.get(CODA_ROUND) };
}
