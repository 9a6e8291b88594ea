import type { LoadedConfig } from '../config/load';
import { ValidationError } from '../core/validation';
import { TaskLibrary } from '../activities/tasks/library';
import { freshRun } from '../workflows/names';
import { START_KINDS, type OptionValue, type StartContext, type AnyStartKind } from './start-options';

export { manifestKeyOf } from './start-options';

/**
 * What `coda start <kind>` starts: the workflow type, its id and its input, built from the
 * command's options as cli/start-options.ts declares them and checked with the very functions the
 * workflow runs first (workflows/<family>/contract.ts), so bad input is refused before anything
 * starts.
 */
export interface StartRequest {
  readonly workflowType: string;
  readonly workflowId: string;
  readonly input: Record<string, unknown>;
}

/** The options as commander parsed them, by their camel-case names. */
export type StartOptions = Readonly<Record<string, OptionValue | undefined>>;

/** `--tasks-per-round <n>` → `tasksPerRound`, as commander names the option's value. */
export const optionKey = (flags: string): string => (flags.split(' ')[0] ?? '').replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The input the options give: each option read into its field, a missing required one refused, a missing fresh id named. */
function inputOf(ctx: StartContext, kind: AnyStartKind, options: StartOptions): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const option of kind.options) {
    const flag = option.flags.split(' ')[0] ?? option.flags;
    const value = options[optionKey(option.flags)];
    if (value === undefined) {
      if (option.required) throw new ValidationError('options', [`${flag}: required (${option.help})`]);
      continue;
    }
    input[option.field] = option.read === undefined ? value : option.read(value, flag, ctx);
  }
  if (kind.fresh !== undefined && input[kind.fresh.field] === undefined) input[kind.fresh.field] = freshRun(kind.fresh.prefix);
  return input;
}

/** The workflow a `coda start` would start; throws a ValidationError naming each bad option. */
export function startRequest(config: LoadedConfig, kind: string, options: StartOptions, library = new TaskLibrary()): StartRequest {
  const definition: AnyStartKind | undefined = Object.hasOwn(START_KINDS, kind) ? (START_KINDS as Readonly<Record<string, AnyStartKind>>)[kind] : undefined;
  if (definition === undefined) {
    throw new ValidationError('options', [`unknown kind "${kind}": expected ${Object.keys(START_KINDS).join(', ')}`]);
  }
  const ctx: StartContext = { config, known: library.software() };
  const input = inputOf(ctx, definition, options);
  return { workflowType: definition.workflowType, workflowId: definition.workflowId(ctx, input), input };
}
