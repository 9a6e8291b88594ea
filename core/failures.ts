/**
 * The ApplicationFailure types that cross from activities to workflows. Workflows decide on them
 * (retry, re-lease, give up), so both sides name them from here.
 */
export const FAILURES = {
  /** The desktop lease is not valid on that host any more (host restarted, lease expired, desktop lost): lease again. */
  leaseLost: 'LeaseLost',
  /** Every desktop of the host is leased: retried with backoff. */
  noFreeDesktop: 'NoFreeDesktop',
  /** The host that took the lease request runs no desktop of that software: retried, maybe on another host. */
  softwareNotServed: 'SoftwareNotServed',
  /** No desktop can run the task (invalid, or no app for it): the rollout ends. */
  taskUnrunnable: 'TaskUnrunnable',
  /** A model endpoint refused the request (bad request, auth, unknown model): not retried. */
  modelRequest: 'ModelRequestError',
  /** Bad input (unknown software or task, a task file that fails its schema): not retried. */
  validation: 'ValidationError',
  /** A rollout lost its desktop more often than `rollouts.maxResumes` allows. */
  desktopLost: 'DesktopLost',
  /** A trainer exited with an error (retried from the last uploaded checkpoint), or refused its command line (not retried). */
  trainerFailed: 'TrainerFailed',
  /** The planner's server refused a checkpoint (no runtime LoRA loading, an adapter it cannot see, a name taken): not retried. */
  serving: 'ServingError',
} as const;
