/**
 * Canonical JSON: JSON.stringify's text of plain data with every object's keys in order, so one
 * value gives one text however it was built (the reuse keys of checkout links digest it).
 */
export function canonicalJson(value: unknown): string {
  if (value && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return canonicalJson((value as { toJSON: () => unknown }).toJSON());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined && typeof o[k] !== 'function')
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
