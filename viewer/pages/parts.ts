import { html, type Html } from '../html';

/** Pieces every page uses: tables, key/value lists, times, status badges, charts, JSON. */

export const table = (headers: readonly (string | Html)[], rows: ReadonlyArray<ReadonlyArray<unknown>>, attrs: { id?: string; cls?: string } = {}): Html =>
  html`<table${attrs.id === undefined ? '' : html` id="${attrs.id}"`} class="${attrs.cls ?? ''}"><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`,
  )}</tbody></table>`;

export const keyValues = (pairs: ReadonlyArray<readonly [string, unknown]>): Html =>
  html`<dl class="kv">${pairs.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;

/** An ISO time as UTC, to the second. */
export const utc = (time: string | Date | undefined | null): string => (time ? new Date(time).toISOString().replace('T', ' ').slice(0, 19) : '');

export const duration = (ms: number | undefined): string =>
  ms === undefined ? '' : ms < 1000 ? `${Math.round(ms)} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;

export const percent = (value: number | undefined, digits = 2): string => (value === undefined ? '–' : `${value.toFixed(digits)}`);

export const badge = (text: string, kind: string = text.toLowerCase()): Html => html`<span class="badge badge-${kind.replace(/[^a-z0-9-]/g, '-')}">${text}</span>`;

export const link = (href: string, text: unknown, external = false): Html =>
  external ? html`<a href="${href}" target="_blank" rel="noopener">${text}</a>` : html`<a href="${href}">${text}</a>`;

export const pre = (text: string, cls = ''): Html => html`<pre class="${cls}">${text}</pre>`;

export const json = (value: unknown): Html => pre(JSON.stringify(value, null, 2), 'json');

/**
 * A Chart.js chart: the configuration travels in a data attribute and viewer.js hands it to
 * Chart.js unchanged (no drawing code here or there).
 */
export const chart = (id: string, config: unknown, caption: string): Html =>
  html`<figure class="chart"><canvas id="${id}" data-chart="${JSON.stringify(config)}" role="img" aria-label="${caption}"></canvas><figcaption>${caption}</figcaption></figure>`;

/**
 * Ten qualitative colours (Tableau 10) told apart on screen and in print; a chart's series take them
 * in order, so up to ten series never share one.
 */
export const PALETTE: readonly string[] = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** Each planner's colour, in the order given (first seen first): the same planner has the same colour in every chart of a page. */
export const plannerColours = (planners: readonly string[]): ReadonlyMap<string, string> =>
  new Map([...new Set(planners)].map((planner, i) => [planner, PALETTE[i % PALETTE.length]!]));

/** A 95% interval (or any) around a value, in the chart's unit; drawn as a whisker by viewer.js. */
export interface Whisker {
  readonly lower: number;
  readonly upper: number;
}

type Series = ReadonlyArray<{ label: string; data: ReadonlyArray<number | null>; colour?: string; intervals?: ReadonlyArray<Whisker | null> }>;

const chartOptions = (yTitle: string, xTitle?: string) => ({
  animation: false,
  responsive: true,
  maintainAspectRatio: false,
  // A y title in % is a percentage: the whole 0-100 range, so rounds and reports compare at a glance.
  scales: {
    y: { title: { display: true, text: yTitle }, beginAtZero: true, ...(yTitle.endsWith('(%)') ? { max: 100 } : {}) },
    ...(xTitle === undefined ? {} : { x: { title: { display: true, text: xTitle } } }),
  },
});

/** A series' colour (its own, else the palette's by position) and its whiskers, as viewer.js reads them. */
const styled = (s: Series[number], i: number, whisker: 'dark' | 'own') => {
  const colour = s.colour ?? PALETTE[i % PALETTE.length]!;
  return {
    label: s.label,
    data: s.data,
    borderColor: colour,
    backgroundColor: colour,
    ...(s.intervals === undefined || s.intervals.every((w) => w === null) ? {} : { intervals: s.intervals, intervalColor: whisker === 'dark' ? '#333333' : colour }),
  };
};

/** Chart.js line chart of named series over labels (a gap where a value is null), whiskers where a series has intervals. */
export const lineChart = (labels: readonly string[], series: Series, yTitle: string, xTitle?: string): unknown => ({
  type: 'line',
  data: { labels, datasets: series.map((s, i) => ({ ...styled(s, i, 'own'), spanGaps: true, tension: 0.2, pointRadius: 4 })) },
  options: chartOptions(yTitle, xTitle),
});

/** Chart.js bars: one bar per series in each label's group, whiskers where a series has intervals. */
export const barChart = (labels: readonly string[], series: Series, yTitle: string, xTitle?: string): unknown => ({
  type: 'bar',
  data: { labels, datasets: series.map((s, i) => styled(s, i, 'dark')) },
  options: chartOptions(yTitle, xTitle),
});

/**
 * Any JSON value as people read it: scalars in a key/value list, arrays of records as tables whose
 * cells read inline (never JSON). For workflow progress and results, whose shapes differ by type;
 * the JSON itself, where a page offers it, is behind a "raw" toggle.
 */
export function anyValue(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">none</span>`;
  if (typeof value !== 'object') return html`${String(value)}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">none</span>`;
    const records = value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v));
    if (!records) return html`${inline(value)}`;
    const columns = [...new Set(value.flatMap((v) => Object.keys(v as object)))];
    return table(columns, (value as Array<Record<string, unknown>>).map((row) => columns.map((c) => inline(row[c]))));
  }
  return keyValues(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'object' && v !== null ? anyValue(v) : inline(v)]));
}

/** Nesting shown inline before a value is only counted. */
const INLINE_DEPTH = 3;

/**
 * A value inside a cell: scalars as they are, lists joined by `;`, records as `name value` pairs
 * with nested records in parentheses (`KAlgebra 62.5, overall 60`), and past INLINE_DEPTH levels
 * only how many entries there are.
 */
export function inline(value: unknown, depth = 0): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  if (depth >= INLINE_DEPTH) return Array.isArray(value) ? `${value.length} entries` : `${Object.keys(value).length} fields`;
  if (Array.isArray(value)) return value.map((v) => inline(v, depth + 1)).join('; ');
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => (v !== null && typeof v === 'object' ? `${k} (${inline(v, depth + 1)})` : `${k} ${inline(v, depth + 1)}`))
    .join(', ');
}

/** completed of total as a bar, when the progress has both. */
export function progressBar(progress: unknown): Html | undefined {
  const p = progress as { completed?: unknown; total?: unknown };
  if (typeof p?.completed !== 'number' || typeof p.total !== 'number' || p.total <= 0) return undefined;
  const share = Math.min(1, p.completed / p.total);
  return html`<div class="progress" role="progressbar" aria-valuenow="${p.completed}" aria-valuemax="${p.total}"><div style="width:${(share * 100).toFixed(1)}%"></div><span>${p.completed} / ${p.total}</span></div>`;
}
