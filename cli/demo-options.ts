import { parseArgs } from 'node:util';
import { LEARNABLE_TASKS } from '../apps/kalgebra/seeds';

/**
 * The demo's options (`npm run demo -- OPTIONS`): the scale of a first look by default, the scale
 * whose differences can leave the noise with --full. Every value is checked before anything
 * starts; a bad one is a DemoUsageError naming the option and what was expected (exit 2).
 */

export class DemoUsageError extends Error {}

/** What one run of the demo does. */
export interface DemoOptions {
  /** The software specialized, each with its own specialist. */
  readonly software: readonly string[];
  /** Generated tasks per specialization round, and per software for the generalization. */
  readonly tasks: number;
  /** Specialization rounds per software (each round's Average@k is printed: the learning curve). */
  readonly rounds: number;
  /** k of the evaluations' Average@k and Pass@k. */
  readonly k: number;
  /** Each specialist also evaluated on the other software (the report's cross cells). */
  readonly crossEvaluation: boolean;
  /** The real tasks evaluated, per software (default: all). */
  readonly evaluationTaskIds?: Readonly<Record<string, readonly string[]>>;
  /** The judge's precision floor of each round (default: temporal.yaml's). */
  readonly judgePrecisionFloor?: number;
  /** The planner: the planner double (and the trainer doubles), or the real small planner with the real trainers and server. */
  readonly planner: 'double' | 'small';
  /** Rounds and the generalization also train on the real tasks' rollouts, which they are evaluated on (the small planner solves no generated task). */
  readonly includeSeeds: boolean;
  readonly full: boolean;
  readonly run: string;
}

/**
 * The first look: every stage once, at a scale that ends in minutes on a 2-core machine (docs/setup.md
 * has the times); its report says which differences are within noise, and at k = 1 most are. It
 * evaluates every second KAlgebra task in id order (10 of 20) and the 4 TeXstudio tasks a local
 * host runs. The judge's precision floor is off: a round measures the judge on the base's
 * evaluation rollouts, 4 TeXstudio trajectories at k = 1, too few to stop a round on (one false
 * positive of two approvals is a precision of 0.5); the round still records what it measured.
 */
export const FIRST_LOOK = {
  k: 1,
  tasks: 4,
  crossEvaluation: false,
  evaluationTaskIds: { KAlgebra: ['A-01', 'B-01', 'B-04', 'B-07', 'C-03', 'C-05', 'C-08', 'C-11', 'C-14', 'C-17'] },
  judgePrecisionFloor: 0,
} as const;
/**
 * --full: on the 24 local tasks a local host runs (20 KAlgebra, 4 TeXstudio) with the base planner
 * double's error rate, a planner 15 points better is outside the noise in 80% of simulated
 * evaluations at k = 8 (53% at k = 4; bench/evaluation-noise.ts, docs/evaluation-uncertainty.md),
 * and every specialist is evaluated on every software.
 */
export const FULL = { k: 8, tasks: 4, crossEvaluation: true } as const;

/**
 * --planner small: the real small planner (infra/small-planner/demo.ts) on KAlgebra, evaluated on
 * the 12 local tasks its SFT rows come from, k = 4 (it samples at temperature 1, so a task's
 * attempts differ). It solves no generated task (docs/benchmarks.md, the small planner), so the round
 * and the generalization also train on the real tasks' judged rollouts (includeSeeds): the tasks the
 * report evaluates, which the end of the demo says.
 */
export const SMALL_PLANNER = {
  software: ['KAlgebra'],
  k: 4,
  tasks: 2,
  crossEvaluation: false,
  evaluationTaskIds: { KAlgebra: [...LEARNABLE_TASKS] },
  judgePrecisionFloor: 0,
} as const;

/** What --full took when it was last measured (bench/from-bare.ts; docs/setup.md). */
export const FULL_RUN_MEASURED = 'not yet measured after this change';

export const DEMO_USAGE = `npm run demo -- [--full] [--planner double|small] [--software KAlgebra,TeXstudio] [--rounds N] [--tasks N] [--k N] [--run NAME]
  --full       k = ${FULL.k}, every real task, each specialist evaluated on every software, the judge's precision floor on
  --planner    double (default): the planner and trainer doubles; small: the real small planner, trained by the real
               TRL and LLaMA-Factory and served by LLaMA-Factory's server, on KAlgebra's ${SMALL_PLANNER.evaluationTaskIds.KAlgebra.length} local tasks (installs the trainers)
  --software   the software to specialize (default: every local one)
  --rounds     specialization rounds per software, each evaluated (default 1, at most 20)
  --tasks      generated tasks per round and per software (default ${FIRST_LOOK.tasks})
  --k          attempts per real task in each evaluation (default ${FIRST_LOOK.k}; ${FULL.k} with --full)
  --run        the run's name (default demo-<time>)`;

