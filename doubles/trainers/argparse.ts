/**
 * TEST DOUBLE support: the command-line behaviour of Python's argparse that the trainer doubles
 * need, so a command line the real trainer refuses is refused here too, with argparse's messages
 * and exit code 2: unknown options ("unrecognized arguments"), missing or badly typed values,
 * values outside `choices`, `--name=value`, unique prefixes of option names (allow_abbrev), and
 * negative numbers as values.
 */

export type ArgKind = 'flag' | 'int' | 'float' | 'str' | 'float2' | 'float+' | 'str*';

export interface ArgSpec {
  readonly kind: ArgKind;
  readonly choices?: readonly string[];
}

export type ArgValue = boolean | number | string | number[] | string[];

/** A command line argparse refuses: printed as `prog: error: message`, exit code 2. */
export class UsageError extends Error {
  constructor(
    readonly prog: string,
    message: string,
  ) {
    super(message);
  }
}

const isValue = (token: string | undefined): token is string => token !== undefined && (!token.startsWith('-') || /^-\d|^-\.\d/.test(token));

function convert(prog: string, option: string, kind: 'int' | 'float' | 'str', raw: string, choices?: readonly string[]): number | string {
  let value: number | string = raw;
  if (kind === 'int') {
    if (!/^[-+]?\d+$/.test(raw.trim())) throw new UsageError(prog, `argument ${option}: invalid int value: '${raw}'`);
    value = Number(raw);
  } else if (kind === 'float') {
    const number = Number(raw);
    if (raw.trim() === '' || (Number.isNaN(number) && !/^[-+]?nan$/i.test(raw.trim()))) throw new UsageError(prog, `argument ${option}: invalid float value: '${raw}'`);
    value = number;
  }
  if (choices !== undefined && !choices.includes(String(value))) {
    throw new UsageError(prog, `argument ${option}: invalid choice: '${raw}' (choose from ${choices.map((c) => `'${c}'`).join(', ')})`);
  }
  return value;
}

/** The values given on the command line, by option name without its dashes (`ckpt.path`). */
export function parseArgs(prog: string, specs: Readonly<Record<string, ArgSpec>>, argv: readonly string[]): Map<string, ArgValue> {
  const values = new Map<string, ArgValue>();
  const unrecognized: string[] = [];
  const names = Object.keys(specs);
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (!token.startsWith('--')) {
      unrecognized.push(token);
      continue;
    }
    const eq = token.indexOf('=');
    const written = (eq === -1 ? token : token.slice(0, eq)).slice(2);
    const candidates = written in specs ? [written] : names.filter((name) => name.startsWith(written));
    if (candidates.length > 1) throw new UsageError(prog, `ambiguous option: --${written} could match ${candidates.map((c) => `--${c}`).join(', ')}`);
    const name = candidates[0];
    if (name === undefined) {
      unrecognized.push(token);
      while (isValue(argv[i + 1]) && eq === -1) unrecognized.push(argv[++i] as string);
      continue;
    }
    const spec = specs[name] as ArgSpec;
    const option = `--${name}`;
    const inline = eq === -1 ? undefined : token.slice(eq + 1);
    if (spec.kind === 'flag') {
      if (inline !== undefined) throw new UsageError(prog, `argument ${option}: ignored explicit argument '${inline}'`);
      values.set(name, true);
      continue;
    }
    const taken: string[] = inline !== undefined ? [inline] : [];
    const wanted = spec.kind === 'float2' ? 2 : spec.kind === 'str*' || spec.kind === 'float+' ? Number.POSITIVE_INFINITY : 1;
    while (taken.length < wanted && inline === undefined && isValue(argv[i + 1])) taken.push(argv[++i] as string);
    if (spec.kind === 'float2') {
      if (taken.length !== 2) throw new UsageError(prog, `argument ${option}: expected 2 arguments`);
      values.set(name, taken.map((t) => convert(prog, option, 'float', t) as number));
    } else if (spec.kind === 'float+') {
      if (taken.length === 0) throw new UsageError(prog, `argument ${option}: expected at least one argument`);
      values.set(name, taken.map((t) => convert(prog, option, 'float', t) as number));
    } else if (spec.kind === 'str*') {
      values.set(name, taken);
    } else {
      if (taken.length !== 1) throw new UsageError(prog, `argument ${option}: expected one argument`);
      values.set(name, convert(prog, option, spec.kind, taken[0] as string, spec.choices));
    }
  }
  if (unrecognized.length > 0) throw new UsageError(prog, `unrecognized arguments: ${unrecognized.join(' ')}`);
  return values;
}
