import { parseHookCommand } from './parseHookCommand.ts';

/** An agent's settings file, as parsed: a JSON object. */
export type Settings = Record<string, unknown>;

/** One command in a matcher group: `{ type, command, timeout }`, and whatever else an agent adds. */
export interface HookHandler {
  type: 'command';
  command: string;
  timeout: number;
}

/** A matcher group under an event: `{ matcher, hooks: [handler, …] }`. */
export interface MatcherGroup {
  matcher?: unknown;
  hooks: unknown[];
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const isMatcherGroup = (value: unknown): value is MatcherGroup =>
  isObject(value) && Array.isArray(value['hooks']);

/** A handler that runs Latch's hook, whichever way it was written. */
export const isLatchHandler = (value: unknown): value is { command: string; timeout?: unknown } =>
  isObject(value) && typeof value['command'] === 'string' && parseHookCommand(value['command']) !== undefined;

/** Each event's matcher groups; an event whose value is not a list is not Latch's to read. */
export const eventLists = (settings: Settings): [string, unknown[]][] =>
  Object.entries((settings['hooks'] as Settings | undefined) ?? {}).filter(
    (entry): entry is [string, unknown[]] => Array.isArray(entry[1]),
  );

/**
 * Takes Latch's handlers out of an event's matcher groups, and the groups that leaves empty;
 * every other group and handler stays as it was, in its place. `at` is where the first group
 * that held one of Latch's handlers was, for putting its replacement there.
 */
export function withoutLatchHandlers(groups: readonly unknown[]): {
  groups: unknown[];
  removed: number;
  at?: number;
} {
  const kept: unknown[] = [];
  let removed = 0;
  let at: number | undefined;
  for (const group of groups) {
    if (!isMatcherGroup(group) || !group.hooks.some(isLatchHandler)) {
      kept.push(group);
      continue;
    }
    at ??= kept.length;
    const others = group.hooks.filter((handler) => !isLatchHandler(handler));
    removed += group.hooks.length - others.length;
    if (others.length > 0) kept.push({ ...group, hooks: others });
  }
  return { groups: kept, removed, ...(at !== undefined ? { at } : {}) };
}
