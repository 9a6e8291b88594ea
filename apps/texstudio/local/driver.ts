import * as path from 'node:path';
import type { AppDriver, AppSession } from '../../local-driver';
import { homePath } from '../../../io/vm-commands';
import { waitFor } from '../../../io/process';
import { commandWords } from '../../../io/vm-commands';
import { evaluateTeXstudio } from './evaluators';
import { readTeXstudioState, type RunningTeXstudioState } from './state';

export interface TeXstudioDriverOptions {
  readonly pdflatex: string;
  readonly bibtex: string;
  /** How long one read of the accessibility tree may take before the app counts as hung. */
  readonly stateTimeoutMs: number;
  /** How long one pdflatex or bibtex run of a `compile` check may take. */
  readonly compileTimeoutMs: number;
}

export const DEFAULT_TEXSTUDIO_OPTIONS: TeXstudioDriverOptions = {
  pdflatex: 'pdflatex',
  bibtex: 'bibtex',
  stateTimeoutMs: 10_000,
  compileTimeoutMs: 60_000,
};

/**
 * Debian's stock TeXstudio on a local desktop. ScienceBoard's VMs start it with the task's
 * documents (`texstudio /home/user/atelier/refs.bib /home/user/atelier/main.tex`); here the
 * same documents open from the desktop's HOME, and the launch is done when the window is
 * maximized and shows the last one, as the VM's does. TeXstudio has no initialize steps of its
 * own; its checks read the documents and compile them (evaluators.ts).
 */
export function createTeXstudioDriver(options: TeXstudioDriverOptions = DEFAULT_TEXSTUDIO_OPTIONS): AppDriver {
  const read = async (session: AppSession, timeoutMs = options.stateTimeoutMs): Promise<RunningTeXstudioState> => {
    const state = await readTeXstudioState({ reader: session.atspi, pid: session.appPid, timeoutMs });
    if (!state.app) throw new Error('TeXstudio is not on the accessibility bus');
    return state;
  };

  return {
    env: { QT_ACCESSIBILITY: '1', QT_LINUX_ACCESSIBILITY_ALWAYS_ON: '1' },

    launchArgs(step, home) {
      const words = commandWords(step.command);
      const at = words.findIndex((w) => path.basename(w) === 'texstudio');
      if (at === -1) throw new Error(`${JSON.stringify(step.command)} does not run texstudio`);
      return words.slice(at + 1).map((word) => {
        if (word.startsWith('-')) throw new Error(`TeXstudio option ${JSON.stringify(word)} is not supported on local desktops (only documents to open)`);
        return homePath(word, home);
      });
    },

    async ready(session, args, timeoutMs, running) {
      const last = args.at(-1);
      let seen = 'nothing on the accessibility bus';
      await waitFor(
        async () => {
          if (!running()) throw new Error('TeXstudio is gone');
          const state = await read(session).catch(() => undefined);
          if (state === undefined) return undefined;
          const open = state.documents?.tabs.map((t) => t.name) ?? [];
          seen = `window ${state.window.width}x${state.window.height} "${state.title}", documents ${open.join(', ') || 'none'}`;
          const maximized = state.window.width === session.screen.width && state.window.height === session.screen.height;
          const documents = args.every((file) => open.includes(path.basename(file))) && (last === undefined || state.title === `${last} - TeXstudio`);
          return maximized && documents ? true : undefined;
        },
        timeoutMs,
        () => `TeXstudio's window was not ready (maximized, showing ${last ?? 'no document'}) within ${timeoutMs / 1000} s: ${seen}`,
        200,
      );
    },

    async initialize(step) {
      throw new Error(`TeXstudio has no initialize step "${step.func}"`);
    },

    async evaluate(task, stop, session) {
      return evaluateTeXstudio(task, stop, session.home, { pdflatex: options.pdflatex, bibtex: options.bibtex, timeoutMs: options.compileTimeoutMs });
    },

    async responsive(session) {
      return read(session, 5_000).then(
        () => true,
        () => false,
      );
    },
  };
}
