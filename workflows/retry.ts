import type { RetryPolicy } from '@temporalio/common';

/**
 * The retry policy of the orchestrator's short activities that read and write storage (listing
 * trajectories, writing reports and summaries, staging task sets): ten attempts spread over about
 * two and a half minutes ride out an S3 hiccup or a restarting MinIO, and a store that stays down
 * still fails the workflow with its error.
 */
export const STORAGE_ACTIVITY_RETRY: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 };
