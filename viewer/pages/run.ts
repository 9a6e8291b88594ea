import type { WorkflowExecutionDescription } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { workflowUrl } from '../../client/connection';
import { summarizeHistory, type HistorySummary } from '../../client/history';
import { attemptOfManifest, type AttemptRef } from '../../core/keys';
import { CODA_ROUND, CODA_RUN, CODA_SOFTWARE, CODA_STAGE } from '../../workflows/search-attributes';
import { ViewerError } from '../errors';
import { html, type Html } from '../html';
import { decodePayload } from '../../client/payloads';
import type { ViewerSources } from '../sources';
import { paths, reportPath } from '../urls';
import { anyValue, badge, duration, json, keyValues, link, pre, progressBar, table, utc } from './parts';
import { readResultExtras, renderResult } from './run-result';

type Event = temporal.api.history.v1.IHistoryEvent;

/** What the run page and the training page read of one workflow. */
export interface RunState {
  readonly workflowId: string;
  readonly description: WorkflowExecutionDescription;
  readonly summary: HistorySummary;
  readonly input: unknown;
  /** The result of a completed run, the failure of a failed one. */
  readonly result?: unknown;
  readonly failure?: string;
}

export async function readRun(src: ViewerSources, workflowId: string): Promise<RunState> {
  const handle = (client: Parameters<Parameters<ViewerSources['temporal']>[1]>[0]) => client.workflow.getHandle(workflowId);
  const description = await src.temporal(`workflow ${workflowId}`, (c) => handle(c).describe());
  const events = (await src.temporal(`workflow ${workflowId}`, (c) => handle(c).fetchHistory())).events ?? [];
  const last = events.at(-1);
  const completed = last?.workflowExecutionCompletedEventAttributes;
  const failed = last?.workflowExecutionFailedEventAttributes;
  return {
    workflowId,
    description,
    summary: summarizeHistory(events),
    input: decodePayload(events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]),
    ...(completed ? { result: decodePayload(completed.result?.payloads?.[0]) } : {}),
    ...(failed ? { failure: failureMessage(failed.failure) } : {}),
  };
}

const failureMessage = (failure: temporal.api.failure.v1.IFailure | null | undefined): string => {
  const messages: string[] = [];
  for (let f = failure; f; f = f.cause) if (f.message) messages.push(f.message);
  return messages.join(' ← ') || 'failed';
};

/** The workflow's `progress` query, or why there is no answer (a run with no worker cannot answer). */
export async function readProgress(src: ViewerSources, workflowId: string): Promise<{ progress?: unknown; error?: string }> {
  try {
    return { progress: await src.temporal(`workflow ${workflowId}`, (c) => c.workflow.getHandle(workflowId).query('progress')) };
  } catch (err) {
    if (err instanceof ViewerError && err.status === 503) throw err;
    return { error: (err as Error).message };
  }
}

export function progressSection(answer: { progress?: unknown; error?: string }): Html {
  if (answer.error !== undefined) return html`<p class="muted">No progress: ${answer.error}</p>`;
  return html`${progressBar(answer.progress) ?? ''}${anyValue(answer.progress)}`;
}

const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {});

