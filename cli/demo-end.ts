import type { LoadedConfig } from '../config/load';
import { checkpointPrefix, runPrefix } from '../core/keys';
import { noiseSummary, type EvaluationReport } from '../core/report';
import type { ObjectStore } from '../activities/storage/object-store';
import { generatedRun, roundId } from '../workflows/names';
import type { GeneralizationResult, SpecializationResult } from '../workflows/training/progress';
import { paths, reportPageUrl, viewerUrl } from '../viewer/urls';
import { workflowUrl } from '../client/connection';
import { forTerminal } from './terminal';
import { FULL, FULL_RUN_MEASURED, type DemoOptions } from './demo-options';
import { APPS } from '../apps/index';

/**
 * The end of the demo: the report (the paper's table 1 layout, with intervals), what its own tests
 * say of the noise, the command for a table whose differences can leave it, where the data is, and
 * the links a person opens next: the viewer's report page (its chart) and the Temporal Web UI.
 */
export interface DemoEnd {
  readonly config: LoadedConfig;
  readonly store: ObjectStore;
  readonly options: DemoOptions;
  readonly specialists: readonly SpecializationResult[];
  readonly general: GeneralizationResult;
  readonly generalizationId: string;
}

export async function printDemoEnd(end: DemoEnd): Promise<void> {
  const { store, options, general } = end;
  const report = await store.getJson<EvaluationReport>(general.report.key);
  // The report holds task ids and planner names: text others wrote (cli/terminal.ts).
  console.log(forTerminal(`\n${(await store.get(general.report.markdownKey)).toString('utf8')}`));
  console.log(forTerminal(noiseSummary(APPS, report) ?? 'The report has no base row: nothing is compared.'));
  if (options.planner === 'small') {
    for (const line of SMALL_PLANNER_LINES) console.log(line);
  } else {
    if (!options.full) console.log(fullRunHint(report, options));
    console.log('The planner and the trainers here are test doubles: the trainers run the real command lines,');
    console.log('reward service and checkpoints, and train the learning planner double (doubles/learning-planner/),');
    console.log('a preference between the right and the wrong step per situation, not a real planner.');
  }
  console.log('');
  for (const line of whereLines(end)) console.log(line);
}

/** What --planner small ran, and what it does not show. */
const SMALL_PLANNER_LINES = [
  'The planner here is the real small planner (a Qwen2.5-VL of 262,016 parameters built from the run seed),',
  'served by the real LLaMA-Factory API server, trained by the real TRL (GRPO, a LoRA adapter) and the real',
  "LLaMA-Factory (the generalist's SFT, full weights); its base is an SFT on these same local tasks.",
  'It solves no generated task, so the round and the generalization also trained on its judged rollouts of',
  'the real tasks the report evaluates (includeSeeds): the rows show the pipeline moving a real network, not',
  'what it carries over. The executor, the judges and the task generator are the scripted doubles.',
];

/** Whether any difference with the base left the noise, by the report's own tests, and the command for the larger run. */
function fullRunHint(report: EvaluationReport, options: DemoOptions): string {
  const compared = report.rows.flatMap((row) => (row.vsBase === undefined ? [] : [row.vsBase.overall, ...Object.values(row.vsBase.bySoftware)]));
  const outside = compared.filter((c) => !c.withinNoise).length;
  const verdict =
    compared.length === 0 ? 'Nothing was compared with the base.' : `${outside} of the ${compared.length} differences with the base ${outside === 1 ? 'is' : 'are'} outside the noise at k = ${options.k}.`;
  return `${verdict} For a table whose differences can leave it: npm run demo -- --full (k = ${FULL.k} on every real task, every specialist on every software; ${FULL_RUN_MEASURED}).`;
}

function whereLines(end: DemoEnd): string[] {
  const { config, store, specialists, general } = end;
  const prefix = config.storage.prefix;
  const trained = specialists.filter((s) => s.specialist.checkpointKey !== undefined);
  return [
    `report        ${store.uri(general.report.key)}`,
    ...specialists.map((s) => `trajectories  ${store.uri(`${runPrefix(prefix, generatedRun(roundId(s.run, 1)), s.software)}/`)}`),
    `checkpoints   ${store.uri(`${checkpointPrefix(prefix, general.generalist.name)}/manifest.json`)} (lineage: parent, dataset, trajectories)`,
    ...trained.map((s) => `              ${store.uri(`${checkpointPrefix(prefix, s.specialist.name)}/manifest.json`)}`),
    '',
    `the report's page (its chart)  ${reportPageUrl(config, general.report.key)}`,
    `the generalist's lineage       ${viewerUrl(config)}${paths.checkpoint(general.generalist.name)}`,
    `the run in the viewer          ${viewerUrl(config)}${paths.run(end.generalizationId)}`,
    `Temporal Web UI                ${workflowUrl(config, end.generalizationId)}`,
  ];
}
