import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml, parseDocument } from 'yaml';
import { formatPath, parseOrThrow, ValidationError } from '../core/validation';
import { configSchema, type Config } from './schema';

/** A loaded temporal.yaml, with where it came from so relative paths resolve against it. */
export interface LoadedConfig extends Config {
  /** Absolute path of the file that was loaded. */
  readonly file: string;
  /** `dev.dataDir` resolved against the file's folder. */
  readonly dataDir: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** The repository's temporal.yaml: the deployment when $CODA_CONFIG names no other. */
export const DEFAULT_FILE = path.resolve(__dirname, '..', '..', 'temporal.yaml');

/** The file workers and tools read: $CODA_CONFIG, else the repository's temporal.yaml. */
export function configPath(env: Env = process.env): string {
  return path.resolve(env.CODA_CONFIG ?? DEFAULT_FILE);
}

/**
 * Loads, substitutes and validates temporal.yaml. Any problem throws a ValidationError that
 * names the file and the path of each bad field, so a bad file fails at start-up.
 */
export function loadConfig(file: string = configPath(), env: Env = process.env): LoadedConfig {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    throw new ValidationError(absolute, [`cannot read the file: ${(err as Error).message}`]);
  }
  return parseConfig(text, absolute, env);
}

/** Same as loadConfig, for text already in memory; `file` names the source in errors. */
export function parseConfig(text: string, file: string, env: Env = process.env): LoadedConfig {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ValidationError(file, doc.errors.map((e) => `YAML syntax: ${e.message.split('\n')[0]}`));
  }
  const problems: string[] = [];
  const substituted = substituteEnv(doc.toJS(), [], env, problems);
  if (problems.length > 0) throw new ValidationError(file, problems);
  const config = parseOrThrow(configSchema, substituted, file);
  return { ...config, file, dataDir: path.resolve(path.dirname(file), config.dev.dataDir) };
}

/** A path written in temporal.yaml (training.workDir, training.serving.dir) resolved against the file's folder. */
export const configRelative = (config: LoadedConfig, written: string): string => path.resolve(path.dirname(config.file), written);

const REFERENCE = /\$\{([^}]*)\}/g;
const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string value. A value that is exactly one
 * reference keeps a number or boolean type, so `${DESKTOPS:-2}` can fill a number field.
 */
function substituteEnv(value: unknown, at: PropertyKey[], env: Env, problems: string[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, [...at, i], env, problems));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, [...at, k], env, problems)]));
  }
  if (typeof value !== 'string' || !value.includes('$')) return value;
  if (/\$\{[^}]*$/.test(value)) {
    problems.push(`${formatPath(at)}: unterminated environment reference in "${value}" (expected \${NAME} or \${NAME:-default})`);
    return value;
  }
  const whole = /^\$\{[^}]*\}$/.test(value);
  const replaced = value.replace(REFERENCE, (_match, inner: string) => {
    const sep = inner.indexOf(':-');
    const name = sep === -1 ? inner : inner.slice(0, sep);
    if (!VALID_NAME.test(name)) {
      problems.push(`${formatPath(at)}: bad environment reference "\${${inner}}" (expected \${NAME} or \${NAME:-default})`);
      return '';
    }
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (sep !== -1) return inner.slice(sep + 2);
    problems.push(`${formatPath(at)}: environment variable ${name} is not set and has no default (write \${${name}:-value} to give one)`);
    return '';
  });
  return whole ? asScalar(replaced) : replaced;
}

/** Numbers and booleans keep their type after substitution; everything else stays text. */
function asScalar(text: string): unknown {
  if (text === '') return text;
  const parsed: unknown = parseYaml(text);
  return typeof parsed === 'number' || typeof parsed === 'boolean' ? parsed : text;
}

/** Reads the secret an `...Env` field names; throws naming the field when the variable is unset. */
export function secretFromEnv(varName: string, field: string, env: Env = process.env): string {
  const value = env[varName];
  if (value === undefined || value === '') {
    throw new ValidationError('environment', [`${field}: environment variable ${varName} is not set`]);
  }
  return value;
}
