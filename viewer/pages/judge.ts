import { z } from 'zod';
import { JUDGE_EVALUATION_SCHEMA } from '../../core/judge/evaluation-report';
import { judgeCostSchema } from '../../core/judge/verdict-file';
import { judgeEvalKeyBase, KEY_SEGMENT } from '../../core/keys';
import { notFound, ViewerError } from '../errors';
import { html, type Html } from '../html';
import { check, type ViewerSources } from '../sources';
import { paths } from '../urls';
import { barChart, chart, keyValues, link, table, utc } from './parts';

/**
 * Judge evaluations (judge-evals/{id}.json, core/judge/evaluation-report.ts, the paper's table 2):
 * precision and recall of each strategy against the evaluators, and the calls and pixels the
 * low-resolution early exit saved against the all-high-resolution plan with the same votes.
 */

const confusion = z.object({ truePositives: z.number(), falsePositives: z.number(), falseNegatives: z.number(), trueNegatives: z.number(), precision: z.number(), recall: z.number() });
const reportSchema = z.object({
  schema: z.literal(JUDGE_EVALUATION_SCHEMA),
  id: z.string(),
  run: z.string(),
  software: z.string(),
  createdAt: z.string(),
  trajectories: z.number().int(),
  passed: z.number().int(),
  rows: z.array(z.object({ label: z.string(), title: z.string(), judged: z.number().int(), confusion, cost: judgeCostSchema })),
  savings: z.array(z.object({ label: z.string(), against: z.string(), trajectories: z.number().int(), multiResolution: judgeCostSchema, allHigh: judgeCostSchema, identical: z.number().int() })),
});
type Report = z.output<typeof reportSchema>;

const root = (prefix: string): string => `${prefix === '' ? '' : `${prefix}/`}judge-evals/`;
const pct = (fraction: number): string => (fraction * 100).toFixed(1);
const per = (value: number, n: number, digits = 2): string => (n === 0 ? '–' : (value / n).toFixed(digits));
const saved = (multi: number, high: number): string => (high === 0 ? '–' : `${(((high - multi) / high) * 100).toFixed(1)}%`);

async function readReport(src: ViewerSources, key: string, id: string): Promise<Report> {
  return check(reportSchema, await src.json(key, `judge evaluation ${id}`), `judge evaluation ${id}`, src.uri(key));
}

export async function judgeListPage(src: ViewerSources): Promise<Html> {
  const keys = (await src.list(root(src.prefix))).filter((k) => k.endsWith('.json')).sort().reverse();
  const rows = await Promise.all(
    keys.map(async (key) => {
      const id = key.slice(root(src.prefix).length, -'.json'.length);
      try {
        const r = await readReport(src, key, id);
        const best = [...r.rows].sort((a, b) => b.confusion.precision - a.confusion.precision)[0];
        return [link(paths.judge(id), id), r.run, r.software, utc(r.createdAt), `${r.trajectories} (${r.passed} passed)`, best === undefined ? '' : `${best.title}: ${pct(best.confusion.precision)} / ${pct(best.confusion.recall)}`];
      } catch (err) {
        if (!(err instanceof ViewerError) || err.status !== 422) throw err;
        return [link(paths.judge(id), id), 'damaged', '', '', '', ''];
      }
    }),
  );
  return html`<h1>Judge evaluations</h1>
${rows.length === 0 ? html`<p class="empty">None yet (<code>coda judge-eval --run RUN --software SOFTWARE</code>).</p>` : table(['id', 'run', 'software', 'created (UTC)', 'trajectories', 'most precise: precision / recall (%)'], rows, { id: 'judge-evals' })}`;
}

export async function judgePage(src: ViewerSources, id: string): Promise<Html> {
  if (!KEY_SEGMENT.test(id)) throw notFound(`judge evaluation ${id}`, 'an id is letters, digits, . _ -');
  const key = `${judgeEvalKeyBase(src.prefix, id)}.json`;
  const r = await readReport(src, key, id);
  const title = (label: string): string => r.rows.find((row) => row.label === label)?.title ?? label;
  const labels = r.rows.map((row) => row.title);
  return html`<h1>Judge evaluation ${r.id}</h1>
${keyValues([
  ['trajectories', html`${r.trajectories} of ${link(paths.trajectories(r.run, r.software), `${r.run} ${r.software}`)}, ${r.passed} passed by their evaluators (the truth)`],
  ['created (UTC)', utc(r.createdAt)],
  ['files', html`${link(paths.object(key), 'json')} · ${link(paths.object(key.replace(/\.json$/, '.md')), 'markdown')}`],
])}
<h2>Precision and recall</h2>
${table(
  ['strategy', 'precision (%)', 'recall (%)', 'TP / FP / FN / TN', 'judged', 'calls per trajectory', 'images per trajectory', 'megapixels per trajectory'],
  r.rows.map((row) => {
    const c = row.confusion;
    return [row.title, pct(c.precision), pct(c.recall), `${c.truePositives} / ${c.falsePositives} / ${c.falseNegatives} / ${c.trueNegatives}`, row.judged, per(row.cost.calls, row.judged), per(row.cost.images, row.judged, 1), per(row.cost.pixels / 1e6, row.judged)];
  }),
  { id: 'strategies' },
)}
<div class="charts">${chart(
  'precision-chart',
  barChart(labels, [
    { label: 'precision (%)', data: r.rows.map((row) => Math.round(row.confusion.precision * 1000) / 10) },
    { label: 'recall (%)', data: r.rows.map((row) => Math.round(row.confusion.recall * 1000) / 10) },
  ], 'precision and recall (%)'),
  'Precision and recall per strategy',
)}${chart(
  'cost-chart',
  barChart(labels, [
    { label: 'calls per trajectory', data: r.rows.map((row) => (row.judged === 0 ? null : row.cost.calls / row.judged)) },
    { label: 'megapixels per trajectory', data: r.rows.map((row) => (row.judged === 0 ? null : row.cost.pixels / 1e6 / row.judged)) },
  ], 'per trajectory'),
  'What each strategy cost',
)}</div>
<h2>What the low-resolution early exit saved</h2>
${
  r.savings.length === 0
    ? html`<p class="muted">No multi-resolution strategy was compared with its all-high-resolution twin.</p>`
    : table(
        ['strategy', 'against', 'trajectories', 'calls', 'images', 'megapixels', 'high-resolution megapixels', 'identical verdicts'],
        r.savings.map((s) => [
          title(s.label),
          title(s.against),
          s.trajectories,
          `${s.multiResolution.calls} vs ${s.allHigh.calls} (${saved(s.multiResolution.calls, s.allHigh.calls)} saved)`,
          `${s.multiResolution.images} vs ${s.allHigh.images} (${saved(s.multiResolution.images, s.allHigh.images)} saved)`,
          `${(s.multiResolution.pixels / 1e6).toFixed(1)} vs ${(s.allHigh.pixels / 1e6).toFixed(1)} (${saved(s.multiResolution.pixels, s.allHigh.pixels)} saved)`,
          `${(s.multiResolution.highResolutionPixels / 1e6).toFixed(1)} vs ${(s.allHigh.highResolutionPixels / 1e6).toFixed(1)} (${saved(s.multiResolution.highResolutionPixels, s.allHigh.highResolutionPixels)} saved)`,
          `${s.identical} of ${s.trajectories}`,
        ]),
        { id: 'savings' },
      )
}`;
}
