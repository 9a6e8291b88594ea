import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/**
 * A workflow's event history as people read it (`coda history <id>`): a timeline of what happened
 * — activities with their durations and attempts, local activities, child workflows, timers,
 * signals, continue-as-new, the end — and a summary with every failure. Temporal records only the
 * last attempt of an activity, so retries show as the attempt number it ended on.
 */

type Event = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

/** A protobuf int64 (a Long, or a number once converted) as a number. */
const num = (value: unknown): number =>
  typeof value === 'number' ? value : typeof (value as { toNumber?: unknown })?.toNumber === 'function' ? (value as { toNumber(): number }).toNumber() : Number(value ?? 0);
const toMs = (time: Event['eventTime']): number => (time ? num(time.seconds) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : 0);
const seconds = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
const failureText = (failure: temporal.api.failure.v1.IFailure | null | undefined): string => {
  let current = failure;
  while (current?.cause) current = current.cause;
  return (current?.message ?? failure?.message ?? 'unknown failure').split('\n')[0]!.slice(0, 300);
};

/** A local activity's type and attempt from its marker (the SDK stores them as JSON in `data`). */
function localActivityOf(event: Event): { type: string; attempt: number } | undefined {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  const payload = marker.details?.data?.payloads?.[0];
  if (!payload) return { type: 'local activity', attempt: 1 };
  try {
    const data = defaultPayloadConverter.fromPayload<{ activity_type?: string; attempt?: number }>(payload);
    return { type: data.activity_type ?? 'local activity', attempt: data.attempt ?? 1 };
  } catch {
    return { type: 'local activity', attempt: 1 };
  }
}

/** A child workflow the history started, and how it ended so far. */
export interface ChildWorkflow {
  readonly workflowId: string;
  readonly type: string;
  status: 'running' | 'completed' | 'failed' | 'timed out' | 'terminated' | 'canceled' | 'already started';
}

export interface HistorySummary {
  readonly lines: string[];
  readonly failures: string[];
  /** In start order (a child started again after a retry appears again). */
  readonly children: ChildWorkflow[];
  readonly counts: {
    readonly events: number;
    readonly activities: number;
    readonly activitiesRetried: number;
    readonly activitiesFailed: number;
    readonly localActivities: number;
    readonly children: number;
    readonly childrenFailed: number;
    readonly timers: number;
    readonly signals: number;
    readonly continuedAsNew: boolean;
  };
  readonly status: string;
}

/** What reading a history keeps as it goes: the summary so far, and the open activities, children and timers by id. */
interface Reading {
  readonly start: number;
  readonly lines: string[];
  readonly failures: string[];
  readonly started: ChildWorkflow[];
  readonly activities: Map<number, { type: string; time: number; attempt: number }>;
  readonly children: Map<number, { id: string; time: number; child: ChildWorkflow }>;
  readonly timers: Map<string, number>;
  readonly counts: { -readonly [K in keyof HistorySummary['counts']]: HistorySummary['counts'][K] };
  status: string;
}

/** What one kind of event adds to the reading; `time` is the event's, in ms. */
type Read = (r: Reading, event: Event, time: number) => void;

/** A timeline line at the event's time since the start. */
const say = (r: Reading, event: Event, text: string): void => void r.lines.push(`${((toMs(event.eventTime) - r.start) / 1000).toFixed(2).padStart(8)}s  ${text}`);
/** A timeline line that is a failure too. */
const fail = (r: Reading, event: Event, text: string): void => {
  say(r, event, text);
  r.failures.push(text);
};

const activityEnded: Read = (r, event, time) => {
  const a = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes ?? event.activityTaskCanceledEventAttributes;
  const entry = r.activities.get(num(a?.scheduledEventId));
  const how = event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED ? 'failed' : event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT ? 'timed out' : 'canceled';
  const why = 'failure' in (a ?? {}) ? failureText((a as { failure?: temporal.api.failure.v1.IFailure | null }).failure) : '';
  r.counts.activitiesFailed += 1;
  fail(r, event, `activity ${entry?.type ?? '?'}: ${how} after ${seconds(time - (entry?.time ?? time))}, attempt ${entry?.attempt ?? 1}${why ? `: ${why}` : ''}`);
};

