import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The layers of the code base, read from its sources: core/ is pure and the bottom layer (it
 * imports only core/ and zod: the applications reach it as data, the `apps` arguments of its
 * functions, and as types by the registry's declaration into core/task.ts, never as imports); its
 * modules import one another without circles; io/ (HTTP to a VM, child processes) builds on core/
 * alone; apps/ builds on core/ and io/,
 * never on activities/ (which uses apps/ and io/ in its turn); activities/ and config/ never import
 * from workflows/, so the types they share with workflows live in the lowest layer that uses them
 * (core/ or config/). The CLI and the viewer are two faces of one client: what both need (the
 * Temporal connection, history summaries, run queries) lives in client/, which imports neither,
 * and the viewer never imports the CLI.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(path.join(ROOT, file)).isDirectory()) return sources(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Every module an import or export statement of `file` names (`import type` too), resolved to a path from the root when relative. */
export function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1] as string);
  return specifiers.map((s) => (s.startsWith('.') ? path.normalize(path.join(path.dirname(file), s)) : s));
}

/** The file of a module named without its extension: `x.ts`, or `x/index.ts` for a folder. */
const fileOf = (module: string): string => (existsSync(path.join(ROOT, `${module}.ts`)) ? `${module}.ts` : path.join(module, 'index.ts'));

const importsIn = (dir: string): Array<{ file: string; target: string }> =>
  sources(dir).flatMap((file) => importsOf(file, readFileSync(path.join(ROOT, file), 'utf8')).map((target) => ({ file, target })));

/** The circles of a graph of imports, each from its first module back to it, found once per circle's entry by depth-first search. */
function circles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const walk = (node: string, trail: string[]): void => {
    const at = trail.indexOf(node);
    if (at >= 0) {
      found.push([...trail.slice(at), node]);
      return;
    }
    if (done.has(node)) return;
    for (const next of edges.get(node) ?? []) walk(next, [...trail, node]);
    done.add(node);
  };
  for (const node of edges.keys()) walk(node, []);
  return found;
}

describe('the layers of the code base', () => {
  it('reads import and export statements, single- and multi-line, and resolves relative ones', () => {
    const text = "import { a } from '../core/x';\nimport type {\n  B,\n} from './y';\nexport { c } from '../workflows/z';\nimport * as fs from 'node:fs';";
    assert.deepEqual(importsOf('activities/tasks/f.ts', text), ['activities/core/x', 'activities/tasks/y', 'activities/workflows/z', 'node:fs']);
  });

  it('core/ is the bottom layer: it imports core/ and zod only (no Node built-in, no I/O layer, no apps/)', () => {
    const above = importsIn('core').filter(({ target }) => !(target.startsWith('core/') || target === 'zod'));
    assert.deepEqual(above, []);
  });

  it('core/ has no circle of imports', () => {
    const edges = new Map<string, string[]>();
    for (const { file, target } of importsIn('core')) if (target.startsWith('core/')) edges.set(file, [...(edges.get(file) ?? []), fileOf(target)]);
    assert.deepEqual(circles(edges), []);
  });

  it('finds a circle where there is one', () => {
    assert.deepEqual(circles(new Map([['a', ['b']], ['b', ['c', 'a']], ['c', []]])), [['a', 'b', 'a']]);
  });

  it('apps/ imports nothing from activities/, workflows/ or workers/', () => {
    const upward = importsIn('apps').filter(({ target }) => /^(activities|workflows|workers)\//.test(target));
    assert.deepEqual(upward, []);
  });

  it('io/ builds on core/ alone: it imports nothing from apps/, activities/ or above', () => {
    const upward = importsIn('io').filter(({ target }) => !(target.startsWith('core/') || target.startsWith('io/') || target === 'zod' || target.startsWith('node:')));
    assert.deepEqual(upward, []);
  });

  it('activities/ and config/ import nothing from workflows/', () => {
    const upward = [...importsIn('activities'), ...importsIn('config')].filter(({ target }) => target.startsWith('workflows/'));
    assert.deepEqual(upward, []);
  });

  it('viewer/ imports nothing from cli/, and client/ nothing from cli/ or viewer/', () => {
    const viewer = importsIn('viewer').filter(({ target }) => target.startsWith('cli/'));
    const client = importsIn('client').filter(({ target }) => target.startsWith('cli/') || target.startsWith('viewer/'));
    assert.deepEqual([...viewer, ...client], []);
  });
});
