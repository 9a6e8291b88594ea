import type { ChimeraxState } from '../../../apps/chimerax/double';
import type { TaskState } from './types';

/**
 * ChimeraX's states dump (dotted attribute paths), its `info` log lines and the VM files it wrote,
 * after the agent, as each task's checks read them.
 */
export type ChimeraxTaskState = ChimeraxState & { readonly files?: Readonly<Record<string, string>> };

const MODEL = '_state_containers.models._models.(1,)';
const VIEW = `${MODEL}._atoms_drawing._draw_shape.bindings._opengl_context.window.view`;
const base = (name: string, extra: Record<string, unknown> = {}): ChimeraxTaskState => ({ states: { [`${MODEL}._name`]: name, [`${MODEL}.display`]: true, ...extra }, info: {} });
const colors = (residues: number, color: string, last = color) => Array.from({ length: residues }, (_, i) => `#1/A:${i + 1} color ${i === residues - 1 ? last : color}`);
/** The hydrogen-bond pseudobond group ChimeraX adds as submodel (1, 1). */
const HBONDS = `_state_containers.models._models.(1, 1)`;
/** Where a file's text has the day it is written on (test/support/day.ts: D-03's log check asks for the day at evaluation). */
export const DAY_MARK = '{day}';
const BEST_MODEL = '/home/user/Downloads/ChimeraX/AlphaFold/prediction_1/best_model.pdb';
/** AlphaFold's prediction in the VM (D-03): its model's atoms and its log of the day it is written. */
const PREDICTION: Readonly<Record<string, string>> = {
  [BEST_MODEL]: ['ATOM     14  CA  ASN A   2', 'ATOM     28  OD2 ASP A   4', 'ATOM     57  CB  LEU A   8'].map((atom) => `${atom}      1.000  1.000  1.000\n`).join(''),
  '/home/user/Downloads/ChimeraX/AlphaFold/prediction_1/log.txt': `${DAY_MARK} 10:00:00 AlphaFold prediction finished\n`,
};
const DARK_RED = `[${Array.from({ length: 20 }, () => '[139   0   0 255]').join(' ')}]`;

export const CHIMERAX_STATES: Readonly<Record<string, TaskState<ChimeraxTaskState>>> = {
  'A-01': { state: base('2olx'), off: { path: ['states', `${MODEL}._name`], value: '2olx.cif' } },
  'A-02': { state: base('prot.cif'), off: { path: ['states', `${MODEL}._name`], value: '3ppd' } },
  'A-04': {
    state: { ...base('3ppd', { [`${MODEL}._redraw_needed.cached_drawing_bounds.xyz_min`]: '[ -1.37   -6.882 -12.582]' }), info: { 'rescolor /A': colors(9, '#7b68ee') } },
    off: { path: ['info', 'rescolor /A', 8], value: '#1/A:9 color #d2b48c' },
  },
  'A-05': {
    state: {
      ...base('1dns'),
      info: {
        sel: ['N1', 'C2', 'C3', 'C4', 'N5', 'C6', 'C7'].map((atom) => `atom id /A:9@${atom} idatm_type ${atom.startsWith('N') ? 'N3+' : 'C3'}`),
        'rescolor /A': colors(9, '#d2b48c', '#ff00ff'),
      },
    },
    off: { path: ['info', 'sel', 6], value: 'atom id /A:9@C8 idatm_type C3' },
  },
  'A-07': { state: base('1dns', { [`${VIEW}._background_rgba`]: '[0.5019608 0.5019608 0.5019608 0.       ]' }), off: { path: ['states', `${VIEW}._background_rgba`], value: '[0. 0. 0. 1.]' } },
  'A-08': {
    state: base('251d', {
      [`${VIEW}._render.lighting.ambient_light_intensity`]: 1.45,
      [`${VIEW}._render.lighting.multishadow_depth_bias`]: 0.01,
      [`${VIEW}._render.silhouette.depth_jump`]: 0.01,
    }),
    off: { path: ['states', `${VIEW}._render.silhouette.depth_jump`], value: 0.03 },
  },
  'A-10': { state: base('3bna', { [`${MODEL}._ribbon_drawing.name`]: 'ribbon' }), off: { path: ['states', `${MODEL}._nucleotide_info`], value: {} } },
  'A-11': { state: base('3bna', { [`${MODEL}._ladder_params.stubs_only`]: false }), off: { path: ['states', `${MODEL}._ladder_params.stubs_only`], value: true } },
  'B-02': {
    state: base('4tut', { [`${HBONDS}._name`]: 'hydrogen bonds', [`${HBONDS}._pbond_drawing.name`]: 'pbonds', [`${HBONDS}._pbond_drawing._opaque_color_count`]: 12 }),
    off: { path: ['states', `${HBONDS}._pbond_drawing._opaque_color_count`], value: 11 },
  },
  'B-03': { state: base('4tut', { [`${HBONDS}._name`]: 'hydrogen bonds', [`${HBONDS}._pbond_drawing._colors`]: DARK_RED }), off: { path: ['states', `${HBONDS}._pbond_drawing._colors`], value: DARK_RED.replace('139', '255') } },
  'B-05': {
    state: base('102l', { '_state_containers.models._models.(2,)._name': 'Color key', '_state_containers.models._models.(2,)._border': false, '_state_containers.models._models.(2,)._ticks': true }),
    off: { path: ['states', '_state_containers.models._models.(2,)._ticks'], value: false },
  },
  'B-06': {
    state: base('102l', { '_state_containers.scalebar.drawing._name': 'scalebar', '_state_containers.scalebar.scalebar_width': 10, '_state_containers.scalebar.scalebar_height': 4.0 }),
    off: { path: ['states', '_state_containers.scalebar.scalebar_height'], value: 5 },
  },
  'B-08': { state: base('4r0u') },
  'C-01': { state: base('3ppd') },
  'C-03': { state: base('251d') },
  'C-04': { state: base('4r0u') },
  'C-06': { state: base('2olx') },
  'C-07': { state: base('2olx') },
  'D-02': {
    state: base('A8Z1J3', { '_state_containers.models._models.(1, 2)._name': 'contacts', '_state_containers.tools.log.page_source': '<html>41 distances between residues</html>' }),
    off: { path: ['states', '_state_containers.tools.log.page_source'], value: '<html>40 distances between residues</html>' },
  },
  'D-03': { state: { ...base('prediction_1'), files: PREDICTION }, off: { path: ['files', BEST_MODEL], value: (PREDICTION[BEST_MODEL] ?? '').replace('LEU', 'ILE') } },
};
