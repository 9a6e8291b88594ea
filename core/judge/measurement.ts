import { z } from 'zod';
import { KEY_SEGMENT } from '../keys';

/**
 * The judge measured on rollouts whose evaluators give the truth: its final verdict's and each
 * vote's agreement with them. Measured by an activity, carried in a specialization's round records.
 */

const count = z.number().int().min(0);
/** A ratio, null when there is nothing to divide by (core/judge/calibration.ts). */
const ratio = z.number().min(0).max(1).nullable();
const agreement = z.strictObject({
  trajectories: count,
  approved: count,
  passed: count,
  truePositives: count,
  falsePositives: count,
  falseNegatives: count,
  trueNegatives: count,
  precision: ratio,
  recall: ratio,
});

/** The judge measured on a round's rollouts of the real tasks against their evaluators. */
export const judgeMeasurementSchema = z.strictObject({
  /** The real-task rollout run it was measured on. */
  run: z.string().regex(KEY_SEGMENT, 'expected an id of letters, digits, . _ - (at most 128, no "..")'),
  /** The run's judgePrecisionFloor (0: none). */
  floor: z.number().min(0).max(1),
  /** The final, voted verdict. */
  final: agreement,
  /** Each judge at each resolution, on the trajectories it voted on there. */
  votes: z.array(agreement.extend({ judge: z.string().min(1), resolution: z.enum(['low', 'high']) })),
});

export type JudgeMeasurement = z.output<typeof judgeMeasurementSchema>;