const ACTIVITY_EVENTS: Partial<Record<temporal.api.enums.v1.EventType, Read>> = {
  [EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]: (r, event, time) => {
    r.activities.set(num(event.eventId), { type: event.activityTaskScheduledEventAttributes?.activityType?.name ?? '?', time, attempt: 1 });
    r.counts.activities += 1;
  },
  [EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED]: (r, event) => {
    const a = event.activityTaskStartedEventAttributes;
    const entry = r.activities.get(num(a?.scheduledEventId));
    if (entry) entry.attempt = a?.attempt ?? 1;
  },
  [EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED]: (r, event, time) => {
    const entry = r.activities.get(num(event.activityTaskCompletedEventAttributes?.scheduledEventId));
    if (!entry) return;
    if (entry.attempt > 1) r.counts.activitiesRetried += 1;
    say(r, event, `activity ${entry.type}: completed in ${seconds(time - entry.time)}${entry.attempt > 1 ? ` on attempt ${entry.attempt}` : ''}`);
  },
  [EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED]: activityEnded,
  [EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT]: activityEnded,
  [EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED]: activityEnded,
  [EventType.EVENT_TYPE_MARKER_RECORDED]: (r, event) => {
    const local = localActivityOf(event);
    if (!local) return;
    r.counts.localActivities += 1;
    say(r, event, `local activity ${local.type}${local.attempt > 1 ? ` (attempt ${local.attempt})` : ''}`);
  },
};

const childEnded: Read = (r, event) => {
  const a =
    event.childWorkflowExecutionFailedEventAttributes ??
    event.childWorkflowExecutionTimedOutEventAttributes ??
    event.childWorkflowExecutionTerminatedEventAttributes ??
    event.childWorkflowExecutionCanceledEventAttributes;
  const child = r.children.get(num(a?.initiatedEventId));
  const why = event.childWorkflowExecutionFailedEventAttributes ? `: ${failureText(event.childWorkflowExecutionFailedEventAttributes.failure)}` : '';
  const how = EventType[event.eventType!]!.replace('EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_', '').toLowerCase().replace('_', ' ');
  if (child) child.child.status = how as ChildWorkflow['status'];
  r.counts.childrenFailed += 1;
  fail(r, event, `child ${child?.id ?? '?'} ${how}${why}`);
};

const CHILD_EVENTS: Partial<Record<temporal.api.enums.v1.EventType, Read>> = {
  [EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED]: (r, event, time) => {
    const a = event.startChildWorkflowExecutionInitiatedEventAttributes;
    const child: ChildWorkflow = { workflowId: a?.workflowId ?? '?', type: a?.workflowType?.name ?? '?', status: 'running' };
    r.started.push(child);
    r.children.set(num(event.eventId), { id: child.workflowId, time, child });
    r.counts.children += 1;
    say(r, event, `child ${a?.workflowId} (${a?.workflowType?.name}) started`);
  },
  [EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED]: (r, event) => {
    const a = event.startChildWorkflowExecutionFailedEventAttributes;
    const child = r.children.get(num(a?.initiatedEventId))?.child;
    if (child) child.status = 'already started';
    say(r, event, `child ${a?.workflowId} could not start: it exists already (its result is awaited instead)`);
  },
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED]: (r, event, time) => {
    const child = r.children.get(num(event.childWorkflowExecutionCompletedEventAttributes?.initiatedEventId));
    if (child) child.child.status = 'completed';
    say(r, event, `child ${child?.id ?? '?'} completed in ${seconds(time - (child?.time ?? time))}`);
  },
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED]: childEnded,
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT]: childEnded,
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED]: childEnded,
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED]: childEnded,
};

/** A line that ends the run with `status`. */
const ends =
  (status: string, text: (event: Event) => string, failed = false): Read =>
  (r, event) => {
    r.status = status;
    (failed ? fail : say)(r, event, text(event));
  };

