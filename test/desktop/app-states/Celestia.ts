import type { CelestiaState } from '../../../apps/celestia/double';
import type { TaskState } from './types';

/** Celestia's /dump after the agent: `time`, `config` and the queried `entity` entries each task's `info` checks read. */

const visible = (names: string[], extra: Record<string, unknown> = {}) => Object.fromEntries(names.map((n) => [n, { visible: true, distance: 1e9, ...extra }]));

/** Heliocentric positions (km) in a solar eclipse: the Moon on the Earth–Sun line, so B-12's cosine is 1. */
const ECLIPSE = {
  Sol: { visible: false, distance: 1.496e8, position: [0, 0, 0] },
  Earth: { visible: true, distance: 300_000, position: [1.496e8, 0, 0] },
  Moon: { visible: true, distance: 12_000, position: [1.496e8 - 384_400, 1_000, 0] },
};

export const CELESTIA_STATES: Readonly<Record<string, TaskState<CelestiaState>>> = {
  'A-01': { state: { time: { value: 2400000.05, scale: 1, pause: false } }, off: { path: ['time', 'value'], value: 2400000.2 } },
  'A-02': { state: { time: { value: 2460000.5, scale: 0.0504, pause: false } }, off: { path: ['time', 'scale'], value: 0.052 } },
  'A-04': { state: { config: { render: { diagrams: true, boundaries: true } } }, off: { path: ['config', 'render', 'boundaries'], value: false } },
  'A-05': { state: { config: { render: { orbits: true }, orbit: { dwarfPlanet: true, moon: false } } }, off: { path: ['config', 'orbit', 'moon'], value: true } },
  'A-07': { state: { config: { starStyle: 2 } }, off: { path: ['config', 'starStyle'], value: 1 } },
  'A-08': { state: { config: { resolution: 2 } }, off: { path: ['config', 'resolution'], value: 1 } },
  'B-02': { state: { entity: { Neptune: { visible: true, distance: 120_000 } } }, off: { path: ['entity', 'Neptune', 'distance'], value: 150_001 } },
  'B-03': { state: {} },
  'B-05': {
    state: { entity: { Dysnomia: { visible: true, distance: 2_500, mark: { frameAxes: true, sunDirection: true } } } },
    off: { path: ['entity', 'Dysnomia', 'mark', 'sunDirection'], value: false },
  },
  'B-06': { state: { entity: { 'Sirius A': { visible: true, distance: 1.2e8 } } }, off: { path: ['entity', 'Sirius A', 'distance'], value: 1.7e8 } },
  'B-08': { state: { entity: { Jupiter: { visible: true, distance: 1.1e6 }, Callisto: { visible: true, distance: 9_000 } } }, off: { path: ['entity', 'Jupiter', 'visible'], value: false } },
  'B-09': { state: { time: { value: 2460000.5, scale: 1, pause: true }, entity: { Sol: { visible: true, distance: 5.9e9 }, Pluto: { visible: true, distance: 6_500 } } }, off: { path: ['time', 'pause'], value: false } },
  'B-11': {
    state: { config: { render: { orbits: true } }, entity: visible(['Sol', 'Mercury', 'Venus', 'Earth', 'Mars', 'Jupiter', 'Saturn', 'Uranus', 'Neptune']) },
    off: { path: ['entity', 'Uranus', 'visible'], value: false },
  },
  'B-12': { state: { entity: ECLIPSE }, off: { path: ['entity', 'Moon', 'position'], value: [1.496e8, 384_400, 0] } },
  'C-02': { state: {} },
  'C-03': { state: {} },
  'C-05': { state: {} },
  'C-06': { state: {} },
  'C-08': { state: {} },
  'C-09': { state: {} },
  'D-01': { state: { entity: { Iapetus: { visible: true, distance: 4_000 } } }, off: { path: ['entity', 'Iapetus', 'distance'], value: 4_600 } },
  'D-02': { state: {} },
};
