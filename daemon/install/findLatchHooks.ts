import { eventLists, isLatchHandler, isMatcherGroup, type Settings } from './hookGroups.ts';

/** One of Latch's handlers in an agent's settings, as written there. */
export interface FoundHook {
  event: string;
  command: string;
  /** The handler's `timeout` in seconds; absent, the agent's default applies. */
  timeout: unknown;
}

/** Latch's handlers, under whichever event they are, in the order the agent runs them. */
export function findLatchHooks(settings: Settings): FoundHook[] {
  return eventLists(settings).flatMap(([event, groups]) =>
    groups
      .filter(isMatcherGroup)
      .flatMap((group) => group.hooks.filter(isLatchHandler))
      .map((handler) => ({ event, command: handler.command, timeout: handler.timeout })),
  );
}
