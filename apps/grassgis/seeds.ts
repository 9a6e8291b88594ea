import { fixed, sum, unplanned, type Template } from '../seeds';

/**
 * TEST DOUBLE support: GRASS GIS's seeds for the scripted task-generator double; their plans are the stop alone (apps/stop-reference.ts).
 */

export const SEEDS: readonly Template[] = [
  fixed('In GRASS GIS, switch to the natural_earth_dataset location and show the countries map.', 'DONE'),
  sum((a, b) => `In GRASS GIS, a region spans ${a} cells plus ${b} cells of margin; how many cells is that? Submit the number as your answer.`, /^In GRASS GIS, a region spans (\d+) cells plus (\d+) cells of margin; how many cells is that\? Submit the number as your answer\.$/),
  unplanned(['Georeference a scanned map in GRASS GIS.', 'Publish the current map of GRASS GIS as a web map service.']),
];
