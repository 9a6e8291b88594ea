import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stringifyPythonJson } from '../../core/python-json';

/**
 * TEST DOUBLE of ChimeraX's REST server (`remotecontrol rest start json true port N`) as the VM's
 * /chimerax/run reaches it (no ChimeraX runs here). Written from ScienceBoard's client,
 * sci/ChimeraX/chimerax.py and task.py: every answer is ChimeraX's JSON one (`python values`,
 * `json values`, `log messages` by level, `error` null or {type, message}); `states <dir> <stamp>`
 * (the chimerax-states bundle of ScienceBoard's VM) writes the session's states as one flat JSON
 * object to <dir>/<stamp>.json, as Python's json.dump writes it (NaN, Infinity); `info <spec>` logs one note whose lines the test gives. Not compared
 * with a running ChimeraX. Like ChimeraX it answers nothing until launched (the VM's /chimerax/run
 * then fails with a ConnectionError 500), opens only the structures it knows (a PDB id or a file
 * of the VM) and answers a command it does not know with a UserError.
 */

export interface ChimeraxState {
  /** The flat states dump `states` writes: dotted attribute path -> value. */
  states: Record<string, unknown>;
  /** The lines `info <spec>` logs, by spec (`rescolor /A`, `sel`). */
  info: Record<string, string[]>;
}

export interface ChimeraxDouble {
  state: ChimeraxState;
  readonly commands: string[];
  running(): boolean;
  launch(): void;
  quit(): void;
  /** The REST answer to `command`, or undefined while ChimeraX does not run (nothing listens). */
  run(command: string): Record<string, unknown> | undefined;
}

/** Structures ChimeraX can fetch in ScienceBoard's VM (its PDB cache, vm_config/pack/.../PDB) and AlphaFold's. */
export const FETCHABLE = ['102l', '1dns', '251d', '2olx', '3bna', '3ppd', '4r0u', '4tut'];
const ALPHAFOLD = ['A8Z1J3'];

const answer = (notes: string[], error: { type: string; message: string } | null = null): Record<string, unknown> => ({
  'python values': [],
  'json values': [],
  'log messages': { note: notes, info: [], warning: [], error: error === null ? [] : [error.message], bug: [], status: [] },
  error,
});

/** `vmRoot`: the folder standing for the VM's / (where `states` writes and `open <file>` reads). */
export function chimeraxDouble(vmRoot: string, state: ChimeraxState = { states: {}, info: {} }): ChimeraxDouble {
  const commands: string[] = [];
  let running = false;
  const userError = (message: string) => answer([], { type: 'UserError', message });
  const self: ChimeraxDouble = {
    state,
    commands,
    running: () => running,
    launch: () => void (running = true),
    quit: () => void (running = false),
    run(command) {
      if (!running) return undefined;
      commands.push(command);
      const [verb = '', ...args] = command.trim().split(/\s+/);
      switch (verb) {
        case 'log':
          return args[0] === 'clear' ? answer([]) : userError(`Unknown command: ${command}`);
        case 'open': {
          const name = args.join(' ');
          if (FETCHABLE.includes(name.toLowerCase())) return answer([`Summary of feedback from opening ${name} fetched from pdb`]);
          if (name.startsWith('/') && existsIn(vmRoot, name)) return answer([`Opened ${path.basename(name)}`]);
          return userError(`Fetch failed for ${name}`);
        }
        case 'turn':
          return /^[xyz]$/.test(args[0] ?? '') && Number.isFinite(Number(args[1] ?? '90')) ? answer([]) : userError(`Expected an axis: ${command}`);
        case 'alphafold':
          return args[0] === 'match' && ALPHAFOLD.includes(args[1] ?? '') ? answer([`1 AlphaFold model found using UniProt identifier: ${args[1]}`]) : userError(`No AlphaFold model for ${args.slice(1).join(' ')}`);
        case 'version':
          return answer(['UCSF ChimeraX version: 1.8 (2024-06-10)']);
        case 'color':
        case 'rainbow':
          return answer([]);
        case 'states': {
          const [dir, stamp] = args;
          if (dir === undefined || stamp === undefined) return userError('Missing required argument');
          const file = path.join(vmRoot, path.resolve('/', dir), `${stamp}.json`);
          mkdirSync(path.dirname(file), { recursive: true });
          // As the bundle's json.dump writes it: NaN and Infinity as Python's constants.
          writeFileSync(file, stringifyPythonJson(self.state.states));
          return answer([]);
        }
        case 'info': {
          const spec = args.join(' ');
          const lines = self.state.info[spec];
          return lines === undefined ? answer([]) : answer([lines.join('\n')]);
        }
        default:
          return userError(`Unknown command: ${command}`);
      }
    },
  };
  return self;
}

function existsIn(root: string, vmPath: string): boolean {
  try {
    return statSync(path.join(root, path.resolve('/', vmPath))).isFile();
  } catch {
    return false;
  }
}
