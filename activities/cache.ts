/**
 * Promises by key, for values that never change once they exist (staged tasks, decision texts,
 * prepared screenshots): concurrent readers share one load, a failed load is forgotten so the next
 * reader tries again, and past `limit` entries the oldest goes.
 */
export class PromiseCache<T> {
  private readonly entries = new Map<string, Promise<T>>();

  constructor(private readonly limit = Number.POSITIVE_INFINITY) {}

  get(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const loading = load();
    loading.catch(() => {
      if (this.entries.get(key) === loading) this.entries.delete(key);
    });
    return this.remember(key, loading);
  }

  /** Drops an entry (a value that went stale, such as an expired signed URL). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  set(key: string, value: T): void {
    this.remember(key, Promise.resolve(value));
  }

  private remember(key: string, value: Promise<T>): Promise<T> {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as string);
    return value;
  }
}