const positiveInteger = (option: string, text: string | undefined, fallback: number): number => {
  if (text === undefined) return fallback;
  if (!/^[1-9]\d{0,3}$/.test(text)) throw new DemoUsageError(`--${option}: expected an integer from 1 to 9999, got "${text}"`);
  return Number(text);
};

/** The options of `argv` (without node and the script), checked against the software this deployment can specialize. */
export function parseDemoOptions(argv: readonly string[], specializable: readonly string[], now = new Date()): DemoOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { full: { type: 'boolean' }, planner: { type: 'string' }, software: { type: 'string' }, rounds: { type: 'string' }, tasks: { type: 'string' }, k: { type: 'string' }, run: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new DemoUsageError(`${(err as Error).message}\nusage: ${DEMO_USAGE}`);
  }
  const full = values.full === true;
  const planner = plannerOf(values.planner as string | undefined);
  if (planner === 'small') return smallPlannerOptions(values, specializable, now);
  const scale = full ? FULL : FIRST_LOOK;
  const software = typeof values.software === 'string' ? values.software.split(',').map((s) => s.trim()) : [...specializable];
  const unknown = software.filter((s) => !specializable.includes(s));
  if (software.length === 0 || unknown.length > 0 || new Set(software).size !== software.length) {
    throw new DemoUsageError(`--software: expected distinct names among ${specializable.join(', ')}, got "${String(values.software)}"`);
  }
  return { ...counted(values, scale, now), software, crossEvaluation: scale.crossEvaluation, ...(full ? {} : FIRST_LOOK_TASKS), planner, includeSeeds: false, full };
}

type Values = Record<string, string | boolean | undefined>;

const FIRST_LOOK_TASKS = { evaluationTaskIds: FIRST_LOOK.evaluationTaskIds, judgePrecisionFloor: FIRST_LOOK.judgePrecisionFloor };

/** The options every scale counts the same way: rounds, tasks and k (the scale's defaults), and the run's name. */
function counted(values: Values, scale: { readonly tasks: number; readonly k: number }, now: Date): Pick<DemoOptions, 'rounds' | 'tasks' | 'k' | 'run'> {
  return {
    rounds: roundsOf(values.rounds),
    tasks: positiveInteger('tasks', values.tasks as string | undefined, scale.tasks),
    k: positiveInteger('k', values.k as string | undefined, scale.k),
    run: runOf(values.run, now),
  };
}

/** The most rounds the demo runs: each is a round of training and evaluation, minutes apiece. */
const MAX_ROUNDS = 20;

function roundsOf(text: string | boolean | undefined): number {
  const rounds = positiveInteger('rounds', typeof text === 'string' ? text : undefined, 1);
  if (rounds > MAX_ROUNDS) throw new DemoUsageError(`--rounds: expected an integer from 1 to ${MAX_ROUNDS}, got "${String(text)}"`);
  return rounds;
}

function plannerOf(text: string | undefined): DemoOptions['planner'] {
  if (text === undefined || text === 'double' || text === 'small') return text ?? 'double';
  throw new DemoUsageError(`--planner: expected double or small, got "${text}"`);
}

function runOf(text: string | boolean | undefined, now: Date): string {
  const run = typeof text === 'string' ? text : `demo-${now.toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(run)) throw new DemoUsageError(`--run: expected letters, digits, . _ - (at most 64, starting with a letter or digit), got "${run}"`);
  return run;
}

/** --planner small: KAlgebra alone (the software its rows are of), at SMALL_PLANNER's scale; --full does not apply. */
function smallPlannerOptions(values: Values, specializable: readonly string[], now: Date): DemoOptions {
  if (values.full === true) throw new DemoUsageError(`--full: not with --planner small, which evaluates the ${SMALL_PLANNER.evaluationTaskIds.KAlgebra.length} KAlgebra tasks its starting SFT comes from (set --k instead)`);
  const software = typeof values.software === 'string' ? values.software.split(',').map((s) => s.trim()) : [...SMALL_PLANNER.software];
  if (software.join(',') !== 'KAlgebra' || !specializable.includes('KAlgebra')) {
    throw new DemoUsageError(`--software: --planner small specializes KAlgebra alone (its server serves one model at a time, and its rows are KAlgebra's), got "${software.join(',')}"`);
  }
  const { crossEvaluation, evaluationTaskIds, judgePrecisionFloor } = SMALL_PLANNER;
  return {
    ...counted(values, SMALL_PLANNER, now),
    software,
    crossEvaluation,
    evaluationTaskIds,
    judgePrecisionFloor,
    planner: 'small',
    includeSeeds: true,
    full: false,
  };
}
