import type { WorkflowExecutionInfo } from '@temporalio/client';
import { listRuns, runAttributes, runsQuery, STATUS_NAMES, type RunsFilter } from '../../client/runs';
import { workflowUrl } from '../../client/connection';
import { ownValue } from '../../core/records';
import { badRequest } from '../errors';
import { html, type Html } from '../html';
import type { ViewerSources } from '../sources';
import { paths } from '../urls';
import { badge, link, table, utc } from './parts';

/** What the runs page lists unless a type is chosen: runs, not their thousands of rollouts and judges. */
export const RUN_TYPES = ['specialization', 'generalization', 'evaluation', 'rolloutBatch', 'taskGeneration', 'judgeRun', 'judgeEvaluation'] as const;
const OTHER_TYPES = ['rollout', 'judgeTrajectory', 'stackCheck'] as const;
const FIELDS = ['type', 'software', 'stage', 'run', 'status', 'round'] as const;
const LIMIT = 200;

export type Filters = Partial<Record<(typeof FIELDS)[number], string>>;

/** The page's filters from its query string, each checked (a bad one is a 400 naming it). */
export function filtersOf(query: Readonly<Record<string, unknown>>): Filters {
  const filters: Filters = {};
  for (const field of FIELDS) {
    const value = query[field];
    if (typeof value === 'string' && value.trim() !== '') filters[field] = value.trim();
  }
  if (filters.status !== undefined && ownValue(STATUS_NAMES, filters.status) === undefined) throw badRequest(`status "${filters.status}"`, `expected one of ${Object.keys(STATUS_NAMES).join(', ')}`);
  if (filters.round !== undefined && !/^\d{1,6}$/.test(filters.round)) throw badRequest(`round "${filters.round}"`, 'expected a round number');
  return filters;
}

/** One row per workflow: the search attributes every CODA workflow sets, and its links. */
export const runRow = (src: ViewerSources, e: WorkflowExecutionInfo): unknown[] => {
  const { software, stage, run, round } = runAttributes(e);
  return [
    link(paths.run(e.workflowId), e.workflowId),
    e.type,
    badge(e.status.name),
    software,
    stage,
    run,
    round ?? '',
    utc(e.startTime),
    utc(e.closeTime),
    link(workflowUrl(src.config, e.workflowId), 'Web UI', true),
  ];
};

export const RUN_HEADERS = ['workflow', 'type', 'status', 'software', 'stage', 'run', 'round', 'started (UTC)', 'closed (UTC)', 'Temporal'];

/** Workflows matching a visibility query, at most `limit`; whether there were more. */
export function readRuns(src: ViewerSources, filter: RunsFilter, limit = LIMIT): Promise<{ rows: WorkflowExecutionInfo[]; more: boolean; query: string }> {
  return src.temporal(`runs matching ${runsQuery(filter)}`, (client) => listRuns(client, filter, limit));
}

export async function runsPage(src: ViewerSources, filters: Filters): Promise<Html> {
  const { rows, more, query } = await readRuns(src, { ...filters, types: RUN_TYPES });
  const select = (name: string, options: readonly string[], chosen: string | undefined, any: string): Html =>
    html`<select name="${name}"><option value="">${any}</option>${options.map((o) => html`<option${o === chosen ? html` selected` : ''}>${o}</option>`)}</select>`;
  const input = (name: string, placeholder: string): Html => html`<input name="${name}" placeholder="${placeholder}" value="${filters[name as keyof Filters] ?? ''}">`;
  return html`<h1>Runs</h1>
<form class="filters" method="get" action="/runs">
${select('type', [...RUN_TYPES, ...OTHER_TYPES], filters.type, 'every run type')}
${input('software', 'software')} ${input('stage', 'stage')} ${input('run', 'run id')} ${input('round', 'round')}
${select('status', Object.keys(STATUS_NAMES), filters.status, 'any status')}
<button type="submit">Filter</button> <a href="/runs">clear</a>
</form>
<p class="muted">Temporal visibility: <code>${query}</code>${more ? html` — the newest ${LIMIT} shown` : ''}</p>
${rows.length === 0 ? html`<p class="empty">No workflow matches.</p>` : table(RUN_HEADERS, rows.map((e) => runRow(src, e)), { id: 'runs' })}`;
}
