import { createReadStream } from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Env, LoadedConfig } from '../config/load';
import { lazyClient } from '../client/connection';
import { createObjectStore } from '../activities/storage/object-store';
import { devEnv } from '../infra/stack';
import { ownValue } from '../core/records';
import { authorized, CHALLENGE, loopbackHostHeader, viewerLogin, type ViewerLogin } from './auth';
import { notFound, ViewerError } from './errors';
import type { Html } from './html';
import { seriesListPage, seriesPage } from './pages/evaluation';
import { judgeListPage, judgePage } from './pages/judge';
import { errorPage, loginNeededPage, page, type Section } from './pages/layout';
import { progressSection, readProgress, runPage } from './pages/run';
import { filtersOf, runsPage } from './pages/runs';
import { checkpointPage, trainingListPage, trainingPage } from './pages/training';
import { trajectoriesPage, trajectoryPage } from './pages/trajectory';
import { ViewerSources } from './sources';
import { viewerUrl } from './urls';

/**
 * The viewer (`coda view`): a Fastify app whose pages read S3 and Temporal on each request and
 * keep nothing (no database, no cache of objects). Screenshots are streamed from S3 to the
 * browser. A page that fails shows why (viewer/errors.ts); the server itself keeps running.
 * Behind its login (viewer/auth.ts) every route answers 401 without the token but /healthz, which
 * says only that the process is up (the dev stack and Kubernetes probes ask it). Without its login
 * it answers only requests whose Host is a loopback address (403 otherwise), and it serves S3's
 * objects by their extension, never by the type they were stored with.
 */

/** The one route open without the login. */
const HEALTH = '/healthz';

const STATIC_DIR = path.resolve(__dirname, '..', '..', 'viewer', 'static');
/** The files /static/ serves: the page script and style, and Chart.js's browser build from node_modules. */
const STATIC_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  'viewer.js': { file: path.join(STATIC_DIR, 'viewer.js'), type: 'text/javascript; charset=utf-8' },
  'viewer.css': { file: path.join(STATIC_DIR, 'viewer.css'), type: 'text/css; charset=utf-8' },
  'chart.umd.js': { file: path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'), type: 'text/javascript; charset=utf-8' },
};

/**
 * How objects are served, by extension; anything else as bytes to save, whatever type it was stored
 * with (a stored `text/html` or `image/svg+xml` would run its script on the viewer's origin).
 */
const OBJECT_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
};
const BYTES = 'application/octet-stream';
/** On every object: the browser keeps the type given, and a document opened from it runs nothing and loads nothing. */
const OBJECT_HEADERS = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" } as const;

type Params = Record<string, string>;
type Query = Record<string, string | undefined>;

const sendHtml = (reply: FastifyReply, body: Html, status = 200): FastifyReply => reply.code(status).type('text/html; charset=utf-8').send(body.text);

/** The check every request passes before routing: the token where there is a login, a loopback Host where there is none. */
function guard(app: FastifyInstance, login: ViewerLogin): void {
  if (login.kind === 'token') {
    // Before routing, so unknown pages and static files are refused alike and say nothing of what exists.
    app.addHook('onRequest', async (req, reply) => {
      if (req.url.split('?')[0] === HEALTH || authorized(req.headers.authorization, login.token)) return;
      const refusal = new ViewerError(401, 'Login needed', `This viewer needs its token: HTTP Basic with any user name and the token as password (a browser asks for it), or Authorization: Bearer <token>. Its operator has it in ${login.tokenEnv}.`);
      reply.header('www-authenticate', CHALLENGE).header('cache-control', 'no-store');
      return sendHtml(reply, loginNeededPage(refusal), 401);
    });
  } else {
    // Open: only requests naming a loopback Host, every route alike (viewer/auth.ts loopbackHostHeader).
    app.addHook('onRequest', async (req, reply) => {
      if (loopbackHostHeader(req.headers.host)) return;
      const refusal = new ViewerError(403, 'Not a loopback address', 'This viewer runs without a login, so it answers only at a loopback address (127.0.0.1, ::1, localhost), never at a name another site could point here. Its operator sets a token to serve it at other names.');
      reply.header('cache-control', 'no-store');
      return sendHtml(reply, loginNeededPage(refusal), 403);
    });
  }
}

