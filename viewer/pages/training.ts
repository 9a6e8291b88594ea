import type { JudgeMeasurement } from '../../core/judge/measurement';
import type { RoundRecord } from '../../workflows/training/contract';
import { attemptOfManifest, checkpointManifestKey, KEY_SEGMENT } from '../../core/keys';
import { COMPARISON_NOTE, formatDifference, formatPoints } from '../../core/report';
import { checkpointManifestSchema, datasetManifestSchema, type CheckpointManifest } from '../../core/training';
import { badRequest, notFound, ViewerError } from '../errors';
import { html, type Html } from '../html';
import { decodePayload } from '../../client/payloads';
import { check, type ViewerSources } from '../sources';
import { paths, reportPath } from '../urls';
import { anyValue, badge, barChart, chart, keyValues, lineChart, link, table, utc } from './parts';
import { formatNumber, lineage, lineageTable, readCheckpoint, type Checkpoint } from './lineage';
import { readDatasetRowsKey } from './run-result';
import { datasetCounts, isDatasetSummary, isReportSummary, reportSummaryTable } from './results';
import { readRuns, RUN_HEADERS, runRow } from './runs';
import { pendingActivities, progressSection, readProgress, readRun, type RunState } from './run';

/**
 * Training runs (workflows/training/): per specialization round the rollouts, judged
 * trajectories, positive steps, the judge's precision and recall on the real tasks and the
 * evaluation of its checkpoint, from the workflow's progress query (running, or failed: a round
 * stopped by the judge's precision floor says so there) or its result and input (closed); the trainer's figures from its checkpoint
 * manifests' `metrics` (what the GPU side reports: loss, reward, GRPO reward statistics) and,
 * while it trains, from the `train` activity's heartbeat; and the checkpoints' lineage.
 */

export async function trainingListPage(src: ViewerSources): Promise<Html> {
  const { rows } = await readRuns(src, { types: ['specialization', 'generalization'] });
  return html`<h1>Training</h1>${
    rows.length === 0
      ? html`<p class="empty">No specialization or generalization yet (<code>coda start specialization --software KAlgebra</code>).</p>`
      : table(RUN_HEADERS, rows.map((e) => runRow(src, e).map((cell, i) => (i === 0 ? link(paths.training(e.workflowId), e.workflowId) : cell))), { id: 'training-runs' })
  }`;
}

const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {});

export interface TrainingView {
  readonly state: RunState;
  readonly progress?: Record<string, unknown>;
  readonly progressError?: string;
  readonly rounds: readonly RoundRecord[];
  /** By checkpoint name. */
  readonly checkpoints: ReadonlyMap<string, Checkpoint>;
  /** The latest checkpoint and its ancestors. */
  readonly lineage: readonly Checkpoint[];
  /** The last heartbeat of a `train` activity in flight (the trainer's step and figures). */
  readonly trainer?: unknown;
  /** Where a generalization's SFT rows are. */
  readonly datasetRowsKey?: string;
}

