import { z } from 'zod';
import type { JudgePlan } from './voting';

/** A judge plan as stored in verdict files (judges with their models), validated when read back. */
export const judgePlanSchema: z.ZodType<JudgePlan> = z
  .strictObject({
    lowResolutionVotes: z.number().int().min(0).max(32),
    highResolutionVotes: z.number().int().min(0).max(32),
    judges: z.array(z.strictObject({ name: z.string().min(1), model: z.string().min(1) })).min(1),
    temperatures: z.strictObject({
      first: z.number().min(0),
      repeat: z.number().min(0),
      repeatTopP: z.number().gt(0).max(1),
    }),
  })
  .refine((plan) => plan.lowResolutionVotes + plan.highResolutionVotes > 0, 'a judge plan needs at least one vote');
