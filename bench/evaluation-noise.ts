import { parseArgs } from 'node:util';
import { defaultDrivers } from '../activities/desktop/local/drivers';
import { probeLocalHost } from '../activities/desktop/local/host-facts';
import { TaskLibrary } from '../activities/tasks/library';
import { loadConfig } from '../config/load';
import type { TaskRuns } from '../core/metrics';
import { referencePlanFor, perturbedPlanFor } from '../apps/policies';
import { deploymentCapabilities, probesOf, unmetNeeds } from '../core/requirements';
import { mulberry32 } from '../core/prng';
import type { Task } from '../core/task';
import { averageInterval, compareWithBase, pairTasks, type BootstrapSettings } from '../core/uncertainty';
import { printTable } from './stats';
import { APPS } from '../apps/index';

/**
 * Which k makes a 15-point difference on the local tasks stand out of the noise (issue 18, the
 * demo's default k; docs/evaluation-uncertainty.md). No desktop runs: per-task success
 * probabilities are computed, attempts are simulated, and the report's own statistics
 * (core/uncertainty.ts) are applied to them.
 *
 * The base planner double (doubles/scripted-models/agent-policy.ts) takes each step from the
 * task's perturbed plan with probability errorRate (temporal.yaml dev.scriptedModels), so a task
 * succeeds when none of the steps where the perturbed plan differs from the reference is taken
 * from it: p = (1 − errorRate)^d, d the number of differing steps. A planner 15 points better is
 * modelled as a lower error rate, found by bisection so the mean p over software rises by 15
 * points. For each k, `--simulations` evaluations of both planners on the real KAlgebra and
 * TeXstudio tasks a local host of this machine runs (the others are listed apart by a report, never
 * counted) give the share in which the paired comparison puts the difference outside the
 * noise (power), the share in which two copies of the base do (false alarms), and how often the
 * base's Average@k interval covers its true value.
 *
 *   node build/bench/evaluation-noise.js --simulations 200 --ks 1,2,4,6,8,12
 */

const SOFTWARE = ['KAlgebra', 'TeXstudio'];

/** Steps at which the perturbed plan's action is not the reference's (a longer plan's extra steps count). */
function differingSteps(task: Task, screen: { width: number; height: number }): number {
  const reference = referencePlanFor(task, screen);
  const perturbed = perturbedPlanFor(task, screen);
  if (!reference.replayable || !perturbed.replayable) return Number.POSITIVE_INFINITY;
  const length = Math.max(reference.actions.length, perturbed.actions.length);
  let d = 0;
  for (let i = 0; i < length; i++) if (JSON.stringify(reference.actions[i] ?? null) !== JSON.stringify(perturbed.actions[i] ?? null)) d++;
  return d;
}

interface SimTask {
  readonly software: string;
  readonly taskId: string;
  readonly differing: number;
}

const successProbability = (task: SimTask, errorRate: number): number => (Number.isFinite(task.differing) ? (1 - errorRate) ** task.differing : 0);

/** The mean over software of the mean task success probability (Average@k's expectation). */
function expectedAverage(tasks: readonly SimTask[], errorRate: number): number {
  const bySoftware = SOFTWARE.map((s) => tasks.filter((t) => t.software === s)).filter((g) => g.length > 0);
  return bySoftware.reduce((sum, g) => sum + g.reduce((a, t) => a + successProbability(t, errorRate), 0) / g.length, 0) / bySoftware.length;
}