export async function readTraining(src: ViewerSources, workflowId: string): Promise<TrainingView> {
  const state = await readRun(src, workflowId);
  const type = state.description.type;
  if (type !== 'specialization' && type !== 'generalization') throw badRequest(`workflow ${workflowId}`, `it is a ${type}, not a training run: see ${paths.run(workflowId)}`);
  const running = state.description.status.name === 'RUNNING';
  // A failed run has no result: its last state (a round the judge's floor stopped) is its progress.
  const answer = running || state.description.status.name === 'FAILED' ? await readProgress(src, workflowId) : {};
  const progress = answer.progress === undefined ? undefined : record(answer.progress);
  const result = record(state.result);
  const rounds = ((progress?.history ?? result.history ?? record(record(state.input).carried).history ?? []) as RoundRecord[]).filter((r) => typeof r?.round === 'number');
  const names = [...new Set(rounds.map((r) => r.checkpoint))];
  const checkpoints = new Map<string, Checkpoint>();
  for (const name of names) {
    if (KEY_SEGMENT.test(name)) checkpoints.set(name, await readCheckpoint(src, checkpointManifestKey(src.prefix, name), name));
  }
  const latestKey = (record(result.specialist).checkpointKey ?? record(result.generalist).checkpointKey ?? record(progress?.checkpoint).checkpointKey) as string | undefined;
  const latest = typeof latestKey === 'string' ? await readCheckpoint(src, latestKey, latestKey.split('/').at(-2) ?? latestKey) : [...checkpoints.values()].filter((c) => c.manifest !== undefined).at(-1);
  const train = (state.description.raw.pendingActivities ?? []).find((a) => a.activityType?.name === 'train');
  return {
    state,
    ...(progress === undefined ? {} : { progress }),
    ...(answer.error === undefined ? {} : { progressError: answer.error }),
    rounds,
    checkpoints,
    lineage: latest === undefined ? [] : await lineage(src, latest),
    ...(train?.heartbeatDetails?.payloads?.length ? { trainer: decodePayload(train.heartbeatDetails.payloads.at(-1)) } : {}),
    ...(await readDatasetRowsKey(src, result.dataset).then((key) => (key === undefined ? {} : { datasetRowsKey: key }))),
  };
}

export async function trainingPage(src: ViewerSources, workflowId: string): Promise<Html> {
  return renderTraining(await readTraining(src, workflowId));
}

/** A round's difference with the base in points, marked when within noise: `+15.0 [4.2, 25.1]`. */
const vsBaseCell = (c: NonNullable<RoundRecord['vsBase']>): Html => html`<span class="${c.withinNoise ? 'muted within-noise' : 'outside-noise'}">${formatDifference(c)}</span>`;

/** Average@k and Pass@k per round, with the interval's ends and the base's Average@k when the rounds have them. */
function evaluationSeries(rounds: readonly RoundRecord[]): Array<{ label: string; data: Array<number | null> }> {
  const series = [
    { label: 'Average@k (%)', data: rounds.map((r): number | null => r.averageAtK) },
    { label: 'Pass@k (%)', data: rounds.map((r): number | null => r.passAtK) },
  ];
  if (rounds.some((r) => r.averageInterval !== undefined)) {
    series.push({ label: 'Average@k 95% interval, lower', data: rounds.map((r) => r.averageInterval?.lower ?? null) }, { label: 'Average@k 95% interval, upper', data: rounds.map((r) => r.averageInterval?.upper ?? null) });
  }
  if (rounds.some((r) => r.baseAverageAtK !== undefined)) series.push({ label: 'base Average@k (%)', data: rounds.map((r) => r.baseAverageAtK ?? null) });
  return series;
}

/** Overlapped rounds (specialization.maxStaleness 1) in flight, with their stages: `round 1: training, round 2: rollouts`; nothing for one round. */
function inFlightOf(value: unknown): string | undefined {
  const rounds = Array.isArray(value) ? value.map(record).filter((f) => typeof f.round === 'number' && typeof f.stage === 'string') : [];
  return rounds.length < 2 ? undefined : rounds.map((f) => `round ${String(f.round)}: ${String(f.stage)}`).join(', ');
}

