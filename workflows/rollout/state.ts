import type { Lease } from '../../activities/desktop/pool';
import type { AttemptRef } from '../../core/keys';
import type { Decision, RolloutProgress, StepSummary, StopSummary, TaskEntry } from '../../core/rollout-types';
import type { RolloutSettings } from './contract';

/**
 * What a rollout knows as it goes, in one place: the desktop session and the episode loop both
 * change it, the progress query and the manifest read it. Workflow state, so a resume on a fresh
 * desktop continues from it and every step appears exactly once in the manifest.
 */
export interface RolloutState {
  status: RolloutProgress['status'];
  steps: StepSummary[];
  /** A decision whose action is not performed yet (kept across a host loss, dropped on restart). */
  pending: { decision: Decision; startedAt: string; seen: string } | undefined;
  stop: StopSummary | undefined;
  /** The lease held now; none between a host loss and the next lease. */
  lease: Lease | undefined;
  /** Host losses survived so far. */
  resumes: number;
  /** The desktop the rollout last held, for the manifest and the models (its screen size). */
  desktop: { host: string; id: string; screen: { width: number; height: number } };
  /** The screen the next decision sees. */
  screenshotKey: string;
  initialScreenshotKey: string;
}

/** The attempt a rollout makes: what it runs, and with which settings. */
export interface RolloutTarget {
  readonly task: TaskEntry;
  readonly ref: AttemptRef;
  readonly settings: RolloutSettings;
}

export const newRolloutState = (): RolloutState => ({
  status: 'starting',
  steps: [],
  pending: undefined,
  stop: undefined,
  lease: undefined,
  resumes: 0,
  desktop: { host: '', id: '', screen: { width: 0, height: 0 } },
  screenshotKey: '',
  initialScreenshotKey: '',
});
