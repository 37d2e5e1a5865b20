import { eventLists, withoutLatchHandlers, type Settings } from './hookGroups.ts';

/**
 * The settings without Latch's handlers, under whichever event they are, and without the matcher
 * groups, event lists and `hooks` object that leaves empty; everything else as it was. `removed`
 * counts the handlers.
 */
export function withoutLatchHooks(settings: Settings): { settings: Settings; removed: number } {
  const hooks: Settings = { ...(settings['hooks'] as Settings | undefined) };
  let removed = 0;
  for (const [event, groups] of eventLists(settings)) {
    const without = withoutLatchHandlers(groups);
    if (without.removed === 0) continue;
    removed += without.removed;
    if (without.groups.length > 0) hooks[event] = without.groups;
    else delete hooks[event];
  }
  if (removed === 0) return { settings, removed };
  const { hooks: _, ...rest } = settings;
  return { settings: Object.keys(hooks).length > 0 ? { ...settings, hooks } : rest, removed };
}
