import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { temporal } from '@temporalio/proto';
import { formatHistory, summarizeHistory } from '../../client/history';

type Event = temporal.api.history.v1.IHistoryEvent;
const T = temporal.api.enums.v1.EventType;
const REPO = path.resolve(__dirname, '..', '..', '..');

/** An event `ms` after the start; `id` is its event id. Its int64 fields are plain numbers, as a converted history holds them. */
const at = (id: number, ms: number, eventType: temporal.api.enums.v1.EventType, attributes: Record<string, unknown>): Event =>
  ({ eventId: id, eventTime: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 }, eventType, ...attributes }) as unknown as Event;

/** A history with one event of every kind the summary reads, ending in a failure. */
const failedBatch: Event[] = [
  at(1, 0, T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, { workflowExecutionStartedEventAttributes: { workflowType: { name: 'rolloutBatch' }, taskQueue: { name: 'orchestrator' }, attempt: 2 } }),
  at(2, 100, T.EVENT_TYPE_MARKER_RECORDED, {
    markerRecordedEventAttributes: { markerName: 'core_local_activity', details: { data: { payloads: [defaultPayloadConverter.toPayload({ activity_type: 'resolveBatchInput', attempt: 2 })] } } },
  }),
  at(3, 200, T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, { activityTaskScheduledEventAttributes: { activityType: { name: 'stageTaskSet' } } }),
  at(4, 300, T.EVENT_TYPE_ACTIVITY_TASK_STARTED, { activityTaskStartedEventAttributes: { scheduledEventId: 3, attempt: 3 } }),
  at(5, 1700, T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, { activityTaskCompletedEventAttributes: { scheduledEventId: 3 } }),
  at(6, 2000, T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, { activityTaskScheduledEventAttributes: { activityType: { name: 'judge' } } }),
  at(7, 2500, T.EVENT_TYPE_ACTIVITY_TASK_FAILED, { activityTaskFailedEventAttributes: { scheduledEventId: 6, failure: { message: 'outer', cause: { message: 'the judge said nothing\nsecond line' } } } }),
  at(8, 2600, T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, { activityTaskScheduledEventAttributes: { activityType: { name: 'leaseDesktop' } } }),
  at(9, 3600, T.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, { activityTaskTimedOutEventAttributes: { scheduledEventId: 8, failure: { message: 'activity StartToClose timeout' } } }),
  at(10, 4000, T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, { startChildWorkflowExecutionInitiatedEventAttributes: { workflowId: 'rollout-a', workflowType: { name: 'rollout' } } }),
  at(11, 4000, T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, { startChildWorkflowExecutionInitiatedEventAttributes: { workflowId: 'rollout-b', workflowType: { name: 'rollout' } } }),
  at(12, 4100, T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED, { startChildWorkflowExecutionFailedEventAttributes: { workflowId: 'rollout-b', initiatedEventId: 11 } }),
  at(13, 6000, T.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED, { childWorkflowExecutionCompletedEventAttributes: { initiatedEventId: 10 } }),
  at(14, 6000, T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, { startChildWorkflowExecutionInitiatedEventAttributes: { workflowId: 'rollout-c', workflowType: { name: 'rollout' } } }),
  at(15, 7000, T.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED, { childWorkflowExecutionFailedEventAttributes: { initiatedEventId: 14, failure: { message: 'no desktop' } } }),
  at(16, 7000, T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, { startChildWorkflowExecutionInitiatedEventAttributes: { workflowId: 'rollout-d', workflowType: { name: 'rollout' } } }),
  at(17, 8000, T.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT, { childWorkflowExecutionTimedOutEventAttributes: { initiatedEventId: 16 } }),
  at(18, 8000, T.EVENT_TYPE_TIMER_STARTED, { timerStartedEventAttributes: { timerId: '1' } }),
  at(19, 18000, T.EVENT_TYPE_TIMER_FIRED, { timerFiredEventAttributes: { timerId: '1' } }),
  at(20, 18500, T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, { workflowExecutionSignaledEventAttributes: { signalName: 'stopAfterRound' } }),
  at(21, 19000, T.EVENT_TYPE_WORKFLOW_TASK_FAILED, { workflowTaskFailedEventAttributes: { failure: { message: 'nondeterminism' } } }),
  at(22, 19500, T.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED, {}),
  at(23, 20000, T.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, { workflowExecutionFailedEventAttributes: { failure: { message: 'the batch failed' } } }),
];

