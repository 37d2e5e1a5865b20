/**
 * A deep, frozen copy of a gated function's arguments: what the phone is shown and what the
 * function runs on, so a caller that changes its objects during the wait changes neither.
 * Refused, never half copied: structuredClone drops a class instance's prototype and private
 * fields, so the function would run on something else than the caller passed.
 */
export function frozenCopy<T>(value: T): { copy: T } | { error: string } {
  let copy: T;
  try {
    copy = structuredClone(value);
  } catch (error) {
    // A function, a Proxy, a symbol, a WeakMap: nothing to copy it into.
    return { error: (error as Error).message };
  }
  const seen = new Set<object>();
  const pairs: [unknown, unknown][] = [[value, copy]];
  for (let pair = pairs.pop(); pair; pair = pairs.pop()) {
    const [original, copied] = pair;
    if (typeof copied !== 'object' || copied === null || seen.has(copied)) continue;
    seen.add(copied);
    const prototype = Object.getPrototypeOf(original) as object | null;
    const copiedPrototype = Object.getPrototypeOf(copied) as object;
    // An object without a prototype comes back as a plain one: the same data.
    if (prototype !== copiedPrototype && !(prototype === null && copiedPrototype === Object.prototype))
      return {
        error: `${(original as object).constructor?.name ?? 'an object'} cannot be copied whole (its class and private state would be lost)`,
      };
    // A typed array with elements cannot be frozen; the copy is the function's own anyway.
    if (ArrayBuffer.isView(copied)) continue;
    Object.freeze(copied);
    if (copied instanceof Map || copied instanceof Set) {
      // Their entries stay writable (freeze does not reach them); their contents are frozen.
      const originals = [...(original as Map<unknown, unknown> | Set<unknown>).entries()];
      [...copied.entries()].forEach(([key, entry], index) =>
        pairs.push([originals[index]![0], key], [originals[index]![1], entry]),
      );
    } else if (Array.isArray(copied) || copiedPrototype === Object.prototype)
      for (const key of Object.keys(copied))
        pairs.push([(original as Record<string, unknown>)[key], (copied as Record<string, unknown>)[key]]);
  }
  return { copy };
}
