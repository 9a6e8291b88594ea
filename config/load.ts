import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { truncate } from '../core/text';
import { formatPath, ValidationError } from '../core/validation';
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
  let written: unknown;
  try {
    written = doc.toJS();
  } catch (err) {
    // The yaml library's guard against alias bombs (a few lines expanding to gigabytes) throws a bare ReferenceError.
    throw new ValidationError(file, [`YAML aliases: ${(err as Error).message} (write the values out instead of nesting aliases)`]);
  }
  const problems: string[] = [];
  const substitutions = new Map<string, string>();
  const substituted = substituteEnv(written, [], env, problems, substitutions);
  if (problems.length > 0) throw new ValidationError(file, problems);
  const parsed = configSchema.safeParse(substituted);
  if (!parsed.success) {
    throw new ValidationError(file, parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}${substitutions.get(formatPath(issue.path)) ?? ''}`));
  }
  const config = parsed.data;
  return { ...config, file, dataDir: path.resolve(path.dirname(file), config.dev.dataDir) };
}

/** A path written in temporal.yaml (training.workDir, training.serving.dir) resolved against the file's folder. */
export const configRelative = (config: LoadedConfig, written: string): string => path.resolve(path.dirname(config.file), written);

const REFERENCE = /\$\{([^}]*)\}/g;
const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string value. The result is text, never read
 * again as YAML (a model id such as `@cf/meta/llama-3.1-8b-instruct` or a quoted command is a
 * value, not a document); a value that is exactly one reference becomes a number or a boolean only
 * where its field takes one and never text (fieldTypes), so `${DESKTOPS:-2}` fills a number field
 * and `CODA_S3_PREFIX=2024` stays a prefix. `substitutions` gets, per field, what its errors add:
 * the reference and what it gave.
 */
function substituteEnv(value: unknown, at: PropertyKey[], env: Env, problems: string[], substitutions: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, [...at, i], env, problems, substitutions));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, [...at, k], env, problems, substitutions)]));
  }
  if (typeof value !== 'string' || !value.includes('$')) return value;
  if (/\$\{[^}]*$/.test(value)) {
    problems.push(`${formatPath(at)}: unterminated environment reference in "${value}" (expected \${NAME} or \${NAME:-default})`);
    return value;
  }
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
  if (replaced === value) return value;
  substitutions.set(formatPath(at), ` (${value} gave ${JSON.stringify(truncate(replaced, 120))})`);
  return /^\$\{[^}]*\}$/.test(value) ? asFieldType(replaced, fieldTypes(at)) : replaced;
}

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const BOOLEAN = /^(true|True|TRUE|false|False|FALSE)$/;

/** A substituted text as its field takes it: a number or a boolean where the field takes that and no text. */
function asFieldType(text: string, types: ReadonlySet<string>): unknown {
  if (types.has('string')) return text;
  const bare = text.trim();
  if ((types.has('number') || types.has('integer')) && NUMBER.test(bare)) return Number(bare);
  if (types.has('boolean') && BOOLEAN.test(bare)) return bare.toLowerCase() === 'true';
  return text;
}

/** The part of a JSON Schema fieldTypes reads. */
interface JsonNode {
  readonly type?: string | readonly string[];
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly properties?: Readonly<Record<string, JsonNode>>;
  readonly additionalProperties?: JsonNode | boolean;
  readonly items?: JsonNode;
  readonly prefixItems?: readonly JsonNode[];
  readonly anyOf?: readonly JsonNode[];
  readonly oneOf?: readonly JsonNode[];
  readonly allOf?: readonly JsonNode[];
}

/** temporal.yaml's schema as written (before defaults and transforms), to tell what type a field takes. */
const WRITTEN_SCHEMA = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonNode;

/**
 * The JSON types the field at `at` takes (any branch of a union); `string` too where the schema
 * says nothing (a free-form value), so such a value stays text.
 */
function fieldTypes(at: readonly PropertyKey[]): Set<string> {
  let nodes: JsonNode[] = [WRITTEN_SCHEMA];
  for (const step of at) {
    nodes = nodes.flatMap(branches).flatMap((node) => {
      if (typeof step === 'number') return [node.prefixItems?.[step] ?? node.items].filter((n): n is JsonNode => n !== undefined);
      const named = node.properties !== undefined && Object.hasOwn(node.properties, step) ? node.properties[String(step)] : undefined;
      const other = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
      return [named ?? other].filter((n): n is JsonNode => n !== undefined);
    });
  }
  const types = new Set<string>();
  for (const node of nodes.flatMap(branches)) {
    const declared = node.type === undefined ? [] : typeof node.type === 'string' ? [node.type] : node.type;
    const literals = [...(node.const === undefined ? [] : [node.const]), ...(node.enum ?? [])].map((v) => typeof v);
    const composed = node.anyOf !== undefined || node.oneOf !== undefined || node.allOf !== undefined;
    if (declared.length === 0 && literals.length === 0 && !composed) types.add('string');
    for (const t of [...declared, ...literals]) types.add(t);
  }
  return types;
}

/** A node and, recursively, the alternatives and parts it is made of. */
const branches = (node: JsonNode): JsonNode[] => [node, ...[...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])].flatMap(branches)];

/** Reads the secret an `...Env` field names; throws naming the field when the variable is unset. */
export function secretFromEnv(varName: string, field: string, env: Env = process.env): string {
  const value = env[varName];
  if (value === undefined || value === '') {
    throw new ValidationError('environment', [`${field}: environment variable ${varName} is not set`]);
  }
  return value;
}
