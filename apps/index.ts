import type { AppSchema } from '../core/task-common';
import { celestia } from './celestia/schema';
import { chimerax } from './chimerax/schema';
import { grassgis } from './grassgis/schema';
import { kalgebra } from './kalgebra/schema';
import { lean } from './lean/schema';
import { texstudio } from './texstudio/schema';

/**
 * The ScienceBoard applications the pipeline knows, one entry per app folder (apps/<slug>/), in
 * the order of the CODA paper's table 1 and then ScienceBoard's other domains: reports put their
 * columns in this order. A lab adding its own app adds a folder with its schema.ts and a line here.
 */
export const APPS = [kalgebra, chimerax, grassgis, celestia, texstudio, lean] as const satisfies readonly AppSchema[];

export type App = (typeof APPS)[number];

/** The app whose task files have `type` = `software`, if the pipeline knows it. */
export const appOf = (software: string): AppSchema | undefined => APPS.find((app) => app.software === software);

/** "Domain (Display)", as report columns name an app (e.g. "GIS (GRASS GIS)"). */
export const appColumn = (app: AppSchema): string => `${app.domain} (${app.display})`;
