import { appServerDouble, jsonBody, ViewError, type AppServerDouble } from '../double-server';

/**
 * TEST DOUBLE of the state server inside ScienceBoard's modified Celestia build (no Celestia VM
 * runs here). Written from ScienceBoard's client, sci/Celestia/celestia.py (ManagerMixin:
 * GET /version, POST /dump with the task's `query` list as a raw JSON body) and from what its
 * tasks' checks read from the dump (`time`, `config`, `entity[<name>]`); not compared with a
 * running Celestia. Like the app it serves only while Celestia runs (from its launch, on the port
 * the launch command gets for «PORTLIKE»), answers /version "0.1", answers a body that is not a
 * list of `{name, type}` with a 500, and has in `entity` only the bodies the query names (a name
 * it does not know is left out, so a check reading it fails).
 */

export interface CelestiaState {
  readonly time?: Record<string, unknown>;
  readonly config?: Record<string, unknown>;
  /** Every body the app knows, by name: what /dump answers for it when queried. */
  readonly entity?: Record<string, Record<string, unknown>>;
}

export interface CelestiaDouble extends AppServerDouble {
  /** What the app shows now (the test's stand-in for what the agent left). */
  state: CelestiaState;
  /** The queries /dump was sent. */
  readonly queries: unknown[];
}

export function celestiaDouble(port: number, state: CelestiaState = {}): CelestiaDouble {
  const queries: unknown[] = [];
  const double = appServerDouble(port, (request) => {
    const route = `${request.method} ${request.path}`;
    if (route === 'GET /version') return { body: '0.1' };
    if (route !== 'POST /dump') return undefined;
    const query = jsonBody(request);
    queries.push(query);
    if (!Array.isArray(query) || !query.every((q) => typeof q === 'object' && q !== null && typeof q.name === 'string' && Number.isInteger(q.type))) {
      throw new ViewError('query is not a list of {name, type}');
    }
    const known = self.state.entity ?? {};
    const entity = Object.fromEntries(query.flatMap((q: { name: string }) => (Object.hasOwn(known, q.name) ? [[q.name, known[q.name]]] : [])));
    return { body: { time: self.state.time ?? {}, config: self.state.config ?? {}, entity } };
  });
  const self: CelestiaDouble = Object.assign(double, { state, queries });
  return self;
}