/** The training page from what was read (pure: the unit tests render it from fixtures). */
export function renderTraining(view: TrainingView): Html {
  const { state, progress, rounds } = view;
  const d = state.description;
  const input = record(state.input);
  const result = record(state.result);
  const live = progress ?? {};
  const checkpointOf = (name: string) => view.checkpoints.get(name)?.manifest;
  const figureNames = [...new Set(rounds.flatMap((r) => Object.keys(checkpointOf(r.checkpoint)?.metrics ?? {})))].sort();
  const labels = rounds.map((r) => `round ${r.round}`);
  return html`<h1>${d.type} ${state.workflowId}</h1>
${keyValues([
  ['status', badge(d.status.name)],
  ['run', (live.run ?? result.run ?? input.run) as string | undefined],
  ['software', (live.software ?? result.software ?? input.software) as string | undefined],
  ['round', typeof live.round === 'number' ? `${live.round} of ${String(live.rounds)}` : rounds.length > 0 ? `${rounds.length} done` : undefined],
  ['stage', typeof live.stage === 'string' ? badge(live.stage, 'running') : undefined],
  ['rounds in flight', inFlightOf(live.inFlight)],
  ['planner now', typeof record(live.checkpoint).name === 'string' ? `${String(record(live.checkpoint).name)} (model ${String(record(live.checkpoint).model)})` : undefined],
  ['started (UTC)', utc(d.startTime)],
])}
<p class="links">${link(paths.run(state.workflowId), 'the run page (children, failures, history)')}</p>
${
  d.status.name !== 'RUNNING'
    ? ''
    : html`<section><h2>Progress <span class="muted live">live</span></h2><div id="progress" data-refresh="${paths.runProgress(state.workflowId)}">${progressSection(progress === undefined ? { error: view.progressError ?? 'none' } : { progress })}</div></section>`
}
${view.trainer === undefined ? '' : html`<section id="trainer"><h2>The trainer now <span class="muted">(last heartbeat)</span></h2>${anyValue(view.trainer)}</section>`}
${d.type === 'generalization' ? generalization(live, result, view.datasetRowsKey) : ''}
<section><h2>Rounds</h2>${
    rounds.length === 0
      ? html`<p class="muted">No round finished yet.</p>`
      : html`${table(
          ['round', 'checkpoint', 'tasks', 'rollouts', 'judged', 'positive steps', 'samples', 'Average@k (%) [95% interval]', 'Pass@k (%)', 'base Average@k (%)', 'vs base (points)', 'report', 'trainer figures'],
          rounds.map((r) => [
            r.round,
            r.skipped === undefined ? link(paths.checkpoint(r.checkpoint), r.checkpoint) : html`${r.checkpoint} <span class="muted">(${r.skipped})</span>`,
            r.tasks,
            r.rollouts,
            r.judged,
            r.positiveSteps,
            r.samples,
            `${r.averageAtK.toFixed(2)}${r.averageInterval === undefined ? '' : ` [${formatPoints(r.averageInterval.lower)}, ${formatPoints(r.averageInterval.upper)}]`}`,
            r.passAtK.toFixed(2),
            r.baseAverageAtK?.toFixed(2) ?? '',
            r.vsBase === undefined ? '' : vsBaseCell(r.vsBase),
            reportLink(r.reportKey),
            Object.entries(checkpointOf(r.checkpoint)?.metrics ?? {}).map(([k, v]) => `${k} ${formatNumber(v)}`).join(', '),
          ]),
          { id: 'rounds' },
        )}${rounds.some((r) => r.vsBase !== undefined) ? html`<p class="muted footnote" id="comparison-note">${COMPARISON_NOTE}</p>` : ''}
<div class="charts">${chart('rounds-evaluation-chart', lineChart(labels, evaluationSeries(rounds), 'success rate (%)'), 'Evaluation of each round\u2019s checkpoint on the real tasks')}${chart(
          'rounds-data-chart',
          barChart(labels, [
            { label: 'rollouts', data: rounds.map((r) => r.rollouts) },
            { label: 'judged', data: rounds.map((r) => r.judged) },
            { label: 'positive steps', data: rounds.map((r) => r.positiveSteps) },
          ], 'count'),
          'Rollouts, judged trajectories and positive steps per round',
        )}${
          figureNames.length === 0
            ? ''
            : chart('rounds-trainer-chart', lineChart(labels, figureNames.map((name) => ({ label: name, data: rounds.map((r) => checkpointOf(r.checkpoint)?.metrics[name] ?? null) })), 'value'), 'The trainer\u2019s last figures per round (checkpoint manifests)')
        }</div>`
  }</section>
${d.type === 'specialization' ? judgeSection(rounds, live) : ''}
<section><h2>Checkpoint lineage</h2>${lineageTable(view.lineage)}</section>
<section><h2>Pending activities</h2>${pendingActivities(d)}</section>`;
}