const WORKFLOW_EVENTS: Partial<Record<temporal.api.enums.v1.EventType, Read>> = {
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]: (r, event) => {
    const a = event.workflowExecutionStartedEventAttributes;
    say(r, event, `started ${a?.workflowType?.name ?? ''} on ${a?.taskQueue?.name ?? '?'}${a?.attempt && a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}`);
  },
  [EventType.EVENT_TYPE_TIMER_STARTED]: (r, event, time) => {
    r.timers.set(event.timerStartedEventAttributes?.timerId ?? '', time);
    r.counts.timers += 1;
  },
  [EventType.EVENT_TYPE_TIMER_FIRED]: (r, event, time) => {
    const id = event.timerFiredEventAttributes?.timerId ?? '';
    say(r, event, `timer ${id} fired after ${seconds(time - (r.timers.get(id) ?? time))}`);
  },
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]: (r, event) => {
    r.counts.signals += 1;
    say(r, event, `signal ${event.workflowExecutionSignaledEventAttributes?.signalName}`);
  },
  [EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]: (r, event) => fail(r, event, `workflow task failed: ${failureText(event.workflowTaskFailedEventAttributes?.failure)}`),
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW]: (r, event) => {
    r.counts.continuedAsNew = true;
    r.status = 'CONTINUED_AS_NEW';
    say(r, event, `continued as new (run ${event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId})`);
  },
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED]: ends('COMPLETED', () => 'completed'),
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED]: ends('FAILED', (e) => `failed: ${failureText(e.workflowExecutionFailedEventAttributes?.failure)}`, true),
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED]: ends('TERMINATED', (e) => `terminated: ${e.workflowExecutionTerminatedEventAttributes?.reason ?? ''}`),
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED]: ends('CANCELED', () => 'canceled'),
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT]: ends('TIMED_OUT', () => 'timed out'),
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED]: (r, event) => say(r, event, 'cancellation requested'),
};

/** Every kind of event the summary reads; the others (workflow tasks that went well, for one) add nothing. */
const READS: Partial<Record<temporal.api.enums.v1.EventType, Read>> = { ...ACTIVITY_EVENTS, ...CHILD_EVENTS, ...WORKFLOW_EVENTS };

export function summarizeHistory(events: readonly Event[]): HistorySummary {
  const r: Reading = {
    start: toMs(events[0]?.eventTime),
    lines: [],
    failures: [],
    started: [],
    activities: new Map(),
    children: new Map(),
    timers: new Map(),
    counts: { events: events.length, activities: 0, activitiesRetried: 0, activitiesFailed: 0, localActivities: 0, children: 0, childrenFailed: 0, timers: 0, signals: 0, continuedAsNew: false },
    status: 'RUNNING',
  };
  for (const event of events) if (event.eventType != null) READS[event.eventType]?.(r, event, toMs(event.eventTime));
  return { lines: r.lines, failures: r.failures, children: r.started, counts: r.counts, status: r.status };
}

/** The summary as text: the timeline (its first `limit` lines and the last, when longer), the counts and the failures. */
export function formatHistory(workflowId: string, summary: HistorySummary, limit = 60): string {
  const { counts } = summary;
  const timeline =
    summary.lines.length <= limit
      ? summary.lines
      : [...summary.lines.slice(0, limit - 5), `         ... ${summary.lines.length - limit + 1} more (coda history --all) ...`, ...summary.lines.slice(-4)];
  return [
    `${workflowId}: ${summary.status}, ${counts.events} events`,
    ...timeline,
    '',
    `activities: ${counts.activities} (${counts.activitiesRetried} retried, ${counts.activitiesFailed} failed or timed out); local activities: ${counts.localActivities}; ` +
      `child workflows: ${counts.children} (${counts.childrenFailed} did not complete); timers: ${counts.timers}; signals: ${counts.signals}; continued as new: ${counts.continuedAsNew ? 'yes' : 'no'}`,
    ...(summary.failures.length === 0 ? ['failures: none'] : ['failures:', ...summary.failures.map((f) => `  - ${f}`)]),
  ].join('\n');
}
