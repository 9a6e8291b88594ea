import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The workflows' layout (issue 31): one folder per workflow family holding its workflows and the
 * contract of their inputs, no file holding the contracts of several families, and no circle of
 * imports among the workflow modules (a circle means two modules that cannot be read apart).
 */

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const FAMILIES: Readonly<Record<string, readonly string[]>> = {
  rollout: ['Rollout', 'Batch'],
  judging: ['Judge', 'JudgeRun', 'JudgeEvaluation'],
  tasks: ['TaskGeneration'],
  evaluation: ['Evaluation'],
  training: ['Specialization', 'Generalization'],
};

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** The workflow modules `file` imports (type imports too), as paths from the root without extension. */
function workflowImports(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)]
    .map((m) => path.normalize(path.join(path.dirname(file), m[1] as string)))
    .map((target) => (existsSync(path.join(ROOT, `${target}.ts`)) ? target : path.join(target, 'index')))
    .filter((target) => target.startsWith(`workflows${path.sep}`));
}

/** The circles of imports among `graph`'s modules (at least one in each tangle), each named by the path around it. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found = new Set<string>();
  const finished = new Set<string>();
  const visit = (module: string, trail: string[]): void => {
    const at = trail.indexOf(module);
    if (at >= 0) {
      found.add([...trail.slice(at), module].join(' -> '));
      return;
    }
    if (finished.has(module)) return;
    for (const next of graph.get(module) ?? []) visit(next, [...trail, module]);
    finished.add(module);
  };
  for (const module of [...graph.keys()].sort()) visit(module, []);
  return [...found];
}

describe('the workflows layout', () => {
  it('finds a circle of imports when there is one, and none when there is not', () => {
    assert.deepEqual(circles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), ['a -> b -> c -> a']);
    assert.deepEqual(circles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), []);
  });

  it('no circle of imports among the workflow modules', () => {
    const graph = new Map(sources('workflows').map((file) => [file.replace(/\.ts$/, ''), workflowImports(file)] as const));
    assert.ok(graph.size >= 10, `only ${graph.size} workflow modules found`);
    assert.deepEqual(circles(graph), []);
  });

  it('each family keeps its contract beside its workflows, and no file holds the contracts of several families', () => {
    const misplaced: string[] = [];
    for (const dir of ['activities', 'cli', 'config', 'core', 'viewer', 'workers', 'workflows']) {
      for (const file of sources(dir)) {
        const text = readFileSync(path.join(ROOT, file), 'utf8');
        for (const [, name] of text.matchAll(/^export (?:function|const) resolve(\w+)Input\b/gm)) {
          const family = Object.keys(FAMILIES).find((f) => FAMILIES[f]!.includes(name!));
          if (file !== path.join('workflows', family ?? '?', 'contract.ts')) misplaced.push(`${file}: resolve${name}Input`);
        }
      }
    }
    assert.deepEqual(misplaced, []);
    for (const family of Object.keys(FAMILIES)) assert.ok(existsSync(path.join(ROOT, 'workflows', family, 'contract.ts')), `workflows/${family}/contract.ts`);
  });
});