/** A ratio as a percentage; "–" where it is null (nothing to divide by). */
const ratio = (v: number | null | undefined): string => (typeof v === 'number' ? (v * 100).toFixed(1) : '–');

/**
 * The judge measured on each round's real-task rollouts against their evaluators: the final
 * verdict and each judge at each resolution; the round in progress (or stopped) from `progress`.
 */
function judgeSection(rounds: readonly RoundRecord[], live: Record<string, unknown>): Html {
  const current = record(live.judge).final === undefined ? undefined : (live.judge as JudgeMeasurement);
  const measured: Array<{ round: string; judge: JudgeMeasurement }> = [
    ...rounds.flatMap((r) => (r.judge === undefined ? [] : [{ round: String(r.round), judge: r.judge }])),
    ...(current === undefined || rounds.some((r) => r.round === live.round) ? [] : [{ round: `${String(live.round)} (this round)`, judge: current }]),
  ];
  const stopped = typeof live.stopped === 'string' ? live.stopped : undefined;
  const row = (round: string, who: string, resolution: string, a: JudgeMeasurement['final'], floor: string) => [
    round,
    who,
    resolution,
    a.trajectories,
    a.approved,
    a.passed,
    `${a.truePositives} / ${a.falsePositives} / ${a.falseNegatives} / ${a.trueNegatives}`,
    ratio(a.precision),
    ratio(a.recall),
    floor,
  ];
  const labels = measured.map((m) => `round ${m.round}`);
  return html`<section id="judge"><h2>The judge on the real tasks</h2>
<p class="muted">Each round also rolls out the real tasks and judges them; precision (of those approved, the share their evaluators passed) and recall (of those passed, the share approved), in %; – where nothing was approved or nothing passed. A round whose final-verdict precision is below the floor stops before training.</p>
${stopped === undefined ? '' : html`<p id="judge-stopped">${badge('stopped', 'failed')} ${stopped}</p>`}
${
  measured.length === 0
    ? html`<p class="muted">Not measured yet.</p>`
    : html`${table(
        ['round', 'judge', 'resolution', 'trajectories', 'approved', 'passed', 'TP / FP / FN / TN', 'precision (%)', 'recall (%)', 'floor (%)'],
        measured.flatMap((m) => [
          row(m.round, 'final verdict', 'all', m.judge.final, m.judge.floor === 0 ? 'none' : ratio(m.judge.floor)),
          ...m.judge.votes.map((v) => row(m.round, v.judge, v.resolution, v, '')),
        ]),
        { id: 'judge-rounds' },
      )}
<div class="charts">${chart(
        'judge-chart',
        lineChart(labels, [
          { label: 'precision (%)', data: measured.map((m) => (m.judge.final.precision === null ? null : m.judge.final.precision * 100)) },
          { label: 'recall (%)', data: measured.map((m) => (m.judge.final.recall === null ? null : m.judge.final.recall * 100)) },
          { label: 'floor (%)', data: measured.map((m) => m.judge.floor * 100) },
        ], 'final verdict (%)'),
        'The judge\u2019s final verdict against the evaluators of the real tasks, per round',
      )}</div>`
}</section>`;
}


function reportLink(key: string): Html | string {
  const page = reportPath(key);
  return page === undefined ? key : link(page, key.slice(key.lastIndexOf('/') + 1).replace(/\.json$/, ''));
}

