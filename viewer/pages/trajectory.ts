import { describeAction } from '../../core/actions';
import { verdictFileSchema, type VerdictFile } from '../../core/judge/verdict-file';
import { attemptPrefix, DEFAULT_VERDICT, manifestKey, runPrefix, runSummaryKey, verdictKey, type AttemptRef } from '../../core/keys';
import { APP_NOT_RUNNING } from '../../core/evaluation';
import type { MetricsReport } from '../../core/metrics';
import { type StepRecord, type TrajectoryManifest } from '../../core/trajectory';
import { notFound, ViewerError } from '../errors';
import { html, type Html } from '../html';
import { actionOverlay } from '../overlay';
import { check, type ViewerSources } from '../sources';
import { paths } from '../urls';
import { badge, duration, keyValues, link, pre, table, utc } from './parts';
import { rolloutWorkflowId } from '../../workflows/names';
import { trajectoryManifestSchema } from '../../apps/manifests';

/** The keys of an attempt, or a 404 naming the id that cannot be one. */
function keysOf(src: ViewerSources, ref: AttemptRef, label: string): { manifest: string; verdict: string } {
  try {
    return { manifest: manifestKey(src.prefix, ref), verdict: verdictKey(src.prefix, ref, label) };
  } catch (err) {
    throw notFound(`trajectory ${ref.run}/${ref.software}/${ref.task}/${ref.attempt}`, (err as Error).message);
  }
}

const refText = (ref: AttemptRef): string => `${ref.run}/${ref.software}/${ref.task}/${ref.attempt}`;

/**
 * One trajectory: the task, how it ended, the evaluator's checks, the judge's votes, then every
 * step — the screenshot the planner saw with the action drawn on it, the thought, the executor's
 * reply, the parsed action, timings — and the last screen. Screenshots load lazily from
 * /objects/, streamed from S3. viewer.js moves between steps with the keyboard.
 */
export async function trajectoryPage(src: ViewerSources, ref: AttemptRef, label: string = DEFAULT_VERDICT): Promise<Html> {
  const keys = keysOf(src, ref, label);
  const manifest = await src.parsed(trajectoryManifestSchema, keys.manifest, `trajectory ${refText(ref)}`);
  const judged = await readVerdict(src, keys.verdict, refText(ref), label);
  const labels = (await src.list(`${attemptPrefix(src.prefix, ref)}/verdicts/`)).map((k) => /verdicts\/([^/]+)\.json$/.exec(k)?.[1]).filter((l): l is string => l !== undefined);
  const positive = new Set(judged.verdict?.positiveSteps ?? []);
  const screen = manifest.desktop.screen;
  return html`<h1>${manifest.software} ${manifest.taskId} <span class="muted">attempt ${manifest.attempt} of run ${manifest.run}</span></h1>
<p class="instruction">${manifest.task.instruction}</p>
${keyValues([
  ['stopped', html`${badge(manifest.stop.reason, manifest.stop.reason === 'DONE' || manifest.stop.reason === 'ANS' ? 'completed' : manifest.stop.reason === 'ERROR' ? 'failed' : 'other')}${manifest.stop.answer === undefined ? '' : html` answer <code>${manifest.stop.answer}</code>`}${manifest.stop.detail === undefined ? '' : html` — ${manifest.stop.detail}`}`],
  ['evaluators', manifest.evaluation === undefined ? (manifest.task.evaluated === false ? 'none (a generated task: its judge decides)' : 'not run') : evaluationBadge(manifest.evaluation)],
  ['judge', judged.verdict === undefined ? 'not judged' : badge(judged.verdict.success ? 'success' : 'failure', judged.verdict.success ? 'passed' : 'failed')],
  ['steps', `${manifest.steps.length} of at most ${manifest.task.maxSteps}`],
  ['resumes', manifest.resumes],
  ['planner', `${manifest.models.planner.model} (${manifest.models.planner.baseUrl})`],
  ['executor', `${manifest.models.executor.model} (${manifest.models.executor.baseUrl})`],
  ['desktop', `${manifest.desktop.host} ${manifest.desktop.id}${screen === undefined ? '' : ` ${screen.width}x${screen.height}`}`],
  ['stage', manifest.stage],
  ['started (UTC)', utc(manifest.startedAt)],
  ['took', duration(Date.parse(manifest.endedAt) - Date.parse(manifest.startedAt))],
])}
<p class="links">${link(paths.run(rolloutWorkflowId(ref)), 'the rollout workflow')} · ${link(paths.trajectories(ref.run, ref.software), `every trajectory of ${ref.run}`)} · ${link(paths.object(keys.manifest), 'manifest.json')}</p>
${evaluationSection(manifest)}
${judgeSection(judged, label, labels, ref)}
<section class="steps-section"><h2>Steps</h2>
<nav class="stepbar" aria-label="steps"><button type="button" data-step-move="-1">← previous</button> <span id="step-position">step <b>0</b> of ${manifest.steps.length}</span> <button type="button" data-step-move="1">next →</button>
<span class="muted">keys: j / k or ← → between steps, Home / End</span>
<ol class="filmstrip">${[0, ...manifest.steps.map((s) => s.index)].map((i) => html`<li><a href="#step-${i}" class="${positive.has(i) ? 'positive' : ''}">${i}</a></li>`)}</ol></nav>
${screenFigure(0, manifest.initialScreenshotKey, 'the screen after the reset, before any action', html``, screen)}
${manifest.steps.map((step) => stepSection(step, positive.has(step.index), judged.verdict !== undefined, screen))}
${manifest.finalScreenshotKey === undefined ? '' : html`<section class="step final" id="step-final" data-step="final"><h3>After the last step</h3>${screenFigure(undefined, manifest.finalScreenshotKey, 'the last screen', html``, screen)}</section>`}
</section>`;
}

