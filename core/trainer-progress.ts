import { pythonToJson } from './python-literal';

/**
 * Progress as the trainers report it, read without running them:
 * - OpenRLHF 0.11 logs `✨ Global step N: {...}` after every training step (ppo_trainer.py, fit): the
 *   step's status dict printed by Python, so single-quoted keys and `nan`, `inf`, `None`, `True`
 *   where JSON has none of them. Ray prefixes the line with the actor's name and pid.
 *   infra/trainers/trl_grpo.py prints TRL's log of each step the same way (without the sparkles).
 * - LLaMA-Factory 0.9.5 appends one JSON object per logging step to `output_dir/trainer_log.jsonl`
 *   (train/callbacks.py, LogCallback.on_log): `current_steps`, `total_steps`, `loss`, `lr`, `epoch`,
 *   `percentage`, `elapsed_time`, `remaining_time`, and a few optional figures. Its last line is
 *   the end-of-training summary (the Trainer's final log: no `loss`, no `lr`), the only line after
 *   a resume with no steps left.
 */

export interface TrainerProgress {
  readonly step: number;
  readonly totalSteps?: number;
  /** The numeric figures of the line (losses, rewards, learning rate...); others are dropped. */
  readonly metrics: Readonly<Record<string, number>>;
}

const GLOBAL_STEP = /Global step (\d+): (\{.*\})\s*$/;
/** JSON strings (kept as they are) or Python's non-finite float reprs (read as null). */
const STRING_OR_NON_FINITE = /"(?:[^"\\]|\\.)*"|(?<=[:,[]\s*)-?(?:nan|inf)(?=\s*[,}\]])/g;

const numbersOf = (record: Record<string, unknown>, skip: readonly string[] = []): Record<string, number> =>
  Object.fromEntries(Object.entries(record).filter((entry): entry is [string, number] => !skip.includes(entry[0]) && typeof entry[1] === 'number' && Number.isFinite(entry[1])));

const objectOf = (json: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** An OpenRLHF `Global step` line, or undefined for any other line. */
export function parseGlobalStepLine(line: string): TrainerProgress | undefined {
  const match = GLOBAL_STEP.exec(line);
  if (match === null) return undefined;
  const status = objectOf(pythonToJson(match[2] as string).replace(STRING_OR_NON_FINITE, (token) => (token.startsWith('"') ? token : 'null')));
  return status === undefined ? undefined : { step: Number(match[1]), metrics: numbersOf(status) };
}

/** One line of LLaMA-Factory's trainer_log.jsonl, or undefined when it is not one. */
export function parseTrainerLogLine(line: string): TrainerProgress | undefined {
  const record = objectOf(line);
  const step = record?.current_steps;
  if (record === undefined || typeof step !== 'number' || !Number.isInteger(step)) return undefined;
  const total = record.total_steps;
  return {
    step,
    ...(typeof total === 'number' && Number.isInteger(total) ? { totalSteps: total } : {}),
    metrics: numbersOf(record, ['current_steps', 'total_steps']),
  };
}

/**
 * Where a trainer_log.jsonl stands: the step of its last line (the summary included) and the
 * figures of its last line with a `loss`, on top of the last line's own (epoch, percentage...);
 * the last line's figures alone when no line has a loss. Undefined when no line is one.
 */
export function trainerLogProgress(text: string): TrainerProgress | undefined {
  const lines = text.split('\n').flatMap((line) => parseTrainerLogLine(line) ?? []);
  const last = lines.at(-1);
  if (last === undefined) return undefined;
  const withLoss = [...lines].reverse().find((p) => 'loss' in p.metrics);
  return { ...last, metrics: { ...last.metrics, ...withLoss?.metrics } };
}