/** The error rate whose expected Average@k is `target` (bisection; lower error, higher average). */
function errorRateFor(tasks: readonly SimTask[], target: number): number {
  let low = 0;
  let high = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (expectedAverage(tasks, mid) > target) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** k simulated attempts of every task. */
const attempts = (tasks: readonly SimTask[], errorRate: number, k: number, random: () => number): TaskRuns[] =>
  tasks.map((t) => {
    let successes = 0;
    for (let i = 0; i < k; i++) if (random() < successProbability(t, errorRate)) successes++;
    return { software: t.software, taskId: t.taskId, runs: k, successes };
  });

const bySoftware = (items: readonly TaskRuns[]): TaskRuns[][] => SOFTWARE.map((s) => items.filter((i) => i.software === s));
const pairedBySoftware = (row: readonly TaskRuns[], base: readonly TaskRuns[]) => SOFTWARE.map((s) => pairTasks(row, base).filter((p) => p.row.software === s));

/** Power, false alarms and coverage at one k over `simulations` simulated evaluations. */
function simulate(tasks: readonly SimTask[], base: number, better: number, k: number, simulations: number, resamples: number) {
  const random = mulberry32(1_000 + k);
  const truth = expectedAverage(tasks, base);
  let detected = 0;
  let falseAlarms = 0;
  let covered = 0;
  let width = 0;
  for (let i = 0; i < simulations; i++) {
    const settings: BootstrapSettings = { seed: 7_919 * (i + 1), resamples };
    const baseRuns = attempts(tasks, base, k, random);
    const betterRuns = attempts(tasks, better, k, random);
    const again = attempts(tasks, base, k, random);
    const gain = compareWithBase(pairedBySoftware(betterRuns, baseRuns), settings);
    if (!gain.withinNoise && gain.difference > 0) detected++;
    if (!compareWithBase(pairedBySoftware(again, baseRuns), settings).withinNoise) falseAlarms++;
    const interval = averageInterval(bySoftware(baseRuns), settings);
    if (interval.lower <= truth && truth <= interval.upper) covered++;
    width += interval.upper - interval.lower;
  }
  return { detected: detected / simulations, falseAlarms: falseAlarms / simulations, coverage: covered / simulations, width: width / simulations };
}

/** The tasks a local host of this machine runs (the others an evaluation lists apart, never counts), as the batch decides. */
async function locallyRunnable(config: ReturnType<typeof loadConfig>, tasks: readonly Task[]): Promise<Task[]> {
  const facts = await probeLocalHost(config.localApps, probesOf(APPS, tasks), { drivers: Object.keys(defaultDrivers()) });
  const local = deploymentCapabilities({ hosts: [{ id: 'local', kind: 'local' }], localApps: config.localApps }, facts)[0]!;
  return tasks.filter((task) => unmetNeeds(APPS, task, local).length === 0);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { simulations: { type: 'string', default: '200' }, ks: { type: 'string', default: '1,2,3,4,6,8,12' }, resamples: { type: 'string', default: '1000' }, gain: { type: 'string', default: '15' } } });
  const config = loadConfig();
  const errorRate = config.dev.scriptedModels?.errorRate ?? 0;
  const screen = config.hosts.find((h) => h.kind === 'local')?.screen ?? { width: 1920, height: 1080 };
  const all = SOFTWARE.flatMap((software) => new TaskLibrary().load(software));
  const runnable = await locallyRunnable(config, all);
  const tasks: SimTask[] = runnable.map((task) => ({ software: task.type, taskId: task.id, differing: differingSteps(task, screen) }));
  const base = expectedAverage(tasks, errorRate);
  const better = errorRateFor(tasks, base + Number(values.gain) / 100);
  console.log(`${tasks.length} of ${all.length} tasks run on a local host here (${SOFTWARE.map((s) => `${s} ${tasks.filter((t) => t.software === s).length} of ${all.filter((t) => t.type === s).length}`).join(', ')}); differing steps per task: ${tasks.map((t) => t.differing).join(' ')}`);
  console.log(`base: error rate ${errorRate}, expected Average@k ${(base * 100).toFixed(1)}%; +${values.gain} points: error rate ${better.toFixed(3)}, ${(expectedAverage(tasks, better) * 100).toFixed(1)}%`);
  const rows = [['k', 'rollouts per row', 'outside noise (power)', 'false alarms', 'base interval covers truth', 'mean interval width (points)']];
  for (const k of values.ks.split(',').map(Number)) {
    const r = simulate(tasks, errorRate, better, k, Number(values.simulations), Number(values.resamples));
    rows.push([String(k), String(k * tasks.length), `${(r.detected * 100).toFixed(0)}%`, `${(r.falseAlarms * 100).toFixed(1)}%`, `${(r.coverage * 100).toFixed(0)}%`, (r.width * 100).toFixed(1)]);
  }
  printTable(`A +${values.gain}-point planner against the base, ${values.simulations} simulated evaluations per k, ${values.resamples} resamples`, rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
