import { z } from 'zod';
import type { CallOptions } from '../../io/osworld-client';
import { createVmHttp, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../io/vm-http';

/**
 * Client of the state server inside ScienceBoard's modified KAlgebra build. The app serves it on
 * the port given as its last argument (the «PORTLIKE» of a task's launch command, 8000 in
 * ScienceBoard), on the VM's own address; ScienceBoard's sci/KAlgebra/kalgebra.py calls exactly
 * these routes with these bodies.
 */

/** One plotted function as /func/{2,3}d describes it: `"(x, y)"` -> lies on it, plus its look (`color`, ...). */
export type PlottedFunction = Readonly<Record<string, boolean | string | number>>;

export interface KalgebraState {
  readonly url: string;
  /** GET /version: the state server's version, which proves the modified app runs. */
  version(options?: CallOptions): Promise<string>;
  /** GET /vars: every defined variable with its printed value. */
  variables(): Promise<Record<string, string>>;
  /** POST /tab: shows tab `index` (0 calculator, 1 2D graph, 2 3D graph, 3 dictionary). */
  selectTab(index: number): Promise<void>;
  /** POST /add/2d or /add/3d: plots `expr` (KAlgebra syntax, e.g. `x->e^x-1`). */
  plot(dimensions: 2 | 3, expr: string): Promise<void>;
  /**
   * POST /func/2d or /func/3d: one entry per plotted function, saying for each point whether it
   * lies on that function. Each coordinate is a JSON number as the task file spells it, sent as
   * is: the server names each point from the numbers as it received them ("(0, -1.0)"), and the
   * task looks its points up by those names. An empty `points` list just enumerates the functions.
   */
  functions(dimensions: 2 | 3, points: readonly (readonly string[])[]): Promise<PlottedFunction[]>;
}

const variablesAnswer = z.record(
  z.string(),
  z.union([z.string(), z.number().transform(String)]),
);

const plottedFunction = z.record(z.string(), z.union([z.boolean(), z.string(), z.number()]));

/** With a single function plotted the server answers the object itself, not a list of one. */
const functionsAnswer = z.union([z.array(plottedFunction), plottedFunction.transform((one) => [one])]);

export function createKalgebraState(url: string, policy: Partial<RetryPolicy> = {}): KalgebraState {
  const http = createVmHttp(url, { ...DEFAULT_RETRY_POLICY, ...policy });

  async function expectOk(path: string, body: { json: unknown } | { text: string }, idempotent: boolean): Promise<void> {
    const request = { method: 'POST', path, idempotent, ...body } as const;
    const answer = await http.text(request);
    if (answer.trim() !== 'OK') throw http.protocolError(request, `expected "OK", got ${JSON.stringify(answer.slice(0, 200))}`);
  }

  return {
    url: http.server,

    async version(opts = {}) {
      return (await http.text({ method: 'GET', path: '/version', idempotent: true, ...opts })).trim();
    },

    async variables() {
      return http.json({ method: 'GET', path: '/vars', idempotent: true }, variablesAnswer);
    },

    async selectTab(index) {
      await expectOk('/tab', { json: index }, true);
    },

    async plot(dimensions, expr) {
      await expectOk(`/add/${dimensions}d`, { text: expr }, false);
    },

    async functions(dimensions, points) {
      // Written as Python's json.dumps writes ScienceBoard's list (", " between items), numbers as spelled.
      const jsonText = `[${points.map((p) => `[${p.join(', ')}]`).join(', ')}]`;
      return http.json({ method: 'POST', path: `/func/${dimensions}d`, jsonText, idempotent: true }, functionsAnswer);
    },
  };
}
