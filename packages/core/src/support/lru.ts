/**
 * A map that keeps at most `capacity` entries, dropping those not used for longest: bounded memory
 * for the per-instance caches. Segmented rather than exact: entries live in a recent and an older
 * generation (each at most half the capacity); a hit in the recent one changes nothing (a check
 * answered from memory must not rebuild a hash table: every rebuilt table is old-generation
 * garbage, which made the server's RSS grow under load), a hit in the older one moves the entry to
 * the recent one, and when the recent one is full the older one is dropped whole.
 */
export class Lru<K, V> {
  private recent = new Map<K, V>();
  private older = new Map<K, V>();
  private readonly half: number;

  constructor(readonly capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }

  get(key: K): V | undefined {
    const value = this.recent.get(key);
    if (value !== undefined) return value;
    const old = this.older.get(key);
    if (old === undefined) return undefined;
    this.older.delete(key);
    this.add(key, old);
    return old;
  }

  /** The value without marking it used. */
  peek(key: K): V | undefined {
    return this.recent.get(key) ?? this.older.get(key);
  }

  set(key: K, value: V): void {
    if (this.recent.has(key)) {
      this.recent.set(key, value);
      return;
    }
    this.older.delete(key);
    this.add(key, value);
  }

  private add(key: K, value: V): void {
    this.recent.set(key, value);
    if (this.recent.size >= this.half) {
      this.older = this.recent;
      this.recent = new Map();
    }
  }

  delete(key: K): boolean {
    return this.recent.delete(key) || this.older.delete(key);
  }

  clear(): void {
    this.recent.clear();
    this.older.clear();
  }

  get size(): number {
    return this.recent.size + this.older.size;
  }

  /** Every entry, the older generation first (without marking any used). */
  *entries(): IterableIterator<[K, V]> {
    yield* this.older.entries();
    yield* this.recent.entries();
  }

  *keys(): IterableIterator<K> {
    yield* this.older.keys();
    yield* this.recent.keys();
  }
}
