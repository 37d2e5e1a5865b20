/**
 * A deep copy of a gated function's arguments: what the phone is shown (`frozen`, so that `meta`
 * cannot change it either) and, copied again, what the function runs on, unfrozen, so that a
 * function that sorts or fills in its own arguments still can. A caller that changes its objects
 * during the wait changes neither. Refused, never half copied: structuredClone drops a class
 * instance's prototype and private fields, so the function would run on something else than the
 * caller passed. A Buffer is a Uint8Array with methods and no state of its own: it stays one.
 */
export function wholeCopy<T>(value: T, { frozen }: { frozen: boolean }): { copy: T } | { error: string } {
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
    if (Buffer.isBuffer(original)) Object.setPrototypeOf(copied, Buffer.prototype);
    const prototype = Object.getPrototypeOf(original) as object | null;
    const copiedPrototype = Object.getPrototypeOf(copied) as object;
    // An object without a prototype comes back as a plain one: the same data.
    if (prototype !== copiedPrototype && !(prototype === null && copiedPrototype === Object.prototype))
      return {
        error: `${(original as object).constructor?.name ?? 'an object'} cannot be copied whole (its class and private state would be lost)`,
      };
    // A typed array with elements cannot be frozen; the copy is the function's own anyway.
    if (ArrayBuffer.isView(copied)) continue;
    if (frozen) Object.freeze(copied);
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
