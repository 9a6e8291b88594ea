import type { AppModule } from './app-module';
import { app as celestia } from './celestia/index';
import { app as chimerax } from './chimerax/index';
import { app as grassgis } from './grassgis/index';
import { app as kalgebra } from './kalgebra/index';
import { app as lean } from './lean/index';
import { app as texstudio } from './texstudio/index';

/**
 * The registry: the applications the pipeline knows, one module per app folder (apps/<slug>/,
 * its index.ts), in the order of the CODA paper's table 1 and then ScienceBoard's other domains:
 * reports put their columns in this order. A lab adding its own app adds a folder and a line here
 * (docs/adding-an-application.md); every table by software is read from this list.
 */
export const APP_MODULES = [kalgebra, chimerax, grassgis, celestia, texstudio, lean] as const satisfies readonly AppModule[];

export type App = (typeof APP_MODULES)[number]['schema'];

// The task model's types know every app's funcs and checks by this declaration (core/task.ts RegisteredApps).
declare module '../core/task' {
  interface RegisteredApps {
    readonly registry: App;
  }
}

/** The apps' task schemas, in the registry's order. */
export const APPS: readonly App[] = APP_MODULES.map((app) => app.schema);