async function readVerdict(src: ViewerSources, key: string, what: string, label: string): Promise<{ verdict?: VerdictFile; damage?: ViewerError }> {
  try {
    const raw = await src.optionalJson(key, `verdict ${label} of ${what}`);
    return raw === undefined ? {} : { verdict: check(verdictFileSchema, raw, `verdict ${label} of ${what}`, src.uri(key)) };
  } catch (err) {
    // A damaged verdict is named in place; the trajectory is still worth seeing.
    if (err instanceof ViewerError && err.status === 422) return { damage: err };
    throw err;
  }
}

/** passed, failed, or the app not running at evaluation (not solved either, its own outcome). */
const evaluationBadge = (evaluation: NonNullable<TrajectoryManifest['evaluation']>): Html =>
  evaluation.appNotRunning !== undefined ? badge(`failed: ${APP_NOT_RUNNING} (${evaluation.appNotRunning})`, 'failed') : badge(evaluation.passed ? 'passed' : 'failed');

function evaluationSection(manifest: TrajectoryManifest): Html {
  const evaluation = manifest.evaluation;
  if (evaluation === undefined) return html``;
  return html`<section><h2>Evaluator checks</h2>${table(
    ['#', 'check', 'result', 'detail'],
    evaluation.checks.map((c) => [c.index, c.type, badge(c.passed ? 'passed' : 'failed'), c.detail]),
    { id: 'checks' },
  )}</section>`;
}

