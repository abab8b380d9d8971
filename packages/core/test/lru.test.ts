import { Lru } from '../src/support/lru';

describe('the bounded cache (segmented LRU)', () => {
  it('never holds more than its capacity, and keeps what is used while dropping what is not', () => {
    const lru = new Lru<number, string>(10);
    for (let i = 0; i < 1000; i++) {
      lru.set(i, `v${i}`);
      // 0 is used all along: it survives every rotation.
      expect(lru.get(0)).toBe('v0');
      expect(lru.size).toBeLessThanOrEqual(10);
    }
    expect(lru.get(999)).toBe('v999');
    expect(lru.get(500)).toBeUndefined();
    expect(lru.peek(0)).toBe('v0');
  });

  it('drops an entry once two generations passed without it being used', () => {
    const lru = new Lru<string, number>(4);
    lru.set('a', 1);
    lru.set('b', 2); // the recent generation is full (half of 4): a and b become the older one
    lru.set('c', 3);
    expect(lru.get('a')).toBe(1); // used: back in the recent one (c, a), which is full again: b, unused, is dropped
    expect(lru.peek('b')).toBeUndefined();
    lru.set('d', 4);
    expect(lru.get('a')).toBe(1);
    expect(lru.size).toBeLessThanOrEqual(4);
    lru.set('e', 5);
    lru.set('f', 6);
    lru.set('g', 7);
    expect(lru.get('b')).toBeUndefined();
  });

  it('updates, deletes, clears and lists (older first) like a map', () => {
    const lru = new Lru<string, number>(100);
    lru.set('x', 1);
    lru.set('x', 2);
    lru.set('y', 3);
    expect(lru.get('x')).toBe(2);
    expect([...lru.keys()]).toEqual(['x', 'y']);
    expect([...lru.entries()]).toEqual([
      ['x', 2],
      ['y', 3],
    ]);
    expect(lru.delete('x')).toBe(true);
    expect(lru.delete('x')).toBe(false);
    expect(lru.size).toBe(1);
    lru.clear();
    expect(lru.size).toBe(0);
    expect(lru.get('y')).toBeUndefined();
  });
});