/** A page body in the layout, under its section of the menu. */
type Show = (section: Section, title: string, body: Html, charts?: boolean) => Html;

/** Runs, a run (and its live progress), the trajectories of a run and one trajectory. */
function routeRunPages(app: FastifyInstance, src: ViewerSources, show: Show): void {
  app.get('/runs', async (req, reply) => sendHtml(reply, show('runs', 'Runs', await runsPage(src, filtersOf(req.query as Query)))));
  app.get('/runs/:id', async (req, reply) => {
    const id = (req.params as Params).id!;
    return sendHtml(reply, show('runs', id, await runPage(src, id)));
  });
  // The live part of a run page, polled by viewer.js; tells it when the run has closed.
  app.get('/runs/:id/progress', async (req, reply) => {
    const id = (req.params as Params).id!;
    const description = await src.temporal(`workflow ${id}`, (c) => c.workflow.getHandle(id).describe());
    if (description.status.name !== 'RUNNING') reply.header('x-run-closed', description.status.name);
    return sendHtml(reply, progressSection(await readProgress(src, id)));
  });

  app.get('/trajectories/:run/:software', async (req, reply) => {
    const { run, software } = req.params as Params;
    return sendHtml(reply, show('runs', `${run} ${software}`, await trajectoriesPage(src, run!, software!)));
  });
  app.get('/trajectories/:run/:software/:task/:attempt', async (req, reply) => {
    const { run, software, task, attempt } = req.params as Params;
    const what = `${run}/${software}/${task}/${attempt}`;
    if (!/^(0|[1-9]\d{0,5})$/.test(attempt!)) throw notFound(`trajectory ${what}`, `attempt "${attempt}" is not an attempt number`);
    const ref = { run: run!, software: software!, task: task!, attempt: Number(attempt) };
    const label = (req.query as Query).verdict;
    return sendHtml(reply, show('runs', `${software} ${task}/${attempt}`, await trajectoryPage(src, ref, label)));
  });
}

/** Evaluation series and reports, training runs and checkpoints, judge evaluations. */
function routeReportPages(app: FastifyInstance, src: ViewerSources, show: Show): void {
  app.get('/evaluation', async (_req, reply) => sendHtml(reply, show('evaluation', 'Evaluation', await seriesListPage(src))));
  app.get('/evaluation/:series', async (req, reply) => {
    const { series } = req.params as Params;
    return sendHtml(reply, show('evaluation', `Evaluation ${series}`, await seriesPage(src, series!), true));
  });
  app.get('/evaluation/:series/:report', async (req, reply) => {
    const { series, report } = req.params as Params;
    return sendHtml(reply, show('evaluation', `Evaluation ${series} ${report}`, await seriesPage(src, series!, report), true));
  });

  app.get('/training', async (_req, reply) => sendHtml(reply, show('training', 'Training', await trainingListPage(src))));
  app.get('/training/:id', async (req, reply) => {
    const id = (req.params as Params).id!;
    return sendHtml(reply, show('training', id, await trainingPage(src, id), true));
  });
  app.get('/checkpoints/:name', async (req, reply) => {
    const name = (req.params as Params).name!;
    return sendHtml(reply, show('training', `Checkpoint ${name}`, await checkpointPage(src, name)));
  });

  app.get('/judge', async (_req, reply) => sendHtml(reply, show('judge', 'Judge evaluations', await judgeListPage(src))));
  app.get('/judge/:id', async (req, reply) => {
    const id = (req.params as Params).id!;
    return sendHtml(reply, show('judge', `Judge evaluation ${id}`, await judgePage(src, id), true));
  });
}

