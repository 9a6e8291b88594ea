import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { workflowUrl } from '../../client/connection';
import { describeAction } from '../../core/actions';
import { LearningPolicy } from '../../doubles/learning-planner/policy';
import { verdictFileSchema, type VerdictFile } from '../../core/judge/verdict-file';
import { percent } from '../../core/metrics';
import { columnTitle, formatInterval, type EvaluationReport } from '../../core/report';
import { checkpointManifestKey, manifestKey, reportSeriesPrefix, verdictKey, type AttemptRef } from '../../core/keys';
import { CHECKPOINT_SCHEMA, checkpointManifestSchema } from '../../core/training';
import { type TrajectoryManifest } from '../../core/trajectory';
import { SPECIALIZATION_STAGES } from '../../workflows/training/progress';
import { startViewer, type Viewer } from '../../viewer/server';
import { startHarness, type Harness } from '../support/harness';
import { eventually } from '../support/rollouts';
import { ARTIFACTS, DOC_IMAGES, launchBrowser, type Browser } from './browser';
import { judgeRunWorkflowId } from '../../workflows/names';
import { APPS } from '../../apps/index';
import { parseTrajectoryManifest } from '../../apps/manifests';

/**
 * The viewer in Debian's headless Chromium, on what a real test run produced: two evaluations of
 * KAlgebra tasks (real rollouts on real desktops with the scripted models), the judge's verdicts
 * on the first, a judge-strategy comparison, and a specialization in flight. The viewer runs
 * behind its login and the browser logs in (HTTP Basic, the token as password). Screenshots of the
 * pages go to test-artifacts/viewer/, those of the evaluation charts to docs/images/ too.
 */