function judgeSection(judged: { verdict?: VerdictFile; damage?: ViewerError }, label: string, labels: readonly string[], ref: AttemptRef): Html {
  const others = labels.length === 0 ? '' : html`<p>Other verdicts: ${[DEFAULT_VERDICT, ...labels].filter((l) => l !== label).map((l) => html`${link(`${paths.trajectory(ref)}?verdict=${encodeURIComponent(l)}`, l)} `)}</p>`;
  if (judged.damage !== undefined) {
    return html`<section class="error" data-status="422"><h2>Judge (${label})</h2><p>${judged.damage.title}: ${judged.damage.message}</p><ul class="problems">${judged.damage.details.map((d) => html`<li><code>${d}</code></li>`)}</ul>${others}</section>`;
  }
  const v = judged.verdict;
  if (v === undefined) return html`<section><h2>Judge (${label})</h2><p class="muted">Not judged with this plan.</p>${others}</section>`;
  const plan = `${v.plan.lowResolutionVotes} low + ${v.plan.highResolutionVotes} high resolution votes, judges ${v.plan.judges.map((j) => `${j.name} (${j.model})`).join(', ')}`;
  return html`<section id="verdict"><h2>Judge (${label})</h2>
${keyValues([
  ['verdict', badge(v.success ? 'success' : 'failure', v.success ? 'passed' : 'failed')],
  ['voting stopped', v.stoppedBecause],
  ['positive steps', v.positiveSteps.length === 0 ? 'none' : v.positiveSteps.join(', ')],
  ['plan', plan],
  ['cost', `${v.cost.calls} calls, ${v.cost.images} images, ${(v.cost.pixels / 1e6).toFixed(2)} Mpx (${(v.cost.highResolutionPixels / 1e6).toFixed(2)} at high resolution), ${v.cost.promptTokens + v.cost.completionTokens} tokens, ${duration(v.cost.latencyMs)}`],
  ['subsampled', v.subsampled],
  ['judged (UTC)', utc(v.judgedAt)],
])}
${table(
  ['vote', 'judge', 'resolution', 'temperature', 'top_p', 'seed', 'screens', 'reply', 'redundant', 'first error', 'why', 'cost', 'raw'],
  v.votes.map((vote) => [
    vote.index + 1,
    `${vote.judge} (${vote.model})`,
    vote.resolution,
    vote.temperature,
    vote.topP,
    vote.seed,
    `${vote.screens.shown} of ${vote.screens.of}`,
    vote.reply === null ? badge('unreadable', 'failed') : badge(vote.reply.correctness ? 'success' : 'failure', vote.reply.correctness ? 'passed' : 'failed'),
    vote.reply?.redundant.join(', ') ?? '',
    vote.reply?.firstErrorStep ?? '',
    vote.reply?.reasoning ?? vote.error ?? '',
    `${vote.cost.images} images, ${(vote.cost.pixels / 1e6).toFixed(2)} Mpx, ${duration(vote.cost.latencyMs)}`,
    link(paths.object(vote.replyKey), 'reply'),
  ]),
  { id: 'votes' },
)}${others}</section>`;
}

function screenFigure(step: number | undefined, key: string, alt: string, overlay: Html, screen: TrajectoryManifest['desktop']['screen']): Html {
  const ratio = screen === undefined ? '' : `aspect-ratio: ${screen.width} / ${screen.height}`;
  const figure = html`<figure class="screen" style="${ratio}"><img src="${paths.object(key)}" alt="${alt}" loading="lazy" decoding="async">${overlay}</figure>`;
  return step === undefined ? figure : html`<section class="step" id="step-${step}" data-step="${step}"><h3>Step 0 <span class="muted">the initial screen</span></h3>${figure}</section>`;
}

