/**
 * The value `record` holds under `key` as its own: never one of Object.prototype's (`constructor`,
 * `__proto__`, `toString`), which `record[key]` and `key in record` find too. For every lookup by
 * a key someone else chose (a request's path or query, a file, a model's reply).
 */
export const ownValue = <T>(record: Readonly<Record<string, T>>, key: string): T | undefined => (Object.hasOwn(record, key) ? record[key] : undefined);