describe('viewer in a real browser, on real rollouts', function () {
  this.timeout(600_000);
  const stamp = Date.now().toString(36);
  const series = `viewer-${stamp}`;
  const runs = [`view${stamp}a`, `view${stamp}b`] as const;
  // A click, a hotkey, typing and DONE; an ANS answer; a task the planner gives up (FAIL).
  const TASKS = ['B-07', 'C-03', 'B-03'];
  const judgeEval = `je-${stamp}`;
  const token = `viewer-browser-${stamp}-${Math.random().toString(36).slice(2)}`;
  let h: Harness;
  let viewer: Viewer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    h = await startHarness({ name: 'viewer', desktops: 2, displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 580), runtimeLora: true });
    await h.startVmHost();
    // The second evaluation has a second row, the same planner sampled again, so its report has two planners to group.
    const planner = { name: h.config.models.planner.model, model: h.config.models.planner.model };
    await h.execute('evaluation', `evaluation-${runs[0]}`, { run: runs[0], series, software: ['KAlgebra'], attempts: 1, taskIds: { KAlgebra: TASKS } });
    await h.execute('evaluation', `evaluation-${runs[1]}`, { run: runs[1], series, software: ['KAlgebra'], attempts: 1, taskIds: { KAlgebra: TASKS }, planners: [planner, { ...planner, name: `${planner.name}-again` }] });
    await h.execute('judgeRun', judgeRunWorkflowId(runs[0], 'KAlgebra'), { run: runs[0], software: 'KAlgebra' });
    await h.execute('judgeEvaluation', `judge-eval-${judgeEval}`, { run: runs[0], software: 'KAlgebra', strategies: ['single', 'voting4-multires'], id: judgeEval });
    viewer = await startViewer(h.config, { ...h.env, CODA_VIEWER_TOKEN: token }, { port: 0 });
    assert.equal(viewer.login.kind, 'token');
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => void (message.type() === 'error' && pageErrors.push(message.text())));
    // The login: challenged and refused until the browser answers the Basic challenge with the token.
    const refused = await page.request.get(`${viewer.url}/runs`);
    assert.equal(refused.status(), 401);
    assert.match(refused.headers()['www-authenticate'] ?? '', /^Basic realm="coda viewer"/);
    await assert.rejects(page.goto(`${viewer.url}/runs`), /ERR_INVALID_AUTH_CREDENTIALS/, 'a browser without the token cannot open a page');
    assert.deepEqual(pageErrors.splice(0).filter((e) => !/status of 401|ERR_INVALID_AUTH_CREDENTIALS/.test(e)), []);
    await browser.context.setHTTPCredentials({ username: 'lab-member', password: token, origin: viewer.url });
  });

  after(async () => {
    await browser?.close();
    await viewer?.close();
    await h?.stop();
  });

  afterEach(() => assert.deepEqual(pageErrors.splice(0), [], 'no script error and no failed request in the page'));

  /** The visible text of every table cell that reads as JSON (a closed "raw" toggle is not visible). */
  const jsonCells = () =>
    page.$$eval('td', (cells) =>
      cells
        .map((td) => (td as unknown as { innerText: string }).innerText.trim())
        .filter((text) => {
          if (!/^[[{]/.test(text)) return false;
          try {
            return typeof JSON.parse(text) === 'object';
          } catch {
            return /^[[{]\s*"/.test(text);
          }
        }),
    );
  /** Opens a page, which must answer 200 and show no JSON in any table cell. */
  const open = async (url: string): Promise<void> => {
    const response = await page.goto(`${viewer.url}${url}`);
    assert.equal(response?.status(), 200, url);
    assert.deepEqual(await jsonCells(), [], `${url} has no JSON in a cell`);
  };
  const shot = (name: string, fullPage = false) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage });
  /** Chart.js (from node_modules) has made a chart of the canvas's configuration. */
  const chartDrawn = (id: string) => page.waitForFunction(`typeof Chart !== 'undefined' && Chart.getChart('${id}') !== undefined`);
  const cells = (selector: string) => page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));

  it('logs in: with the token as Basic password every page opens, the page script’s own requests too', async () => {
    await open('/runs');
    assert.equal(await page.textContent('h1'), 'Runs');
    // The browser asked once without the token, met the challenge and asked again with it: the console says so, once.
    assert.deepEqual(pageErrors.splice(0), ['Failed to load resource: the server responded with a status of 401 ()']);
    assert.equal(await page.evaluate(`fetch('/static/viewer.css').then((r) => r.status)`), 200);
    await open('/evaluation');
  });

  it('lists the runs with status, software, stage and run from the search attributes, filters them, and links each to its page and its Web UI page', async () => {
    await open(`/runs?run=${runs[0]}`);
    const rows = await cells('#runs');
    const ids = rows.map((r) => r[0]);
    for (const id of [`evaluation-${runs[0]}`, `batch-${runs[0]}-KAlgebra`, judgeRunWorkflowId(runs[0], 'KAlgebra')]) assert.ok(ids.includes(id), `${id} is listed`);
    const batch = rows.find((r) => r[0] === `batch-${runs[0]}-KAlgebra`)!;
    assert.deepEqual(batch.slice(1, 6), ['rolloutBatch', 'COMPLETED', 'KAlgebra', 'evaluation', runs[0]]);
    assert.equal(await page.getAttribute(`#runs a[href="/runs/batch-${runs[0]}-KAlgebra"]`, 'href'), `/runs/batch-${runs[0]}-KAlgebra`);
    assert.ok(await page.$(`#runs a[href="${workflowUrl(h.config, `batch-${runs[0]}-KAlgebra`)}"]`), 'the Web UI link of the batch');
    assert.ok(!ids.some((id) => id?.startsWith('rollout-')), 'rollouts are not runs');
    await shot('runs');

    await page.selectOption('select[name=type]', 'rolloutBatch');
    await Promise.all([page.waitForURL(/type=rolloutBatch/), page.click('form.filters button')]);
    assert.deepEqual((await cells('#runs')).map((r) => r[0]), [`batch-${runs[0]}-KAlgebra`]);
  });

  it('shows an evaluation\u2019s result as its report\u2019s table, with the raw JSON behind a toggle, and leads to the report\u2019s chart', async () => {
    await open(`/runs/evaluation-${runs[1]}`);
    const report = await cells('#result-report');
    const planner = h.config.models.planner.model;
    assert.deepEqual(report.map((r) => r[0]), [planner, `${planner}-again`]);
    assert.ok(report.every((r) => /^\d+\.\d\d \[[\d.]+, [\d.]+\]$/.test(r[1]!)), `Average@k with its interval: ${report.map((r) => r[1]).join('; ')}`);
    assert.equal(await page.isVisible('details.raw pre'), false, 'the raw JSON is folded away');
    await page.click('details.raw summary');
    assert.match((await page.textContent('details.raw pre')) ?? '', /^\{\n {2}"run"/);
    await Promise.all([page.waitForURL(/\/evaluation\//), page.click('#result a:has-text("the report’s page")')]);
    await chartDrawn('report-chart');
    assert.deepEqual(await jsonCells(), []);
  });

  it('shows a run: its result, its children, failures and retries, and leads from the batch to a rollout to its trajectory', async () => {
    await open(`/runs/batch-${runs[0]}-KAlgebra`);
    const children = await cells('#children');
    assert.deepEqual(children.map((c) => c[0]).sort(), TASKS.map((t) => `rollout-${runs[0]}-KAlgebra-${t}-0`).sort());
    assert.ok(children.every((c) => c[1] === 'rollout' && c[2] === 'completed'));
    assert.match((await page.textContent('#result')) ?? '', /completed\s*3/);
    assert.match((await page.textContent('main')) ?? '', /No failure\./);
    await page.click(`#children a[href="/runs/rollout-${runs[0]}-KAlgebra-B-07-0"]`);
    await page.waitForURL(/rollout-/);
    await Promise.all([page.waitForURL(/\/trajectories\//, { waitUntil: 'domcontentloaded' }), page.click('text=the trajectory')]);
    assert.equal(new URL(page.url()).pathname, `/trajectories/${runs[0]}/KAlgebra/B-07/0`);
  });

  it("shows every step of a real trajectory — screenshot, action drawn on it, thought, executor reply, parsed action, judge labels — and moves between steps with the keyboard", async () => {
    const ref: AttemptRef = { run: runs[0], software: 'KAlgebra', task: 'B-07', attempt: 0 };
    const key = manifestKey(h.config.storage.prefix, ref);
    const manifest: TrajectoryManifest = parseTrajectoryManifest(await h.stack.store.getJson(key), key);
    const verdict: VerdictFile = verdictFileSchema.parse(await h.stack.store.getJson(verdictKey(h.config.storage.prefix, ref)));
    assert.deepEqual(manifest.steps.map((s) => s.action?.type), ['click', 'hotkey', 'type', 'done'], 'the reference plan of B-07');
    await open(`/trajectories/${ref.run}/KAlgebra/B-07/0`);

    assert.equal(await page.textContent('.instruction'), manifest.task.instruction);
    assert.equal((await cells('#checks')).length, manifest.evaluation!.checks.length);
    const votes = await cells('#votes');
    assert.equal(votes.length, verdict.votes.length);
    assert.deepEqual(votes.map((v) => v[2]), verdict.votes.map((v) => v.resolution));
    assert.match((await page.textContent('#verdict')) ?? '', new RegExp(verdict.stoppedBecause.replace(/[()]/g, '.')));

    const position = () => page.textContent('#step-position b');
    assert.equal(await position(), '0');
    for (const step of manifest.steps) {
      await page.keyboard.press('j');
      assert.equal(await position(), String(step.index));
      assert.equal(new URL(page.url()).hash, `#step-${step.index}`);
      const section = `#step-${step.index}`;
      // The screenshot, fetched lazily as the step comes into view, streamed from S3.
      await page.waitForFunction(`(() => { const img = document.querySelector('${section} img'); return img !== null && img.complete && img.naturalWidth > 0; })()`);
      assert.equal(await page.evaluate(`document.querySelector('${section} img').naturalWidth`), manifest.desktop.screen!.width);
      assert.equal(await page.getAttribute(`${section} img`, 'loading'), 'lazy');
      assert.ok(await page.$eval(section, (el) => el.classList.contains('current')));
      // The action drawn over exactly the screenshot.
      assert.equal(await page.getAttribute(`${section} svg.overlay`, 'data-action'), step.action!.type);
      const [img, svg] = await Promise.all([page.locator(`${section} img`).boundingBox(), page.locator(`${section} svg.overlay`).boundingBox()]);
      assert.deepEqual(svg, img);
      if (step.action!.type === 'click') {
        assert.equal(Number(await page.getAttribute(`${section} svg.overlay circle`, 'cx')), step.action!.x);
        await shot('trajectory');
      } else {
        assert.equal(await page.textContent(`${section} svg.overlay text`), describeAction(step.action!));
      }
      assert.equal(await page.textContent(`${section} .thought`), step.planner.thought);
      assert.equal(await page.textContent(`${section} .planner-action`), step.planner.actionText);
      assert.equal(await page.textContent(`${section} .action`), describeAction(step.action!));
      if (step.executor !== undefined) assert.equal(await page.textContent(`${section} .executor-raw`), step.executor.raw);
      const positive = verdict.positiveSteps.includes(step.index);
      assert.deepEqual(await page.$$eval(`${section} .labels .badge`, (badges) => badges.map((b) => b.textContent)), [positive ? 'positive' : 'not positive']);
    }
    await page.keyboard.press('j');
    assert.equal(await position(), 'final');
    await page.keyboard.press('k');
    assert.equal(await position(), String(manifest.steps.length));
    await page.keyboard.press('Home');
    assert.equal(await position(), '0');
    await page.keyboard.press('End');
    assert.equal(await position(), 'final');
    await shot('trajectory-full', true);
  });

  it('draws the latest report as grouped bars and the series as a line per planner, shows the latest as a table and its per-task diff to the previous one', async () => {
    const keys = (await h.stack.store.list(`${reportSeriesPrefix(h.config.storage.prefix, series)}/`)).filter((k) => k.endsWith('.json')).sort();
    assert.equal(keys.length, 2);
    const reports = await Promise.all(keys.map((k) => h.stack.store.getJson<EvaluationReport>(k)));
    await open(`/evaluation/${series}`);
    await chartDrawn('average-chart');
    const plotted = (await page.evaluate(
      `(() => { const c = Chart.getChart('average-chart'); return { labels: c.data.labels, datasets: c.data.datasets.map((d) => ({ label: d.label, data: d.data })) }; })()`,
    )) as { labels: string[]; datasets: Array<{ label: string; data: number[] }> };
    const planner = h.config.models.planner.model;
    assert.deepEqual(plotted.labels, reports.map((r) => r.run));
    assert.deepEqual(plotted.datasets.map((d) => d.label), [planner, `${planner}-again`], 'a line per planner');
    assert.deepEqual(plotted.datasets[0]!.data, reports.map((r) => percent(r.rows[0]!.metrics.overall.averageAtK)));
    assert.deepEqual(plotted.datasets[1]!.data, [null, percent(reports[1]!.rows[1]!.metrics.overall.averageAtK)]);
    await chartDrawn('report-chart');
    const bars = (await page.evaluate(
      `(() => { const c = Chart.getChart('report-chart'); return { type: c.config.type, labels: c.data.labels, datasets: c.data.datasets.map((d) => ({ label: d.label, data: d.data, colour: d.backgroundColor, bars: c.getDatasetMeta(c.data.datasets.indexOf(d)).data.length })) }; })()`,
    )) as { type: string; labels: string[]; datasets: Array<{ label: string; data: number[]; colour: string; bars: number }> };
    assert.equal(bars.type, 'bar');
    assert.deepEqual(bars.labels, [columnTitle(APPS, 'KAlgebra'), 'Overall']);
    assert.deepEqual(bars.datasets.map((d) => [d.label, d.bars]), [[planner, 2], [`${planner}-again`, 2]], 'a bar per planner in each group');
    assert.deepEqual(bars.datasets.map((d) => d.data), reports[1]!.rows.map((r) => [percent(r.metrics.bySoftware.KAlgebra!.averageAtK), percent(r.metrics.overall.averageAtK)]));
    assert.notEqual(bars.datasets[0]!.colour, bars.datasets[1]!.colour);
    // Chart.js drew on the canvas: it is not blank.
    await chartDrawn('pass-chart');
    const painted = (await page.evaluate(
      `(() => { const c = document.getElementById('pass-chart'); const p = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < p.length; i += 4) if (p[i] > 0) n++; return n; })()`,
    )) as number;
    assert.ok(painted > 1000, `the Pass@k plot has ${painted} painted pixels`);
    const latest = reports[1]!.rows[0]!.metrics.bySoftware.KAlgebra!;
    // Average@k with its 95% interval; one planner, not named base, so no comparison column.
    const intervals = reports[1]!.rows[0]!.averageInterval!;
    assert.deepEqual((await cells('#average-table'))[0]?.slice(1), [`${(latest.averageAtK * 100).toFixed(2)} ${formatInterval(intervals.bySoftware.KAlgebra!)}`, `${(latest.averageAtK * 100).toFixed(2)} ${formatInterval(intervals.overall)}`]);
    assert.match(await page.content(), /intervals, bootstrap with seed \d+ and \d+ resamples/);
    assert.deepEqual((await cells('#pass-table'))[0]?.slice(1), [(latest.passAtK * 100).toFixed(2), (latest.passAtK * 100).toFixed(2)]);
    const diff = await cells('#task-diff');
    const first = diff.filter((r) => r[0] === planner);
    assert.deepEqual(first.map((r) => r[1]).sort(), TASKS.map((t) => `KAlgebra/${t}`).sort());
    assert.ok(first.every((r) => /^\d\/1$/.test(r[2]!) && /^\d\/1$/.test(r[3]!)), 'before and now of every task');
    assert.deepEqual(diff.filter((r) => r[0] !== planner).map((r) => [r[0], r[2], r[4]]), TASKS.map(() => [`${planner}-again`, '–', 'new']));
    await shot('evaluation', true);
  });

  it('draws a series of three evaluations of two software and two planners: bars per software and Overall, a line per planner, a colour each (the README\'s pictures)', async () => {
    // Three evaluations in a series of their own, each of two planners: the scripted planner, and a LoRA adapter of the
    // learning planner double (loaded through the model server's runtime route, as serving a checkpoint does) that takes
    // the perturbed step of a task's plan half the time.
    const chartSeries = `viewer-charts-${stamp}`;
    const planner = h.config.models.planner.model;
    const noisy = `noisy-planner-${stamp}`;
    const adapter = mkdtempSync(path.join(tmpdir(), 'coda-noisy-planner-'));
    writeFileSync(path.join(adapter, 'adapter_config.json'), '{}');
    LearningPolicy.base(0.5).write(adapter);
    const loaded = await fetch(`${h.models.url}/load_lora_adapter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ lora_name: noisy, lora_path: adapter }) });
    assert.equal(loaded.status, 200, await loaded.text());
    const rows = [planner, 'noisy-planner'];
    const taskIds = { KAlgebra: ['A-01', 'B-07', 'C-01'], TeXstudio: ['D-01'] };
    // The scripted planner's row reuses one run (as a base row does), so only the noisy planner rolls out again.
    const scripted = { name: planner, model: planner, run: `chart${stamp}-scripted` };
    for (const n of [1, 2, 3]) {
      await h.execute('evaluation', `evaluation-chart${stamp}r${n}`, { run: `chart${stamp}r${n}`, series: chartSeries, software: ['KAlgebra', 'TeXstudio'], attempts: 1, taskIds, planners: [scripted, { name: 'noisy-planner', model: noisy }] });
    }
    const keys = (await h.stack.store.list(`${reportSeriesPrefix(h.config.storage.prefix, chartSeries)}/`)).filter((k) => k.endsWith('.json')).sort();
    const reports = await Promise.all(keys.map((k) => h.stack.store.getJson<EvaluationReport>(k)));
    assert.equal(reports.length, 3);
    await open(`/evaluation/${chartSeries}`);
    await chartDrawn('report-chart');
    await chartDrawn('average-chart');
    const drawn = (id: string) =>
      page.evaluate(
        `(() => { const c = Chart.getChart('${id}'); return { labels: c.data.labels, datasets: c.data.datasets.map((d, i) => ({ label: d.label, data: d.data, colour: d.backgroundColor, drawn: c.getDatasetMeta(i).data.length })), legend: c.legend.legendItems.map((l) => l.text) }; })()`,
      ) as Promise<{ labels: string[]; datasets: Array<{ label: string; data: Array<number | null>; colour: string; drawn: number }>; legend: string[] }>;
    const bars = await drawn('report-chart');
    assert.deepEqual(bars.labels, [columnTitle(APPS, 'KAlgebra'), columnTitle(APPS, 'TeXstudio'), 'Overall']);
    assert.deepEqual(bars.legend, rows, 'one legend entry per planner');
    assert.equal(bars.datasets.reduce((n, d) => n + d.drawn, 0), rows.length * 3, 'a bar per planner and group');
    const latest = reports[2]!;
    assert.deepEqual(bars.datasets.map((d) => d.data), latest.rows.map((r) => [percent(r.metrics.bySoftware.KAlgebra!.averageAtK), percent(r.metrics.bySoftware.TeXstudio!.averageAtK), percent(r.metrics.overall.averageAtK)]));
    const lines = await drawn('average-chart');
    assert.deepEqual(lines.labels, reports.map((r) => r.run));
    assert.deepEqual(lines.legend, rows);
    assert.deepEqual(lines.datasets.map((d) => d.data), rows.map((_, i) => reports.map((r) => percent(r.rows[i]!.metrics.overall.averageAtK))));
    assert.deepEqual(lines.datasets.map((d) => d.colour), bars.datasets.map((d) => d.colour), 'a planner has one colour on the page');
    assert.notEqual(bars.datasets[0]!.colour, bars.datasets[1]!.colour);
    await page.locator('figure:has(#report-chart)').screenshot({ path: path.join(DOC_IMAGES, 'report-chart.png') });
    await page.locator('figure:has(#average-chart)').screenshot({ path: path.join(DOC_IMAGES, 'series-chart.png') });
    rmSync(adapter, { recursive: true, force: true });
  });

  it("shows the judge evaluation's precision and recall per strategy and what the low-resolution early exit saved", async () => {
    const report = await h.stack.store.getJson<{ rows: Array<{ title: string; confusion: { precision: number; recall: number } }> }>(`${h.config.storage.prefix}/judge-evals/${judgeEval}.json`);
    await open('/judge');
    assert.ok((await cells('#judge-evals')).some((r) => r[0] === judgeEval));
    await open(`/judge/${judgeEval}`);
    assert.deepEqual(
      (await cells('#strategies')).map((r) => r.slice(0, 3)),
      report.rows.map((r) => [r.title, (r.confusion.precision * 100).toFixed(1), (r.confusion.recall * 100).toFixed(1)]),
    );
    const savings = await cells('#savings');
    assert.deepEqual(savings.map((r) => r.slice(0, 2)), [['Voting@4 + multi-res', 'Voting@4']]);
    assert.match(savings[0]![6]!, /saved/);
    await chartDrawn('precision-chart');
    await shot('judge', true);
  });

  it('shows a running specialization live — round, stage, counts — and its end', async () => {
    const workflowId = `specialization-KAlgebra-viewer${stamp}`;
    const handle = await h.stack.client.workflow.start('specialization', {
      taskQueue: h.config.taskQueues.orchestrator,
      workflowId,
      args: [{ software: 'KAlgebra', run: `spec${stamp}`, rounds: 1, tasksPerRound: 1, attempts: 1, includeSeeds: false, evaluationAttempts: 1 }],
    });
    try {
      await open(`/training/${workflowId}`);
      assert.match((await page.textContent('main')) ?? '', /round\s*1 of 1/);
      const stageOf = async () =>
        (await page.evaluate(`(() => { const dt = [...document.querySelectorAll('#progress dt')].find((d) => d.textContent === 'stage'); return dt?.nextElementSibling.textContent; })()`)) as string | undefined;
      const first = await stageOf();
      assert.ok(first !== undefined && ['starting', ...SPECIALIZATION_STAGES].includes(first), `a stage: ${first}`);
      // viewer.js refreshes the progress from the workflow's query; wait for the run to move on.
      await eventually('the live progress to show a later stage', async () => ((await stageOf()) !== first ? true : undefined), 120_000);
      await shot('training');
    } finally {
      await handle.terminate('the viewer test saw it live');
    }
    // The page notices the end and reloads.
    await page.waitForSelector('.badge-terminated', { timeout: 30_000 });
    assert.equal(await page.$('#progress'), null);
  });

  it('shows a checkpoint with its lineage and the trajectories it was trained on', async () => {
    // No GPU side on this branch: the checkpoint manifests are written here, as core/training.ts describes them.
    const prefix = h.config.storage.prefix;
    const source = { manifestKey: manifestKey(prefix, { run: runs[0], software: 'KAlgebra', task: 'B-07', attempt: 0 }), verdictKey: verdictKey(prefix, { run: runs[0], software: 'KAlgebra', task: 'B-07', attempt: 0 }), software: 'KAlgebra', steps: [1, 2, 3] };
    const write = async (name: string, parent: string | undefined, metrics: Record<string, number>) =>
      h.stack.store.putJson(
        checkpointManifestKey(prefix, name),
        checkpointManifestSchema.parse({ schema: CHECKPOINT_SCHEMA, name, kind: 'grpo', createdAt: new Date().toISOString(), ...(parent === undefined ? {} : { parent: checkpointManifestKey(prefix, parent) }), base: { model: 'coda-planner', path: 'Qwen/Qwen2.5-VL-32B-Instruct' }, dataset: `${prefix}/datasets/${name}/manifest.json`, sources: [source], job: name, steps: 12, metrics, lora: true, filesPrefix: `${prefix}/checkpoints/${name}/files`, double: true }),
      );
    await write(`ck${stamp}-r1`, undefined, { policy_loss: 0.42, reward: 0.31 });
    await write(`ck${stamp}-r2`, `ck${stamp}-r1`, { policy_loss: 0.18, reward: 0.64 });
    await open(`/checkpoints/ck${stamp}-r2`);
    assert.deepEqual((await cells('#lineage')).map((r) => [r[0], r[3]]), [[`ck${stamp}-r2`, `ck${stamp}-r1`], [`ck${stamp}-r1`, 'base coda-planner']]);
    assert.deepEqual(await cells('#figures'), [['policy_loss', '0.1800'], ['reward', '0.6400']]);
    // Wait for the trajectory page itself, not for every screenshot on it (the load event): under a loaded machine
    // the images can take longer than the navigation, and they are not what this test checks.
    await Promise.all([page.waitForURL(/B-07\/0$/, { waitUntil: 'domcontentloaded' }), page.click(`#sources a[href="/trajectories/${runs[0]}/KAlgebra/B-07/0"]`)]);
    const manifest = parseTrajectoryManifest(await h.stack.store.getJson(source.manifestKey), source.manifestKey);
    assert.equal(await page.textContent('.instruction'), manifest.task.instruction);
  });
});