function stepSection(step: StepRecord, positive: boolean, judged: boolean, screen: TrajectoryManifest['desktop']['screen']): Html {
  const t = step.timings;
  const labels = [
    judged ? (positive ? badge('positive', 'passed') : badge('not positive', 'other')) : '',
    step.resumed ? badge('resumed', 'other') : '',
    step.error !== undefined ? badge('error', 'failed') : '',
  ];
  return html`<section class="step" id="step-${step.index}" data-step="${step.index}" data-positive="${positive}">
<h3>Step ${step.index} <span class="labels">${labels}</span></h3>
<div class="step-body">
${screenFigure(undefined, step.screenshotKey, `the screen before step ${step.index}`, actionOverlay(step.action, screen), screen)}
<div class="step-text">
<h4>Planner's thought</h4><p class="thought">${step.planner.thought}</p>
<h4>Planner's action</h4><p><code class="planner-action">${step.planner.actionText}</code></p>
<h4>Parsed action</h4><p class="action">${step.action === null ? html`<span class="muted">none: ${step.error ?? 'the reply did not parse'}</span>` : describeAction(step.action)}</p>
${step.executor === undefined ? '' : html`<h4>Executor's reply <span class="muted">${step.executor.model}</span></h4>${pre(step.executor.raw, 'executor-raw')}`}
${step.droppedActions === undefined ? '' : html`<h4>Also written by the executor, not performed</h4>${pre(step.droppedActions.join('\n'))}`}
${step.error === undefined || step.action === null ? '' : html`<h4>Error</h4><p>${step.error}</p>`}
<details><summary>Planner's raw reply <span class="muted">${step.planner.model}</span></summary>${pre(step.planner.raw, 'planner-raw')}</details>
${keyValues([
  ['planner', `${duration(t.plannerMs)}${step.planner.usage ? `, ${step.planner.usage.promptTokens} + ${step.planner.usage.completionTokens} tokens` : ''}`],
  ['executor', t.executorMs === undefined ? undefined : `${duration(t.executorMs)}${step.executor?.usage ? `, ${step.executor.usage.promptTokens} + ${step.executor.usage.completionTokens} tokens` : ''}`],
  ['act + settle', duration(t.actMs)],
  ['screenshot', duration(t.screenshotMs)],
  ['started (UTC)', utc(step.startedAt)],
])}
</div></div></section>`;
}

/** Every trajectory of one run and software, with how each ended (from the manifests). */
export async function trajectoriesPage(src: ViewerSources, run: string, software: string): Promise<Html> {
  let prefix: string;
  try {
    prefix = runPrefix(src.prefix, run, software);
  } catch (err) {
    throw notFound(`run ${run}/${software}`, (err as Error).message);
  }
  const keys = await src.list(`${prefix}/`);
  const manifests = keys.filter((k) => /\/[^/]+\/\d+\/manifest\.json$/.test(k)).sort();
  if (manifests.length === 0) throw notFound(`run ${run}/${software}`, `there is no trajectory under ${src.uri(`${prefix}/`)}`);
  const verdicts = new Set(keys.filter((k) => k.endsWith('/verdict.json')).map((k) => k.replace(/verdict\.json$/, 'manifest.json')));
  // summary.json: the run's metrics and, since it is recorded, the attempts whose app was not running at evaluation.
  const summary = (await src.optionalJson(runSummaryKey(src.prefix, run, software), `summary of ${run}/${software}`)) as (MetricsReport & { appNotRunning?: string[] }) | undefined;
  const LIMIT = 300;
  const rows = await Promise.all(
    manifests.slice(0, LIMIT).map(async (key) => {
      const [, task, attempt] = /\/([^/]+)\/(\d+)\/manifest\.json$/.exec(key) ?? [];
      const ref = { run, software, task: task!, attempt: Number(attempt) };
      try {
        const m = await src.parsed(trajectoryManifestSchema, key, `trajectory ${refText(ref)}`);
        return [link(paths.trajectory(ref), `${m.taskId}/${m.attempt}`), m.task.instruction, m.steps.length, badge(m.stop.reason, 'other'), m.evaluation === undefined ? '–' : evaluationBadge(m.evaluation), verdicts.has(key) ? 'judged' : '', m.resumes];
      } catch (err) {
        if (!(err instanceof ViewerError) || err.status !== 422) throw err;
        return [link(paths.trajectory(ref), `${task}/${attempt}`), badge('damaged manifest', 'failed'), '', '', '', '', ''];
      }
    }),
  );
  const overall = summary?.overall;
  return html`<h1>Trajectories of ${run} <span class="muted">${software}</span></h1>
${overall === undefined ? '' : html`<p>Average@${summary!.k} ${(overall.averageAtK * 100).toFixed(2)}% · Pass@${summary!.k} ${(overall.passAtK * 100).toFixed(2)}% over ${overall.taskCount} tasks with checks${summary!.appNotRunning === undefined ? '' : ` · ${APP_NOT_RUNNING}: ${summary!.appNotRunning.length} attempts (not solved)`}</p>`}
<p class="muted">${manifests.length} trajectories in ${src.uri(`${prefix}/`)}${manifests.length > LIMIT ? `; the first ${LIMIT} shown` : ''}</p>
${table(['trajectory', 'task', 'steps', 'stopped', 'evaluators', 'judge', 'resumes'], rows, { id: 'trajectories' })}`;
}
