import { z } from 'zod';
import { KEY_SEGMENT } from '../core/keys';

/**
 * The fields several workflow contracts share (workflows/<family>/contract.ts), with the words a
 * bad value is refused in.
 */

export const runId = z.string().regex(KEY_SEGMENT, 'expected an id of letters, digits, . _ - (at most 128, no "..")');
export const software = z.string().min(1, 'expected a software name such as KAlgebra');
export const taskId = z.string().regex(KEY_SEGMENT, 'expected a task id such as A-01');
export const attempts = z.number({ error: 'expected an integer >= 1' }).int('expected an integer >= 1').min(1, 'expected an integer >= 1').max(64, 'expected at most 64');
export const label = z.string().regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'expected a label (a-z, 0-9, -)');
export const plannerCheckpoint = z.strictObject({
  /** The name the report gives it (a row of the evaluation table). */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected a checkpoint name (letters, digits, . _ -)'),
  /** The model name the planner endpoint serves it under. */
  model: z.string().min(1),
});
