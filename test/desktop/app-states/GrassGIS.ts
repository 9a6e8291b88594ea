import { gcmdKey, type GrassState } from '../../../apps/grassgis/double';
import type { TaskState } from './types';

/** GRASS GIS's /dump (and /gcmd runs) after the agent, as each task's `info` and `db` checks read them. */

const layer = (name: string, opacity = 1) => ({ name, opacity, checked: true });
/** A layer's entry of `windows`: its display module's params, as the GUI's layer tree keeps them. */
const window = (name: string, params: Record<string, string>) => ({
  name,
  _data: [{ cmd: 'd.vect' }, { params: [{ name: 'map', value: name }, ...Object.entries(params).map(([n, value]) => ({ name: n, value }))] }],
});
const dump = (extra: Record<string, unknown>): GrassState => ({ dump: { layers: [layer('boundary_region@PERMANENT')], ...extra }, gcmd: {} });
const piemonte = (name: string, params: Record<string, string>): GrassState =>
  dump({ layers: [layer('boundary_region@PERMANENT'), layer(name)], windows: [window('boundary_region@PERMANENT', {}), window(name, params)] });

const SELECT = { map: 'boundary_region@PERMANENT', format: 'json' };
const columns = (names: Array<[string, string]>) => ({ info: { columns: names.map(([name, sql_type]) => ({ name, sql_type, is_number: sql_type !== 'CHARACTER' })) }, records: [] });

export const GRASS_STATES: Readonly<Record<string, TaskState<GrassState>>> = {
  'A-01': { state: dump({ layers: [layer('countries@PERMANENT')] }), off: { path: ['dump', 'layers', 0, 'name'], value: 'country_boundaries@PERMANENT' } },
  'A-02': { state: dump({ layers: [layer('countries@PERMANENT')] }), off: { path: ['dump', 'layers', 0, 'name'], value: 'natural_earth@PERMANENT' } },
  'A-04': {
    state: dump({ toolbars: { keys: ['workspace', 'data', 'tools', 'mapdisplay', 'vdigit'], layer: { name: 'countries@PERMANENT' } } }),
    off: { path: ['dump', 'toolbars', 'keys', 4], value: 'rdigit' },
  },
  'A-05': { state: dump({ statusbar: { mode: 3, scale: 100_000_000 } }), off: { path: ['dump', 'statusbar', 'mode'], value: 0 } },
  'A-07': { state: dump({ region: { center_easting: 385.02, center_northing: 19.95 } }), off: { path: ['dump', 'region', 'center_northing'], value: 20.2 } },
  'A-08': { state: dump({ statusbar: { mode: 0, scale: 25.04 }, region: { n: 44, s: 41, e: 28.5, w: 22.5 } }), off: { path: ['dump', 'region', 'w'], value: 23 } },
  'A-10': { state: dump({}) },
  'B-01': { state: dump({ layers: [layer('countries@PERMANENT', 0.5)] }), off: { path: ['dump', 'layers', 0, 'opacity'], value: 0.55 } },
  'B-03': { state: dump({ windows: [window('boundary_region@PERMANENT', { display: 'shape,cat,topo' })] }), off: { path: ['dump', 'windows', 0, '_data', 1, 'params', 1, 'value'], value: 'shape,cat' } },
  'B-04': { state: dump({ windows: [window('boundary_region@PERMANENT', { fill_color: '191:191:191:255' })] }), off: { path: ['dump', 'windows', 0, '_data', 1, 'params', 1, 'value'], value: '200:200:200:255' } },
  'B-06': { state: piemonte('railroads@PERMANENT', { width: '2' }), off: { path: ['dump', 'windows', 1, '_data', 1, 'params', 1, 'value'], value: '1' } },
  'B-07': { state: piemonte('firestations@PERMANENT', { icon: 'basic/marker' }), off: { path: ['dump', 'windows', 1, '_data', 1, 'params', 1, 'value'], value: 'basic/x' } },
  'B-09': { state: piemonte('schools@PERMANENT', { where: 'wheelchair = "yes"' }), off: { path: ['dump', 'windows', 1, '_data', 1, 'params', 1, 'value'], value: 'wheelchair = "no"' } },
  'B-10': {
    state: dump({ windows: [window('boundary_region@PERMANENT', { attribute_column: 'NOME', font: 'Ubuntu:Bold', xref: 'center' })] }),
    off: { path: ['dump', 'windows', 0, '_data', 1, 'params', 3, 'value'], value: 'left' },
  },
  'B-12': { state: dump({ output: 'north: 5157280\nsouth: 4893305\nn: 263975\n' }), off: { path: ['dump', 'output'], value: 'north: 5157280\nsouth: 4893305\nn: 263974\n' } },
  'B-13': { state: dump({}) },
  'C-02': { state: dump({}) },
  'C-03': { state: dump({}) },
  'C-05': { state: dump({}) },
  'C-06': { state: dump({}) },
  'D-01': {
    state: { dump: {}, gcmd: { [gcmdKey('v.db.select', SELECT)]: { stdout: columns([['cat', 'INTEGER'], ['NOME', 'CHARACTER'], ['COLOR', 'CHARACTER']]) } } },
    off: { path: ['gcmd', gcmdKey('v.db.select', SELECT), 'stdout', 'info', 'columns', 2, 'sql_type'], value: 'INTEGER' },
  },
  'D-02': {
    state: { dump: {}, gcmd: { [gcmdKey('v.db.select', SELECT)]: { stdout: columns([['cat', 'INTEGER'], ['NOME', 'CHARACTER']]) } } },
    off: { path: ['gcmd', gcmdKey('v.db.select', SELECT), 'stdout', 'info', 'columns', 1, 'name'], value: 'ISTAT' },
  },
  'D-04': {
    state: { dump: {}, gcmd: { [gcmdKey('v.to.db', { flags: 'p', map: 'countries@PERMANENT', type: 'point', option: 'coor' })]: { stdout: 'cat|x|y|z\n257|-79.1050308691105|8.348947891274|0\n' } } },
    off: { path: ['gcmd', gcmdKey('v.to.db', { flags: 'p', map: 'countries@PERMANENT', type: 'point', option: 'coor' }), 'stdout'], value: 'cat|x|y|z\n257|-79.1050308691105|8.348947891275|0\n' },
  },
};
