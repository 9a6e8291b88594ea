import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { parseOrThrow } from '../../core/validation';
import { CANDIDATES } from './situation';

/**
 * TEST DOUBLE: the learning planner's parameters. No GPU and no weights exist here, so the planner
 * double is a softmax policy over the candidate thoughts of each situation (situation.ts): one
 * pair of logits per situation, `[reference, perturbed]`. The base planner is the scripted
 * planner of the dev stack: in every situation it writes the perturbed step with probability
 * `errorRate` (dev.scriptedModels.errorRate). The trainer doubles change the logits — GRPO's
 * policy gradient on rewards from the real reward service (doubles/trainers/openrlhf.ts), SFT's
 * maximum likelihood on the pooled rows (doubles/trainers/llamafactory.ts) — and write them into
 * every checkpoint and model folder they save (POLICY_FILE); the model server double loads them
 * through vLLM's runtime LoRA route (the adapter's folder) and samples from them.
 *
 * So whatever the pipeline feeds its trainers decides what the planner does next: right labels
 * make it better, wrong labels or wrong rewards do not, and an unserved checkpoint changes nothing.
 * It is compared with no real run: a real planner learns over tokens, not over two candidates.
 */

export const POLICY_FILE = 'planner-policy.json';
export const POLICY_SCHEMA = 'coda.double.planner-policy/v1';

const policyFileSchema = z.strictObject({
  schema: z.literal(POLICY_SCHEMA),
  note: z.string(),
  /** The base planner's share of perturbed steps: the logits of a situation never trained. */
  errorRate: z.number().min(0).max(1),
  /** Logits per situation key, in CANDIDATES order. */
  logits: z.record(z.string(), z.tuple([z.number(), z.number()])),
  /** Optimizer updates made since the base. */
  updates: z.number().int().min(0),
});

export type PolicyFile = z.output<typeof policyFileSchema>;

/** A choice in a situation, and its advantage (GRPO) or weight (SFT). */
export interface Choice {
  readonly key: string;
  readonly candidate: number;
  readonly weight: number;
}

const EPSILON = 1e-6;

export class LearningPolicy {
  private readonly logits: Map<string, [number, number]>;
  private updateCount: number;

  private constructor(readonly errorRate: number, logits: Iterable<[string, [number, number]]> = [], updates = 0) {
    this.logits = new Map(logits);
    this.updateCount = updates;
  }

  /** The base planner: the perturbed step at `errorRate` in every situation. */
  static base(errorRate: number): LearningPolicy {
    return new LearningPolicy(errorRate);
  }

  /** The policy saved in `dir`, or undefined when the folder holds none (not a double's model). */
  static read(dir: string): LearningPolicy | undefined {
    const file = path.join(dir, POLICY_FILE);
    if (!existsSync(file)) return undefined;
    return LearningPolicy.fromJSON(JSON.parse(readFileSync(file, 'utf8')), file);
  }

  static fromJSON(raw: unknown, where: string): LearningPolicy {
    const saved = parseOrThrow(policyFileSchema, raw, where);
    return new LearningPolicy(saved.errorRate, Object.entries(saved.logits), saved.updates);
  }

  get updates(): number {
    return this.updateCount;
  }

  toJSON(): PolicyFile {
    return {
      schema: POLICY_SCHEMA,
      note: 'TEST DOUBLE planner policy (doubles/learning-planner/policy.ts): logits over candidate thoughts per situation',
      errorRate: this.errorRate,
      logits: Object.fromEntries([...this.logits].sort(([a], [b]) => a.localeCompare(b))),
      updates: this.updateCount,
    };
  }

  write(dir: string): void {
    writeFileSync(path.join(dir, POLICY_FILE), JSON.stringify(this.toJSON(), null, 2));
  }

  /** A situation's logits: trained ones, else the base planner's. */
  logitsOf(key: string): [number, number] {
    const trained = this.logits.get(key);
    if (trained !== undefined) return [...trained];
    const rate = Math.min(1 - EPSILON, Math.max(EPSILON, this.errorRate));
    return [0, Math.log(rate / (1 - rate))];
  }

  probabilities(key: string): [number, number] {
    const [a, b] = this.logitsOf(key);
    const top = Math.max(a, b);
    const ea = Math.exp(a - top);
    const eb = Math.exp(b - top);
    return [ea / (ea + eb), eb / (ea + eb)];
  }

  /** A candidate drawn from the situation's softmax with `random` in [0, 1). */
  sample(key: string, random: () => number): number {
    return random() < this.probabilities(key)[0] ? 0 : 1;
  }

  /**
   * One gradient step on the weighted log-likelihood of `choices`, averaged over them: for each,
   * d log softmax(z)[c] / dz = onehot(c) - softmax(z). With GRPO's advantages as weights this is
   * the policy gradient (REINFORCE with the group baseline); with weight 1 it is SFT's maximum
   * likelihood. Returns the mean weighted log-likelihood before the step (minus the loss).
   */
  step(choices: readonly Choice[], learningRate: number): number {
    if (choices.length === 0) return 0;
    const grads = new Map<string, [number, number]>();
    let objective = 0;
    for (const { key, candidate, weight } of choices) {
      const p = this.probabilities(key);
      objective += weight * Math.log(Math.max(p[candidate] as number, 1e-12));
      const g = grads.get(key) ?? [0, 0];
      for (let j = 0; j < CANDIDATES.length; j++) g[j] = (g[j] as number) + weight * ((j === candidate ? 1 : 0) - (p[j] as number));
      grads.set(key, g);
    }
    for (const [key, g] of grads) {
      const z = this.logitsOf(key);
      this.logits.set(key, [z[0] + (learningRate * g[0]) / choices.length, z[1] + (learningRate * g[1]) / choices.length]);
    }
    this.updateCount += 1;
    return objective / choices.length;
  }

  /** KL(this || other) averaged over the situations either has trained: how far training moved the policy. */
  klFrom(other: LearningPolicy): number {
    const keys = new Set([...this.logits.keys(), ...other.logits.keys()]);
    if (keys.size === 0) return 0;
    let total = 0;
    for (const key of keys) {
      const p = this.probabilities(key);
      const q = other.probabilities(key);
      total += p.reduce((sum, pj, j) => sum + (pj > 0 ? pj * Math.log(pj / Math.max(q[j] as number, 1e-12)) : 0), 0);
    }
    return total / keys.size;
  }
}
