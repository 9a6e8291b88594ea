/**
 * Success metrics as the CODA paper reports them on ScienceBoard (docs/method.md):
 * - Average@k: the mean success over runs, i.e. per task the share of its runs that succeeded,
 *   averaged over tasks (with k runs of every task: successes / (tasks x k)).
 * - Pass@k: per task the unbiased estimator 1 - C(n-c, k) / C(n, k) of "solved at least once in k
 *   runs" from n >= k runs with c successes, averaged over tasks (with n = k: the share of tasks
 *   solved at least once).
 * - Overall: the mean of the per-software figures, not of all tasks pooled; this is how the paper's
 *   Overall column is computed (21.04 = mean of 20.16, 32.23, 14.71, 17.05).
 * Figures are fractions in [0, 1]; percent() gives the paper's two-decimal percentage.
 */

/** Whether one run of one task succeeded. */
export interface RunRecord {
  readonly software: string;
  readonly taskId: string;
  /** Run number; each (software, task, run) appears once. */
  readonly run: number;
  readonly success: boolean;
  /** The run was not solved because its app was not running at evaluation (core/evaluation.ts). */
  readonly appNotRunning?: boolean;
}

export interface TaskRuns {
  readonly software: string;
  readonly taskId: string;
  readonly runs: number;
  readonly successes: number;
}

export interface Summary {
  readonly taskCount: number;
  /** Total runs counted. */
  readonly runs: number;
  readonly successes: number;
  readonly averageAtK: number;
  readonly passAtK: number;
}

export interface MetricsReport {
  readonly k: number;
  readonly tasks: readonly TaskRuns[];
  readonly bySoftware: Readonly<Record<string, Summary>>;
  readonly overall: Summary;
}

/** successes / total as a fraction; 0 when there is nothing to count. */
export const successRate = (successes: number, total: number): number => (total === 0 ? 0 : successes / total);

/** A fraction as a percentage with two decimals, as papers print it: 1/31 -> 3.23. */
export const percent = (fraction: number): number => Math.round(fraction * 10_000) / 100;

/**
 * The unbiased pass@k estimator for one task (Chen et al. 2021): the probability that k runs drawn
 * from the n observed include a success. Computed as a product to stay exact for large n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || k < 1 || c < 0 || c > n) {
    throw new RangeError(`pass@k needs integers with 0 <= c <= n and k >= 1, got n=${n} c=${c} k=${k}`);
  }
  if (n < k) throw new RangeError(`pass@${k} needs at least ${k} runs, got ${n}`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** Success per task: runs and successes of every (software, task), sorted by software then task. */
export function taskRuns(records: readonly RunRecord[]): TaskRuns[] {
  const byTask = new Map<string, { software: string; taskId: string; runs: Set<number>; successes: number }>();
  for (const record of records) {
    const key = JSON.stringify([record.software, record.taskId]);
    const entry = byTask.get(key) ?? { software: record.software, taskId: record.taskId, runs: new Set<number>(), successes: 0 };
    if (entry.runs.has(record.run)) throw new RangeError(`run ${record.run} of ${record.software}/${record.taskId} is counted twice`);
    entry.runs.add(record.run);
    if (record.success) entry.successes += 1;
    byTask.set(key, entry);
  }
  return [...byTask.values()]
    .map(({ software, taskId, runs, successes }) => ({ software, taskId, runs: runs.size, successes }))
    .sort((a, b) => a.software.localeCompare(b.software) || a.taskId.localeCompare(b.taskId));
}

const mean = (values: readonly number[]): number => (values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length);

function summarizeTasks(tasks: readonly TaskRuns[], k: number): Summary {
  return {
    taskCount: tasks.length,
    runs: tasks.reduce((sum, t) => sum + t.runs, 0),
    successes: tasks.reduce((sum, t) => sum + t.successes, 0),
    averageAtK: mean(tasks.map((t) => successRate(t.successes, t.runs))),
    passAtK: mean(tasks.map((t) => passAtK(t.runs, t.successes, k))),
  };
}

/** Average@k and Pass@k per software and overall. Throws RangeError when a task has fewer than k runs. */
export function summarizeRuns(records: readonly RunRecord[], k: number): MetricsReport {
  const tasks = taskRuns(records);
  const softwares = [...new Set(tasks.map((t) => t.software))];
  const bySoftware = Object.fromEntries(softwares.map((software) => [software, summarizeTasks(tasks.filter((t) => t.software === software), k)]));
  const summaries = Object.values(bySoftware);
  const overall: Summary = {
    taskCount: tasks.length,
    runs: summaries.reduce((sum, s) => sum + s.runs, 0),
    successes: summaries.reduce((sum, s) => sum + s.successes, 0),
    averageAtK: mean(summaries.map((s) => s.averageAtK)),
    passAtK: mean(summaries.map((s) => s.passAtK)),
  };
  return { k, tasks, bySoftware, overall };
}
