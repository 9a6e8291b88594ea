import { appServerDouble, jsonBody, ViewError, type AppServerDouble } from '../double-server';

/**
 * TEST DOUBLE of the Flask server ScienceBoard's GRASS GIS build runs inside the GUI (no GRASS VM
 * runs here). Written from ScienceBoard's client, sci/GrassGIS/grass.py (ManagerMixin): GET /version,
 * GET /init/cmd, POST /init/map {grassdb, location, mapset}, POST /init/layer {query},
 * POST /init/scale {scale} (each "OK"), GET /dump (the GUI's state as JSON), POST /gcmd
 * {cmd, kwargs} (a GRASS module's run: {stdout, stderr, returncode}, stdout parsed when the
 * module printed JSON; the text `ERROR` when the GUI did not run it in time), POST /quit (the app
 * exits: a 500). Not compared with a running GRASS. Like the app it serves only while GRASS runs;
 * /init/map of a location or mapset the grassdata does not have, /init/layer of a map the mapset
 * does not have, and a body without the fields fail with a 500 (the view raises), as does a module
 * that fails (a nonzero exit, or one it has no answer for: GRASS's read_command raises).
 */

export interface GrassState {
  /** What /dump answers: `layers`, `toolbars`, `statusbar`, `region`, `windows`, `output`... */
  dump: Record<string, unknown>;
  /** /gcmd answers by `cmd` and its kwargs as JSON (`v.db.select {"map":...}`); 'ERROR' when the GUI times out on it. */
  gcmd: Record<string, { stdout: unknown; stderr?: string; returncode?: number } | 'ERROR'>;
}

/** The VM's grassdata: location -> mapset -> maps (ScienceBoard's snapshot has these three). */
export const SNAPSHOT_GRASSDATA: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  world_latlong_wgs84: { PERMANENT: ['country_boundaries'] },
  natural_earth_dataset: { PERMANENT: ['countries', 'natural_earth'] },
  grassdata_piemonte_utm32n_wgs84_grass7: { PERMANENT: ['boundary_region', 'railroads', 'firestations', 'schools'] },
};

export interface GrassDouble extends AppServerDouble {
  state: GrassState;
  /** The init calls it ran: `map natural_earth_dataset/PERMANENT`, `layer countries`, `scale 25`, `cmd`. */
  readonly initialized: string[];
}

export const gcmdKey = (cmd: string, kwargs: unknown): string => `${cmd} ${JSON.stringify(kwargs)}`;

export function grassDouble(port: number, state: GrassState = { dump: {}, gcmd: {} }, grassdata = SNAPSHOT_GRASSDATA): GrassDouble {
  const initialized: string[] = [];
  let mapset: readonly string[] | undefined;
  const fields = (body: unknown, ...names: string[]): Record<string, unknown> => {
    if (typeof body !== 'object' || body === null || !names.every((n) => n in body)) throw new ViewError(`missing ${names.join(', ')}`);
    return body as Record<string, unknown>;
  };
  const double = appServerDouble(port, (request) => {
    switch (`${request.method} ${request.path}`) {
      case 'GET /version':
        return { body: '0.1' };
      case 'GET /init/cmd':
        initialized.push('cmd');
        return { body: 'OK' };
      case 'POST /init/map': {
        const { grassdb, location, mapset: set } = fields(jsonBody(request), 'grassdb', 'location', 'mapset');
        const maps = grassdb === '/home/user/grassdata' ? grassdata[String(location)]?.[String(set)] : undefined;
        if (maps === undefined) throw new ViewError(`no mapset ${String(location)}/${String(set)} in ${String(grassdb)}`);
        mapset = maps;
        initialized.push(`map ${String(location)}/${String(set)}`);
        return { body: 'OK' };
      }
      case 'POST /init/layer': {
        const { query } = fields(jsonBody(request), 'query');
        const name = (query as { name?: unknown } | null)?.name;
        if (typeof name !== 'string' || !(mapset ?? grassdata.world_latlong_wgs84?.PERMANENT ?? []).includes(name)) throw new ViewError(`no map ${String(name)}`);
        initialized.push(`layer ${name}`);
        return { body: 'OK' };
      }
      case 'POST /init/scale': {
        const { scale } = fields(jsonBody(request), 'scale');
        if (typeof scale !== 'number') throw new ViewError('scale is not a number');
        initialized.push(`scale ${scale}`);
        return { body: 'OK' };
      }
      case 'GET /dump':
        return { body: self.state.dump };
      case 'POST /gcmd': {
        const { cmd, kwargs } = fields(jsonBody(request), 'cmd', 'kwargs');
        const ran = self.state.gcmd[gcmdKey(String(cmd), kwargs)];
        if (ran === 'ERROR') return { body: 'ERROR', type: 'text/html; charset=utf-8' };
        if (ran === undefined || (ran.returncode ?? 0) !== 0) throw new ViewError(`CalledModuleError: module ${String(cmd)} failed`);
        return { body: { stdout: ran.stdout, stderr: ran.stderr ?? '', returncode: 0 } };
      }
      case 'POST /quit':
        // The app exits while answering: its 500 goes out, then nothing listens.
        setTimeout(() => void self.quit(), 50);
        throw new ViewError('the app exits');
      default:
        return undefined;
    }
  });
  const self: GrassDouble = Object.assign(double, { state, initialized });
  return self;
}
