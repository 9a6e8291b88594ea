import type { ViewerError } from '../errors';
import { html, type Html } from '../html';
import { paths } from '../urls';

export type Section = 'runs' | 'evaluation' | 'training' | 'judge' | 'none';

export interface PageOptions {
  readonly title: string;
  readonly section: Section;
  readonly body: Html;
  /** Chart.js is loaded only by pages with plots. */
  readonly charts?: boolean;
  /** The Temporal Web UI, linked from every page. */
  readonly webUi: string;
}

const NAV: ReadonlyArray<readonly [Section, string, string]> = [
  ['runs', 'Runs', paths.runs()],
  ['evaluation', 'Evaluation', paths.evaluation()],
  ['training', 'Training', paths.training()],
  ['judge', 'Judge', paths.judge()],
];

export function page(opts: PageOptions): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · coda</title>
<link rel="stylesheet" href="/static/viewer.css">
${opts.charts ? html`<script src="/static/chart.umd.js" defer></script>` : ''}
<script src="/static/viewer.js" defer></script>
</head>
<body>
<header class="top"><a class="brand" href="/">coda</a><nav>${NAV.map(
    ([section, label, href]) => html`<a href="${href}"${section === opts.section ? html` class="active" aria-current="page"` : ''}>${label}</a>`,
  )}<a href="${opts.webUi}" target="_blank" rel="noopener">Temporal Web UI</a></nav></header>
<main>
${opts.body}
</main>
</body>
</html>
`;
}

/** The page of a failure: what was not found, what is damaged and how, or which service is down. */
export function errorPage(err: ViewerError, webUi: string): Html {
  return page({
    title: err.title,
    section: 'none',
    webUi,
    body: html`<section class="error" data-status="${err.status}"><h1>${err.title}</h1><p>${err.message}</p>${
      err.details.length === 0 ? '' : html`<ul class="problems">${err.details.map((d) => html`<li><code>${d}</code></li>`)}</ul>`
    }<p><a href="/">Back to the runs</a></p></section>`,
  });
}

/**
 * The page of a 401: what to send, and nothing else (no navigation, style or script, which the
 * browser could not load without the login either).
 */
export function loginNeededPage(err: ViewerError): Html {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${err.title} · coda</title></head>
<body><main><section class="error" data-status="${err.status}"><h1>${err.title}</h1><p>${err.message}</p></section></main></body>
</html>
`;
}
