import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The layers of the code base, read from its sources: core/ is pure (no Node built-in and no I/O
 * layer reached from it, directly or through the apps' schemas and reference plans it uses); activities/ and config/ never import from workflows/, so
 * the types they share with workflows live in the lowest layer that uses them (core/ or config/).
 * The CLI and the viewer are two faces of one client: what both need (the Temporal connection,
 * history summaries, run queries) lives in client/, which imports neither, and the viewer never
 * imports the CLI.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(path.join(ROOT, file)).isDirectory()) return sources(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Every module an import or export statement of `file` names, resolved to a path from the root when relative. */
export function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1] as string);
  return specifiers.map((s) => (s.startsWith('.') ? path.normalize(path.join(path.dirname(file), s)) : s));
}

/** The text of a module named without its extension: `x.ts`, or `x/index.ts` for a folder. */
const readSource = (module: string): string => {
  const file = path.join(ROOT, `${module}.ts`);
  return readFileSync(existsSync(file) ? file : path.join(ROOT, module, 'index.ts'), 'utf8');
};

const importsIn = (dir: string): Array<{ file: string; target: string }> =>
  sources(dir).flatMap((file) => importsOf(file, readFileSync(path.join(ROOT, file), 'utf8')).map((target) => ({ file, target })));

describe('the layers of the code base', () => {
  it('reads import and export statements, single- and multi-line, and resolves relative ones', () => {
    const text = "import { a } from '../core/x';\nimport type {\n  B,\n} from './y';\nexport { c } from '../workflows/z';\nimport * as fs from 'node:fs';";
    assert.deepEqual(importsOf('activities/tasks/f.ts', text), ['activities/core/x', 'activities/tasks/y', 'activities/workflows/z', 'node:fs']);
  });

  it('core/ is pure: what it imports, directly or not, is core/ or the apps\' pure modules and zod; no Node built-in, no I/O layer', () => {
    const seen = new Set<string>();
    const reached: Array<{ file: string; target: string }> = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const target of importsOf(file, readSource(file))) {
        reached.push({ file, target });
        if (target.startsWith('core/') || target.startsWith('apps/')) visit(target);
      }
    };
    for (const file of sources('core')) visit(file.replace(/\.ts$/, ''));
    const impure = reached.filter(({ target }) => !(target.startsWith('core/') || target.startsWith('apps/') || target === 'zod'));
    assert.deepEqual(impure, []);
    assert.ok([...seen].some((f) => f.startsWith('apps/')), 'the walk follows core/ into the apps\' modules');
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
