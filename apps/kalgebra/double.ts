import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readBody } from '../../doubles/openai-server';
import { listenLocally, send } from '../double-server';

/**
 * TEST DOUBLE of the state server inside ScienceBoard's modified KAlgebra build (the routes
 * sci/KAlgebra/kalgebra.py calls): GET /vars, GET /version, POST /tab (a JSON index),
 * POST /add/2d|3d (the expression as raw text), POST /func/2d|3d (JSON points -> one object per
 * plotted function, the object itself when only one is plotted). It cannot parse KAlgebra, so
 * each expression a test plots must be given as a residual function: a point lies on the curve
 * when the residual is within 1e-6 (relative to the point's size). Listens on 127.0.0.1 only.
 */

/** Residual of a curve or surface at a point: 0 on it. */
export type Residual = (point: readonly number[]) => number;

export interface KalgebraStateDoubleOptions {
  /** The expressions tests may plot, by the exact text sent to /add. */
  readonly curves?: Readonly<Record<string, Residual>>;
  readonly variables?: Readonly<Record<string, string>>;
  /** Colour every new function gets, as KAlgebra's first plot colour. */
  readonly color?: string;
  readonly port?: number;
}

export interface PlottedCurve {
  readonly expr: string;
  readonly dimensions: 2 | 3;
  readonly color: string;
}

export interface KalgebraStateDouble {
  readonly url: string;
  readonly port: number;
  readonly variables: Record<string, string>;
  readonly plotted: PlottedCurve[];
  readonly tab: () => number;
  readonly requests: Array<{ method: string; path: string; contentType: string; body: string }>;
  /** The next `times` requests answer this status. */
  failNext(status: number, times?: number): void;
  close(): Promise<void>;
}

export async function startKalgebraStateDouble(options: KalgebraStateDoubleOptions = {}): Promise<KalgebraStateDouble> {
  const curves = options.curves ?? {};
  const variables: Record<string, string> = { ...options.variables };
  const plotted: PlottedCurve[] = [];
  const requests: KalgebraStateDouble['requests'] = [];
  let tab = 0;
  let failing = { status: 0, left: 0 };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => send(res, 500, 'text/plain', `double failed: ${String(err)}`));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://double').pathname;
    requests.push({ method: req.method ?? '', path, contentType: req.headers['content-type'] ?? '', body });
    if (failing.left > 0) {
      failing = { ...failing, left: failing.left - 1 };
      return send(res, failing.status, 'text/plain', 'injected failure');
    }
    const route = `${req.method} ${path}`;
    switch (route) {
      case 'GET /version':
        return send(res, 200, 'text/plain', '0.1');
      case 'GET /vars':
        return sendJson(res, variables);
      case 'POST /tab': {
        const index: unknown = JSON.parse(body);
        if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 3) return send(res, 400, 'text/plain', 'bad tab');
        tab = index;
        return send(res, 200, 'text/plain', 'OK');
      }
      case 'POST /add/2d':
      case 'POST /add/3d': {
        if (curves[body] === undefined) return send(res, 500, 'text/plain', `test double knows no curve for ${JSON.stringify(body)}`);
        plotted.push({ expr: body, dimensions: route.endsWith('2d') ? 2 : 3, color: options.color ?? '#000000' });
        return send(res, 200, 'text/plain', 'OK');
      }
      case 'POST /func/2d':
      case 'POST /func/3d': {
        const dimensions = route.endsWith('2d') ? 2 : 3;
        const points = JSON.parse(body) as number[][];
        const answers = plotted
          .filter((curve) => curve.dimensions === dimensions)
          .map((curve) => {
            const residual = curves[curve.expr] as Residual;
            const entry: Record<string, boolean | string> = { color: curve.color };
            for (const point of points) {
              const scale = Math.max(1, ...point.map(Math.abs));
              entry[`(${point.join(', ')})`] = Math.abs(residual(point)) <= 1e-6 * scale;
            }
            return entry;
          });
        return sendJson(res, answers.length === 1 ? answers[0] : answers);
      }
      default:
        return send(res, 404, 'text/plain', 'not found');
    }
  }

  const port = await listenLocally(server, options.port);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    variables,
    plotted,
    tab: () => tab,
    requests,
    failNext(status, times = 1) {
      failing = { status, left: times };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sendJson(res: ServerResponse, value: unknown): void {
  send(res, 200, 'application/json', JSON.stringify(value));
}