describe('a workflow history as people read it (client/history.ts, no stack needed)', () => {
  it('reads every kind of event: activities with durations and attempts, local activities, children, timers, signals, failures', () => {
    const summary = summarizeHistory(failedBatch);
    assert.deepEqual(summary.lines, [
      '    0.00s  started rolloutBatch on orchestrator (attempt 2)',
      '    0.10s  local activity resolveBatchInput (attempt 2)',
      '    1.70s  activity stageTaskSet: completed in 1.5 s on attempt 3',
      '    2.50s  activity judge: failed after 500 ms, attempt 1: the judge said nothing',
      '    3.60s  activity leaseDesktop: timed out after 1.0 s, attempt 1: activity StartToClose timeout',
      '    4.00s  child rollout-a (rollout) started',
      '    4.00s  child rollout-b (rollout) started',
      '    4.10s  child rollout-b could not start: it exists already (its result is awaited instead)',
      '    6.00s  child rollout-a completed in 2.0 s',
      '    6.00s  child rollout-c (rollout) started',
      '    7.00s  child rollout-c failed: no desktop',
      '    7.00s  child rollout-d (rollout) started',
      '    8.00s  child rollout-d timed out',
      '   18.00s  timer 1 fired after 10.0 s',
      '   18.50s  signal stopAfterRound',
      '   19.00s  workflow task failed: nondeterminism',
      '   19.50s  cancellation requested',
      '   20.00s  failed: the batch failed',
    ]);
    assert.equal(summary.status, 'FAILED');
    assert.deepEqual(summary.counts, { events: 23, activities: 3, activitiesRetried: 1, activitiesFailed: 2, localActivities: 1, children: 4, childrenFailed: 2, timers: 1, signals: 1, continuedAsNew: false });
    assert.deepEqual(
      summary.children.map((c) => [c.workflowId, c.status]),
      [['rollout-a', 'completed'], ['rollout-b', 'already started'], ['rollout-c', 'failed'], ['rollout-d', 'timed out']],
    );
    assert.deepEqual(summary.failures, [
      'activity judge: failed after 500 ms, attempt 1: the judge said nothing',
      'activity leaseDesktop: timed out after 1.0 s, attempt 1: activity StartToClose timeout',
      'child rollout-c failed: no desktop',
      'child rollout-d timed out',
      'workflow task failed: nondeterminism',
      'failed: the batch failed',
    ]);
  });

  it('says how a run ended: terminated with its reason, canceled, timed out', () => {
    const start = at(1, 0, T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, { workflowExecutionStartedEventAttributes: { workflowType: { name: 'rollout' }, taskQueue: { name: 'q' } } });
    const ended = (type: temporal.api.enums.v1.EventType, attributes: Record<string, unknown> = {}) => summarizeHistory([start, at(2, 1000, type, attributes)]);
    const terminated = ended(T.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, { workflowExecutionTerminatedEventAttributes: { reason: 'testing' } });
    assert.deepEqual([terminated.status, terminated.lines[1]], ['TERMINATED', '    1.00s  terminated: testing']);
    assert.deepEqual([ended(T.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED).status, ended(T.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED).lines[1]], ['CANCELED', '    1.00s  canceled']);
    assert.deepEqual([ended(T.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT).status, ended(T.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT).lines[1]], ['TIMED_OUT', '    1.00s  timed out']);
    assert.equal(summarizeHistory([start]).status, 'RUNNING');
  });

  it('reads a recorded specialization round: its activities, its children and its continue-as-new', () => {
    const file = path.join(REPO, 'test', 'fixtures', 'histories', 'specialization-dfa3fa9-round1.json');
    const summary = summarizeHistory(historyFromJSON(JSON.parse(readFileSync(file, 'utf8'))).events ?? []);
    assert.equal(summary.status, 'CONTINUED_AS_NEW');
    assert.deepEqual({ ...summary.counts, events: 0 }, { events: 0, activities: 4, activitiesRetried: 0, activitiesFailed: 0, localActivities: 1, children: 6, childrenFailed: 0, timers: 0, signals: 0, continuedAsNew: true });
    assert.ok(summary.children.every((c) => c.status === 'completed'));
    const text = formatHistory('spec', summary, 8);
    assert.match(text, /^spec: CONTINUED_AS_NEW, \d+ events\n {4}0\.00s {2}started specialization on pipeline-orchestrator\n/);
    assert.match(text, /\.\.\. \d+ more \(coda history --all\) \.\.\./);
    assert.match(text, /continued as new \(run [0-9a-f-]+\)\n\nactivities: 4 \(0 retried, 0 failed or timed out\); local activities: 1; child workflows: 6 \(0 did not complete\); timers: 0; signals: 0; continued as new: yes\nfailures: none$/);
  });
});