function generalization(live: Record<string, unknown>, result: Record<string, unknown>, datasetRowsKey: string | undefined): Html {
  const generalist = record(result.generalist);
  return html`<section><h2>Generalist</h2>${keyValues([
    ['stage', typeof live.stage === 'string' ? live.stage : undefined],
    ['this stage', live.counts === undefined ? undefined : anyValue(live.counts)],
    ['generalist', typeof generalist.name === 'string' ? link(paths.checkpoint(generalist.name), generalist.name) : undefined],
  ])}
${isDatasetSummary(result.dataset) ? html`<h3>SFT dataset</h3>${datasetCounts(result.dataset, 'SFT', datasetRowsKey)}` : ''}
${isReportSummary(result.report) ? html`<h3>Report</h3>${reportSummaryTable(result.report)}` : ''}</section>`;
}

/** One checkpoint: its manifest, its ancestors, and the data it was trained on. */
export async function checkpointPage(src: ViewerSources, name: string): Promise<Html> {
  if (!KEY_SEGMENT.test(name)) throw notFound(`checkpoint ${name}`, 'a checkpoint name is letters, digits, . _ -');
  const key = checkpointManifestKey(src.prefix, name);
  const manifest = await src.parsed(checkpointManifestSchema, key, `checkpoint ${name}`);
  const chain = await lineage(src, { name, key, manifest });
  const dataset = await src.optionalJson(manifest.dataset, `dataset of ${name}`).then((raw) => (raw === undefined ? undefined : check(datasetManifestSchema, raw, `dataset of ${name}`, src.uri(manifest.dataset))));
  const bySoftware = new Map<string, number>();
  for (const s of manifest.sources) bySoftware.set(s.software, (bySoftware.get(s.software) ?? 0) + 1);
  const trajectoryLink = (key: string): Html | string => {
    try {
      const ref = attemptOfManifest(src.prefix, key);
      return link(paths.trajectory(ref), `${ref.run}/${ref.software}/${ref.task}/${ref.attempt}`);
    } catch {
      return key;
    }
  };
  return html`<h1>Checkpoint ${manifest.name}</h1>
${keyValues([
  ['kind', manifest.kind === 'grpo' ? 'GRPO (specialization)' : 'SFT (generalization)'],
  ['created (UTC)', utc(manifest.createdAt)],
  ['from', manifest.parent === undefined ? `the base planner ${manifest.base.model} (${manifest.base.path})` : link(paths.checkpoint(manifest.parent.split('/').at(-2) ?? manifest.parent), manifest.parent.split('/').at(-2))],
  ['training job', manifest.job],
  ['steps', manifest.steps],
  ['weights', `${manifest.lora ? 'LoRA adapter' : 'full weights'} under ${src.uri(`${manifest.filesPrefix}/`)}`],
  ['trainer', manifest.double ? 'the trainer double (the planner did not change)' : 'real'],
  ['dataset', dataset === undefined ? link(paths.object(manifest.dataset), manifest.dataset) : html`${link(paths.object(manifest.dataset), dataset.id)}: ${dataset.rows} ${dataset.kind.toUpperCase()} rows, ${dataset.images.length} images`],
  ['trajectories', [...bySoftware].map(([s, n]) => `${s} ${n}`).join(', ')],
])}
<h2>Figures</h2>${Object.keys(manifest.metrics).length === 0 ? html`<p class="muted">None reported.</p>` : table(['figure', 'value'], Object.entries(manifest.metrics).map(([k, v]) => [k, formatNumber(v)]), { id: 'figures' })}
<h2>Lineage</h2>${lineageTable(chain)}
<h2>Trained on</h2>${table(['trajectory', 'positive steps', 'verdict'], manifest.sources.slice(0, 200).map((s) => [trajectoryLink(s.manifestKey), s.steps.join(', '), link(paths.object(s.verdictKey), 'verdict')]), { id: 'sources' })}
${manifest.sources.length > 200 ? html`<p class="muted">The first 200 of ${manifest.sources.length}.</p>` : ''}`;
}
