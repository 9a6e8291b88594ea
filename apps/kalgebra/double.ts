import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readBody } from '../../doubles/openai-server';
import { listenLocally, send } from '../double-server';

/**
 * TEST DOUBLE of the state server inside ScienceBoard's modified KAlgebra build (the routes
 * sci/KAlgebra/kalgebra.py calls): GET /vars, GET /version, POST /tab (a JSON index),
 * POST /add/2d|3d (the expression as raw text), POST /func/2d|3d (JSON points -> one object per
 * plotted function, the object itself when only one is plotted, each point named from its
 * numbers as the request spells them, as the real server names it: `serverName`). It cannot parse KAlgebra, so
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
  /** What the app's GUI does when a tab is chosen (as POST /tab). */
  showTab(index: number): void;
  /**
   * What the app does when a function is added to its 2D or 3D graph (as POST /add): false for an
   * expression the double has no residual for.
   */
  plot(dimensions: 2 | 3, expr: string): boolean;
  /** The next `times` requests answer this status. */
  failNext(status: number, times?: number): void;
  close(): Promise<void>;
}

/** POST /func's answer: for each function plotted in these dimensions, its colour and whether each point lies on it. */
function onCurves(curves: Readonly<Record<string, Residual>>, plotted: readonly PlottedCurve[], dimensions: 2 | 3, points: readonly Coordinate[][]): Array<Record<string, boolean | string>> {
  return plotted
    .filter((curve) => curve.dimensions === dimensions)
    .map((curve) => {
      const residual = curves[curve.expr] as Residual;
      const entry: Record<string, boolean | string> = { color: curve.color };
      for (const point of points) {
        const values = point.map((c) => c.value);
        const scale = Math.max(1, ...values.map(Math.abs));
        entry[`(${point.map((c) => c.name).join(', ')})`] = Math.abs(residual(values)) <= 1e-6 * scale;
      }
      return entry;
    });
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
        if (!plot(route.endsWith('2d') ? 2 : 3, body)) return send(res, 500, 'text/plain', `test double knows no curve for ${JSON.stringify(body)}`);
        return send(res, 200, 'text/plain', 'OK');
      }
      case 'POST /func/2d':
      case 'POST /func/3d': {
        const answers = onCurves(curves, plotted, route.endsWith('2d') ? 2 : 3, readPoints(body));
        return sendJson(res, answers.length === 1 ? answers[0] : answers);
      }
      default:
        return send(res, 404, 'text/plain', 'not found');
    }
  }

  function plot(dimensions: 2 | 3, expr: string): boolean {
    if (curves[expr] === undefined) return false;
    plotted.push({ expr, dimensions, color: options.color ?? '#000000' });
    return true;
  }

  const port = await listenLocally(server, options.port);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    variables,
    plotted,
    tab: () => tab,
    requests,
    showTab(index) {
      tab = index;
    },
    plot,
    failNext(status, times = 1) {
      failing = { status, left: times };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A coordinate of a /func request: its value, and its name as the real server writes it. */
interface Coordinate {
  readonly value: number;
  readonly name: string;
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { readonly source?: string }) => unknown;

/** The points of a /func body, each number named from its spelling in the request. */
function readPoints(body: string): Coordinate[][] {
  const parsed = (JSON.parse as (text: string, reviver: Reviver) => unknown)(body, (_key, value, context) =>
    typeof value === 'number' ? { value, name: serverName(context?.source ?? String(value)) } : value,
  );
  return parsed as Coordinate[][];
}

/**
 * A number as the real server names it: it re-writes each number of the request with its JSON
 * library's dump(), which keeps a number written without fraction or exponent an integer
 * (`33` -> "33", `-0` -> "0") and writes any other as a double: its shortest digits, ".0" when it is
 * whole (`-1.0` -> "-1.0", `-0.0` -> "-0.0", `1e2` -> "100.0"), in exponent form ("1e-05",
 * "1e+16") below 1e-4 and from 1e15 up (fixed notation holds at most 15 digits before the point).
 */
export function serverName(source: string): string {
  if (/^-?\d+$/.test(source)) return BigInt(source).toString();
  const value = Number(source);
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  const [mantissa = '', exponent = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  // The value is 0.digits × 10^n.
  const n = Number(exponent) + 1;
  const k = digits.length;
  if (k <= n && n <= 15) return `${sign}${digits}${'0'.repeat(n - k)}.0`;
  if (0 < n && n <= 15) return `${sign}${digits.slice(0, n)}.${digits.slice(n)}`;
  if (-4 < n && n <= 0) return `${sign}0.${'0'.repeat(-n)}${digits}`;
  const e = n - 1;
  return `${sign}${digits[0]}${k > 1 ? `.${digits.slice(1)}` : ''}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

function sendJson(res: ServerResponse, value: unknown): void {
  send(res, 200, 'application/json', JSON.stringify(value));
}
