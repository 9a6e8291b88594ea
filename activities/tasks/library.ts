import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { taskKey, taskSetManifestKey, taskSetTaskKey } from '../../core/keys';
import { hasEvaluators, parseTask, parseTaskText, pythonSources, type Task } from '../../core/task';
import { taskSetManifestSchema } from '../../apps/manifests';
import { ValidationError } from '../../core/validation';
import type { ObjectStore } from '../storage/object-store';
import type { TaskEntry } from '../../core/rollout-types';
import { PromiseCache } from '../cache';
import { compileErrors } from '../../io/predicates/sandbox';
import { APPS } from '../../apps/index';

/** The ScienceBoard tasks shipped with the repository (data/scienceboard/<Software>/<id>.json). */
export const DEFAULT_TASK_ROOT = path.resolve(__dirname, '..', '..', '..', 'data', 'scienceboard');


/** Reads and validates task files from a folder per software. */
export class TaskLibrary {
  constructor(readonly root: string = DEFAULT_TASK_ROOT) {}

  software(): string[] {
    return readdirSync(this.root)
      .filter((name) => statSync(path.join(this.root, name)).isDirectory())
      .sort();
  }

  /**
   * The tasks of `software` (all, or the listed ids), validated. Unknown software or ids, and
   * every invalid task, are reported together by name. A task the pipeline cannot run — a func or
   * check it does not know, a Python predicate that does not compile or that the sandbox refuses —
   * loads with the reason in `unknown` (unsupported everywhere), so one such task hides nothing else.
   */
  load(software: string, ids?: readonly string[]): Task[] {
    const known = this.software();
    if (!known.includes(software)) {
      throw new ValidationError('task set', [`unknown software "${software}": expected one of ${known.join(', ')}`]);
    }
    const dir = path.join(this.root, software);
    const available = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
    const wanted = ids ?? available;
    const problems = wanted.filter((id) => !available.includes(id)).map((id) => `unknown ${software} task "${id}"`);
    const tasks: Task[] = [];
    for (const id of wanted.filter((i) => available.includes(i))) {
      try {
        const task = parseTaskText(APPS, readFileSync(path.join(dir, `${id}.json`), 'utf8'), id);
        if (task.type !== software) problems.push(`task ${id}: type is "${task.type}", expected "${software}"`);
        tasks.push(task);
      } catch (err) {
        problems.push(err instanceof ValidationError ? err.message.replace(/\n\s+- /g, '\n    - ') : `task ${id}: ${(err as Error).message}`);
      }
    }
    if (problems.length > 0) throw new ValidationError(`task set ${software}`, problems);
    return withPredicatesChecked(tasks);
  }
}

/**
 * The tasks, each Python predicate compiled by real python3 under the sandbox's rules (one child
 * for all of them); a task with one that fails gets the reason, naming the task and the field.
 */
export function withPredicatesChecked(tasks: readonly Task[]): Task[] {
  const sources = tasks.flatMap((task) => pythonSources(APPS, task).map((s) => s.source));
  let errors: Map<string, string>;
  try {
    errors = compileErrors(sources);
  } catch (err) {
    const why = (err as Error).message;
    return tasks.map((task) => (pythonSources(APPS, task).length === 0 ? task : withReasons(task, [`its Python predicates could not be checked: ${why}`])));
  }
  return tasks.map((task) => {
    const bad = pythonSources(APPS, task).flatMap(({ field, source }) => {
      const error = errors.get(source);
      return error === undefined ? [] : [`task ${task.id} ${field}: the predicate sandbox refuses it: ${error}`];
    });
    return bad.length === 0 ? task : withReasons(task, bad);
  });
}

const withReasons = (task: Task, reasons: readonly string[]): Task => ({ ...task, unknown: [...(task.unknown ?? []), ...reasons] });

/** Where a desktop or a model activity reads a staged task from. */
export interface TaskReader {
  read(key: string): Promise<Task>;
}

/** Reads staged tasks from S3, validating them again, with a small cache (tasks are immutable once staged). */
export function s3TaskReader(store: ObjectStore): TaskReader {
  const cache = new PromiseCache<Task>(1024);
  return {
    read: (key) => cache.get(key, async () => parseTask(APPS, await store.getJson(key), path.basename(key, '.json'))),
  };
}

/** Writes validated tasks to S3 under the key scheme and returns their entries. */
export async function stageTasks(store: ObjectStore, prefix: string, tasks: readonly Task[]): Promise<TaskEntry[]> {
  const unrunnable = tasks.filter((task) => task.unknown !== undefined);
  if (unrunnable.length > 0) throw new Error(`unsupported tasks cannot be staged: ${unrunnable.map((t) => `${t.type}/${t.id} (${(t.unknown ?? []).join('; ')})`).join(', ')}`);
  return Promise.all(
    tasks.map(async (task) => {
      const key = taskKey(prefix, task.type, task.id);
      const { id: _id, unknown: _unknown, ...file } = task;
      await store.putJson(key, file);
      return { id: task.id, software: task.type, key, maxSteps: task.steps, evaluated: hasEvaluators(task) };
    }),
  );
}

/**
 * The tasks of a generated task set (already in S3), all or the listed ids. A missing or empty
 * set, or unknown ids, are a ValidationError naming them.
 */
export async function taskSetTasks(store: ObjectStore, prefix: string, software: string, version: string, ids?: readonly string[]): Promise<Task[]> {
  const key = taskSetManifestKey(prefix, software, version);
  const raw = await store.tryGet(key);
  if (raw === undefined) throw new ValidationError('task set', [`taskSet: no generated ${software} task set "${version}" (${store.uri(key)} does not exist)`]);
  const manifest = taskSetManifestSchema.parse(JSON.parse(raw.toString('utf8')));
  if (manifest.tasks.length === 0) throw new ValidationError('task set', [`taskSet: the ${software} task set "${version}" is empty (see ${store.uri(key)})`]);
  const unknown = (ids ?? []).filter((id) => !manifest.tasks.some((t) => t.id === id));
  if (unknown.length > 0) throw new ValidationError(`task set ${software}/${version}`, unknown.map((id) => `unknown task "${id}"`));
  const chosen = manifest.tasks.filter((t) => ids === undefined || ids.includes(t.id));
  return Promise.all(chosen.map(async (t) => parseTask(APPS, await store.getJson(t.key), t.id)));
}

/** The entries of generated tasks: they are in S3 already, under their set's keys. */
export const taskSetEntriesOf = (prefix: string, software: string, version: string, tasks: readonly Task[]): TaskEntry[] =>
  tasks.map((task) => ({ id: task.id, software, key: taskSetTaskKey(prefix, software, version, task.id), maxSteps: task.steps, evaluated: hasEvaluators(task) }));