/** Pages of the viewer this run's data is on: its trajectory or trajectories, its report, its training page. */
export function relatedLinks(src: ViewerSources, state: RunState): Html[] {
  const input = record(state.input);
  const result = record(state.result);
  const type = state.description.type;
  const links: Html[] = [];
  const attempt = (key: unknown): AttemptRef | undefined => {
    try {
      return typeof key === 'string' ? attemptOfManifest(src.prefix, key) : undefined;
    } catch {
      return undefined;
    }
  };
  const task = record(input.task);
  const ref =
    attempt(result.manifestKey) ??
    attempt(input.manifestKey) ??
    (type === 'rollout' && typeof input.run === 'string' && typeof task.id === 'string' && typeof task.software === 'string' && typeof input.attempt === 'number'
      ? { run: input.run, software: task.software, task: task.id, attempt: input.attempt }
      : undefined);
  if (ref !== undefined) links.push(link(paths.trajectory(ref), 'the trajectory'));
  if ((type === 'rolloutBatch' || type === 'judgeRun' || type === 'judgeEvaluation') && typeof input.run === 'string' && typeof input.software === 'string') {
    links.push(link(paths.trajectories(input.run, input.software), `the trajectories of ${input.run}`));
  }
  if (typeof result.key === 'string') {
    const report = new RegExp(`^${escapeRegExp(src.prefix === '' ? '' : `${src.prefix}/`)}reports/([^/]+)/([^/]+)\\.json$`).exec(result.key);
    const judgeEval = new RegExp(`^${escapeRegExp(src.prefix === '' ? '' : `${src.prefix}/`)}judge-evals/([^/]+)\\.json$`).exec(result.key);
    if (report) links.push(link(paths.evaluation(report[1], report[2]), 'the evaluation report'));
    if (judgeEval) links.push(link(paths.judge(judgeEval[1]), 'the judge evaluation'));
  }
  const report = reportPath(typeof record(result.report).key === 'string' ? (record(result.report).key as string) : '');
  if (report !== undefined) links.push(link(report, 'the evaluation report'));
  if (type === 'specialization' || type === 'generalization') links.push(link(paths.training(state.workflowId), 'the training page'));
  if (type === 'taskGeneration' && typeof result.manifestKey === 'string') links.push(link(paths.object(result.manifestKey), 'the task set manifest'));
  return links;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Activities the server has scheduled and not finished: attempts, last failure, last heartbeat. */
export function pendingActivities(description: WorkflowExecutionDescription): Html {
  const pending = description.raw.pendingActivities ?? [];
  if (pending.length === 0) return html`<p class="muted">None.</p>`;
  const State = temporal.api.enums.v1.PendingActivityState;
  return table(
    ['activity', 'state', 'attempt', 'last failure', 'last heartbeat', 'heartbeat details', 'worker'],
    pending.map((a) => [
      a.activityType?.name ?? '?',
      (State[a.state ?? 0] ?? '').replace('PENDING_ACTIVITY_STATE_', '').toLowerCase(),
      `${a.attempt ?? 1}${a.maximumAttempts ? ` of ${a.maximumAttempts}` : ''}`,
      failureMessage(a.lastFailure),
      a.lastHeartbeatTime ? utc(new Date(Number(a.lastHeartbeatTime.seconds ?? 0) * 1000)) : '',
      a.heartbeatDetails?.payloads?.length ? anyValue(a.heartbeatDetails.payloads.map(decodePayload).at(-1)) : '',
      a.lastWorkerIdentity ?? '',
    ]),
    { id: 'pending-activities' },
  );
}

export async function runPage(src: ViewerSources, workflowId: string): Promise<Html> {
  const state = await readRun(src, workflowId);
  const { description: d, summary } = state;
  const running = d.status.name === 'RUNNING';
  const attrs = d.typedSearchAttributes;
  const closed = d.closeTime ?? undefined;
  const links = relatedLinks(src, state);
  const { counts } = summary;
  return html`<h1 class="run-title">${workflowId}</h1>
${keyValues([
  ['type', d.type],
  ['status', badge(d.status.name)],
  ['software', attrs.get(CODA_SOFTWARE)],
  ['stage', attrs.get(CODA_STAGE)],
  ['run', attrs.get(CODA_RUN)],
  ['round', attrs.get(CODA_ROUND)],
  ['started (UTC)', utc(d.startTime)],
  ['closed (UTC)', utc(closed)],
  ['took', closed ? duration(closed.getTime() - d.startTime.getTime()) : duration(Date.now() - d.startTime.getTime())],
  ['history', `${d.historyLength} events${counts.continuedAsNew ? ', continued as new' : ''}`],
  ['run id', d.runId],
])}
<p class="links">${link(workflowUrl(src.config, workflowId), 'Temporal Web UI', true)}${links.map((l) => html` · ${l}`)}</p>
${
  running
    ? html`<section><h2>Progress <span class="muted live">live</span></h2><div id="progress" data-refresh="${paths.runProgress(workflowId)}">${progressSection(await readProgress(src, workflowId))}</div></section>`
    : html`<section id="result"><h2>${state.failure === undefined ? 'Result' : 'Failure'}</h2>${state.failure === undefined ? renderResult(d.type, state.result, await readResultExtras(src, d.type, state.result)) : pre(state.failure, 'failure')}</section>`
}
<section><h2>Children</h2>${
    summary.children.length === 0
      ? html`<p class="muted">None.</p>`
      : table(['workflow', 'type', 'status'], summary.children.map((c) => [link(paths.run(c.workflowId), c.workflowId), c.type, badge(c.status)]), { id: 'children' })
  }</section>
<section><h2>Pending activities</h2>${pendingActivities(d)}</section>
<section><h2>Failures and retries</h2>
<p>${counts.activities} activities (${counts.activitiesRetried} retried, ${counts.activitiesFailed} failed or timed out), ${counts.localActivities} local activities, ${counts.children} children (${counts.childrenFailed} did not complete), ${counts.timers} timers, ${counts.signals} signals.</p>
${summary.failures.length === 0 ? html`<p class="muted">No failure.</p>` : html`<ul class="failures">${summary.failures.map((f) => html`<li>${f}</li>`)}</ul>`}
</section>
<details><summary>Timeline (${summary.lines.length} entries)</summary>${pre(summary.lines.join('\n'), 'timeline')}</details>
<details><summary>Input</summary>${json(state.input)}</details>`;
}