/** Objects of this deployment (screenshots, manifests, reports), streamed from S3 as they are. */
function routeObjects(app: FastifyInstance, src: ViewerSources): void {
  app.get('/objects/*', async (req, reply) => {
    const key = (req.params as Params)['*'] ?? '';
    const head = src.prefix === '' ? '' : `${src.prefix}/`;
    if (!key.startsWith(head) || key.split('/').some((part) => !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(part) || part.includes('..'))) {
      throw notFound(`object ${key}`, `the viewer shows objects under ${src.uri(head)} only`);
    }
    const object = await src.stream(key);
    if (object === undefined) throw notFound(`object ${key}`, `there is no ${src.uri(key)}`);
    const type = ownValue(OBJECT_TYPES, path.extname(key)) ?? BYTES;
    if (object.length !== undefined) reply.header('content-length', object.length);
    reply.headers(OBJECT_HEADERS);
    // Screenshots never change once written; manifests and reports may be rewritten.
    reply.header('cache-control', type === 'image/png' ? 'private, max-age=86400, immutable' : 'no-cache');
    return reply.type(type).send(object.body);
  });
}

export function createViewerApp(src: ViewerSources, login: ViewerLogin): FastifyInstance {
  const app = Fastify({ logger: false, routerOptions: { maxParamLength: 1000 } });
  const webUi = src.config.temporal.webUi;
  guard(app, login);
  const show: Show = (section, title, body, charts = false) => page({ title, section, body, charts, webUi });

  app.setErrorHandler((err, _req, reply) => {
    const failure = err instanceof ViewerError ? err : new ViewerError(500, 'The viewer failed on this page', (err as Error).message);
    return sendHtml(reply, errorPage(failure, webUi), failure.status);
  });
  app.setNotFoundHandler((req, reply) => sendHtml(reply, errorPage(notFound(`page ${req.url}`, 'the viewer has no such page'), webUi), 404));

  app.get('/', (_req, reply) => reply.redirect('/runs'));
  app.get(HEALTH, (_req, reply) => reply.type('text/plain').send('ok\n'));
  app.get('/favicon.ico', (_req, reply) => reply.code(204).send());
  app.get('/static/:file', (req, reply) => {
    const entry = ownValue(STATIC_FILES, (req.params as Params).file ?? '');
    if (entry === undefined) throw notFound(`static file ${(req.params as Params).file}`, `the viewer serves ${Object.keys(STATIC_FILES).join(', ')}`);
    return reply.type(entry.type).header('cache-control', 'no-cache').send(createReadStream(entry.file));
  });

  routeRunPages(app, src, show);
  routeReportPages(app, src, show);
  routeObjects(app, src);
  return app;
}

export interface Viewer {
  readonly url: string;
  readonly app: FastifyInstance;
  /** Whether it asks for the token, or runs open on loopback (and the warning to print). */
  readonly login: ViewerLogin;
  close(): Promise<void>;
}

/**
 * Serves the viewer of the deployment `config` describes on its host and port (temporal.yaml
 * `viewer`, loopback by default). It starts whether or not S3 and Temporal are up: pages say which
 * one is down. The dev stack's S3 credentials fill in where the environment names none. Throws,
 * naming viewer.auth.tokenEnv, where it would listen beyond loopback without a token.
 */
export async function startViewer(config: LoadedConfig, env: Env = process.env, listen: { host?: string; port?: number } = {}): Promise<Viewer> {
  const host = listen.host ?? config.viewer.host;
  const login = viewerLogin(config, host, env);
  const store = createObjectStore(config.storage, devEnv(config, env), { outageToleranceMs: 0, timeoutMs: 5_000 });
  const client = lazyClient(config);
  const app = createViewerApp(new ViewerSources(config, store, client), login);
  await app.listen({ host, port: listen.port ?? config.viewer.port });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: viewerUrl({ viewer: { host, port } }),
    app,
    login,
    async close() {
      await app.close();
      await client.connection.close();
      store.client.destroy();
    },
  };
}
