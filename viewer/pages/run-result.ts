import type { RoundRecord } from '../../workflows/training/contract';
import { checkpointManifestKey, KEY_SEGMENT } from '../../core/keys';
import { formatDifference, formatPoints } from '../../core/report';
import { datasetManifestSchema } from '../../core/training';
import { html, type Html } from '../html';
import type { ViewerSources } from '../sources';
import { paths, reportPath } from '../urls';
import { lineage, lineageTable, readCheckpoint, type Checkpoint } from './lineage';
import { anyValue, json, link, table } from './parts';
import { datasetCounts, isDatasetSummary, isReportSummary, reportSummaryTable } from './results';

/**
 * A finished workflow's result on its run page: a training run's checkpoint as its lineage, its
 * dataset as counts with a link to its rows and its report as a table with a link to its chart; an
 * evaluation's report likewise; any other result as lists and tables. The JSON itself is behind a
 * "raw" toggle, never in a cell.
 */

/** What the result names and the page reads from S3 besides: lineages by checkpoint name, the dataset's rows key. */
export interface ResultExtras {
  readonly lineages: ReadonlyMap<string, readonly Checkpoint[]>;
  readonly datasetRowsKey?: string;
}

const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {});

/** The checkpoint a training run's result names: the generalist, or the specialist once a round trained one. */
function trainedCheckpoint(type: string, result: Record<string, unknown>): string | undefined {
  const checkpoint = record(type === 'generalization' ? result.generalist : type === 'specialization' ? result.specialist : undefined);
  return typeof checkpoint.name === 'string' && typeof checkpoint.checkpointKey === 'string' && KEY_SEGMENT.test(checkpoint.name) ? checkpoint.name : undefined;
}

export async function readResultExtras(src: ViewerSources, type: string, result: unknown): Promise<ResultExtras> {
  const lineages = new Map<string, readonly Checkpoint[]>();
  const name = trainedCheckpoint(type, record(result));
  if (name !== undefined) lineages.set(name, await lineage(src, await readCheckpoint(src, checkpointManifestKey(src.prefix, name), name)));
  const datasetRowsKey = type === 'generalization' ? await readDatasetRowsKey(src, record(result).dataset) : undefined;
  return { lineages, ...(datasetRowsKey === undefined ? {} : { datasetRowsKey }) };
}

/** Where a dataset's rows are (its manifest's dataKey); undefined when the manifest cannot be read. */
export async function readDatasetRowsKey(src: ViewerSources, dataset: unknown): Promise<string | undefined> {
  if (!isDatasetSummary(dataset)) return undefined;
  const manifest = await src.optionalJson(dataset.key, 'the dataset').catch(() => undefined);
  const parsed = manifest === undefined ? undefined : datasetManifestSchema.safeParse(manifest);
  return parsed?.success ? parsed.data.dataKey : undefined;
}

/** The result section's body (pure: the unit tests render it from fixtures). */
export function renderResult(type: string, result: unknown, extras: ResultExtras): Html {
  return html`${readable(type, result, extras)}<details class="raw"><summary>raw result (JSON)</summary>${json(result)}</details>`;
}

function readable(type: string, result: unknown, extras: ResultExtras): Html {
  const r = record(result);
  if (type === 'evaluation' && isReportSummary(result)) return html`<h3>Report</h3>${reportSummaryTable(result)}`;
  if (type === 'generalization') return generalization(r, extras);
  if (type === 'specialization') return specialization(r, extras);
  return anyValue(result);
}

const lineageOf = (title: string, name: string | undefined, extras: ResultExtras, id: string): Html =>
  name === undefined
    ? html`<h3>${title}</h3><p class="muted">None trained: the planner is the base planner.</p>`
    : html`<h3>${title} ${link(paths.checkpoint(name), name)}</h3>${lineageTable(extras.lineages.get(name) ?? [], id)}`;

function generalization(r: Record<string, unknown>, extras: ResultExtras): Html {
  return html`${lineageOf('Generalist', trainedCheckpoint('generalization', r), extras, 'generalist-lineage')}
${isDatasetSummary(r.dataset) ? html`<h3>SFT dataset</h3>${datasetCounts(r.dataset, 'SFT', extras.datasetRowsKey)}` : ''}
${isReportSummary(r.report) ? html`<h3>Report</h3>${reportSummaryTable(r.report)}` : ''}`;
}

function specialization(r: Record<string, unknown>, extras: ResultExtras): Html {
  const rounds = (Array.isArray(r.history) ? r.history : []).filter((h): h is RoundRecord => typeof record(h).round === 'number');
  const reportLink = (key: string): Html | string => {
    const page = reportPath(key);
    return page === undefined ? '' : link(page, 'the report');
  };
  return html`${lineageOf('Specialist', trainedCheckpoint('specialization', r), extras, 'specialist-lineage')}
<h3>Rounds</h3>${table(
    ['round', 'checkpoint', 'Average@k (%) [95% interval]', 'vs base (points)', 'report'],
    rounds.map((round) => [
      round.round,
      round.skipped === undefined ? link(paths.checkpoint(round.checkpoint), round.checkpoint) : `${round.checkpoint} (${round.skipped})`,
      `${round.averageAtK.toFixed(2)}${round.averageInterval === undefined ? '' : ` [${formatPoints(round.averageInterval.lower)}, ${formatPoints(round.averageInterval.upper)}]`}`,
      round.vsBase === undefined ? '' : formatDifference(round.vsBase),
      reportLink(round.reportKey),
    ]),
    { id: 'result-rounds' },
  )}`;
}
