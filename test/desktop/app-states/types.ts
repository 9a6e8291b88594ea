/**
 * Test data: per task of data/scienceboard, the state the app's TEST DOUBLE holds when the agent
 * stops, written from the task's own checks and `ans`, and the one value that, set otherwise,
 * makes the task fail. A task whose only check is its stop (ANS, FAIL) has no state: its answer
 * is what passes or fails it.
 */
export interface TaskState<S> {
  readonly state: S;
  /** The value at `path` (keys and list indexes from the state's root) that makes a check fail. */
  readonly off?: { readonly path: readonly (string | number)[]; readonly value: unknown };
}

/** `state` with the value at `path` replaced (a deep copy). */
export function withValue<S>(state: S, path: readonly (string | number)[], value: unknown): S {
  const copy = structuredClone(state) as unknown;
  let at = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (last === undefined) return value as S;
  at[last] = value;
  return copy as S;
}
