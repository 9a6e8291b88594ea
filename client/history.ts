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

export function summarizeHistory(events: readonly Event[]): HistorySummary {
  const start = toMs(events[0]?.eventTime);
  const at = (event: Event): string => `${((toMs(event.eventTime) - start) / 1000).toFixed(2).padStart(8)}s`;
  const lines: string[] = [];
  const failures: string[] = [];
  const scheduled = new Map<number, { type: string; time: number; attempt: number }>();
  const children = new Map<number, { id: string; type: string; time: number; child: ChildWorkflow }>();
  const started: ChildWorkflow[] = [];
  const timers = new Map<string, number>();
  const counts = { events: events.length, activities: 0, activitiesRetried: 0, activitiesFailed: 0, localActivities: 0, children: 0, childrenFailed: 0, timers: 0, signals: 0, continuedAsNew: false };
  let status = 'RUNNING';
  const activityEnd = (id: unknown) => scheduled.get(num(id));
  const childEnd = (id: unknown) => children.get(num(id));

  for (const event of events) {
    const time = toMs(event.eventTime);
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
        const a = event.workflowExecutionStartedEventAttributes;
        lines.push(`${at(event)}  started ${a?.workflowType?.name ?? ''} on ${a?.taskQueue?.name ?? '?'}${a?.attempt && a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}`);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const a = event.activityTaskScheduledEventAttributes;
        scheduled.set(num(event.eventId), { type: a?.activityType?.name ?? '?', time, attempt: 1 });
        counts.activities += 1;
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const a = event.activityTaskStartedEventAttributes;
        const entry = activityEnd(a?.scheduledEventId);
        if (entry) entry.attempt = a?.attempt ?? 1;
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const entry = activityEnd(event.activityTaskCompletedEventAttributes?.scheduledEventId);
        if (entry) {
          if (entry.attempt > 1) counts.activitiesRetried += 1;
          lines.push(`${at(event)}  activity ${entry.type}: completed in ${seconds(time - entry.time)}${entry.attempt > 1 ? ` on attempt ${entry.attempt}` : ''}`);
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const a = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes ?? event.activityTaskCanceledEventAttributes;
        const entry = activityEnd(a?.scheduledEventId);
        const how = event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED ? 'failed' : event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT ? 'timed out' : 'canceled';
        const why = 'failure' in (a ?? {}) ? failureText((a as { failure?: temporal.api.failure.v1.IFailure | null }).failure) : '';
        counts.activitiesFailed += 1;
        const line = `activity ${entry?.type ?? '?'}: ${how} after ${seconds(time - (entry?.time ?? time))}, attempt ${entry?.attempt ?? 1}${why ? `: ${why}` : ''}`;
        lines.push(`${at(event)}  ${line}`);
        failures.push(line);
        break;
      }
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        const local = localActivityOf(event);
        if (local) {
          counts.localActivities += 1;
          lines.push(`${at(event)}  local activity ${local.type}${local.attempt > 1 ? ` (attempt ${local.attempt})` : ''}`);
        }
        break;
      }
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
        const a = event.startChildWorkflowExecutionInitiatedEventAttributes;
        const child: ChildWorkflow = { workflowId: a?.workflowId ?? '?', type: a?.workflowType?.name ?? '?', status: 'running' };
        started.push(child);
        children.set(num(event.eventId), { id: child.workflowId, type: child.type, time, child });
        counts.children += 1;
        lines.push(`${at(event)}  child ${a?.workflowId} (${a?.workflowType?.name}) started`);
        break;
      }
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED: {
        const a = event.startChildWorkflowExecutionFailedEventAttributes;
        const child = childEnd(a?.initiatedEventId)?.child;
        if (child) child.status = 'already started';
        lines.push(`${at(event)}  child ${a?.workflowId} could not start: it exists already (its result is awaited instead)`);
        break;
      }
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED: {
        const child = childEnd(event.childWorkflowExecutionCompletedEventAttributes?.initiatedEventId);
        if (child) child.child.status = 'completed';
        lines.push(`${at(event)}  child ${child?.id ?? '?'} completed in ${seconds(time - (child?.time ?? time))}`);
        break;
      }
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED: {
        const a =
          event.childWorkflowExecutionFailedEventAttributes ??
          event.childWorkflowExecutionTimedOutEventAttributes ??
          event.childWorkflowExecutionTerminatedEventAttributes ??
          event.childWorkflowExecutionCanceledEventAttributes;
        const child = childEnd(a?.initiatedEventId);
        const why = event.childWorkflowExecutionFailedEventAttributes ? `: ${failureText(event.childWorkflowExecutionFailedEventAttributes.failure)}` : '';
        const how = EventType[event.eventType!]!.replace('EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_', '').toLowerCase().replace('_', ' ');
        if (child) child.child.status = how as ChildWorkflow['status'];
        counts.childrenFailed += 1;
        const line = `child ${child?.id ?? '?'} ${how}${why}`;
        lines.push(`${at(event)}  ${line}`);
        failures.push(line);
        break;
      }
      case EventType.EVENT_TYPE_TIMER_STARTED: {
        const a = event.timerStartedEventAttributes;
        timers.set(a?.timerId ?? '', time);
        counts.timers += 1;
        break;
      }
      case EventType.EVENT_TYPE_TIMER_FIRED: {
        const id = event.timerFiredEventAttributes?.timerId ?? '';
        lines.push(`${at(event)}  timer ${id} fired after ${seconds(time - (timers.get(id) ?? time))}`);
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
        counts.signals += 1;
        lines.push(`${at(event)}  signal ${event.workflowExecutionSignaledEventAttributes?.signalName}`);
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED: {
        const line = `workflow task failed: ${failureText(event.workflowTaskFailedEventAttributes?.failure)}`;
        lines.push(`${at(event)}  ${line}`);
        failures.push(line);
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: {
        counts.continuedAsNew = true;
        status = 'CONTINUED_AS_NEW';
        lines.push(`${at(event)}  continued as new (run ${event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId})`);
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
        status = 'COMPLETED';
        lines.push(`${at(event)}  completed`);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: {
        status = 'FAILED';
        const line = `failed: ${failureText(event.workflowExecutionFailedEventAttributes?.failure)}`;
        lines.push(`${at(event)}  ${line}`);
        failures.push(line);
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
        status = 'TERMINATED';
        lines.push(`${at(event)}  terminated: ${event.workflowExecutionTerminatedEventAttributes?.reason ?? ''}`);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
        status = 'CANCELED';
        lines.push(`${at(event)}  canceled`);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
        status = 'TIMED_OUT';
        lines.push(`${at(event)}  timed out`);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
        lines.push(`${at(event)}  cancellation requested`);
        break;
      default:
        break;
    }
  }
  return { lines, failures, children: started, counts, status };
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
