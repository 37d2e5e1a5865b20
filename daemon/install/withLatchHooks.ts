import {
  eventLists,
  isLatchHandler,
  isMatcherGroup,
  withoutLatchHandlers,
  type HookHandler,
  type Settings,
} from './hookGroups.ts';

/**
 * The settings with one Latch handler under each of `events`, in a matcher group of its own
 * (matcher "*"): an older Latch handler there is replaced where it stood (a bare `latch hook …`,
 * another timeout). A Latch handler someone put under another event keeps its place and gets the
 * new command. Every other setting, group and handler is kept, in its order; running it twice
 * changes nothing the second time.
 */
export function withLatchHooks(
  settings: Settings,
  events: readonly string[],
  handler: HookHandler,
): Settings {
  const hooks: Settings = { ...(settings['hooks'] as Settings | undefined) };
  const lists = new Map(eventLists(settings));
  for (const [event, groups] of lists) {
    if (events.includes(event)) continue;
    hooks[event] = groups.map((group) =>
      isMatcherGroup(group) && group.hooks.some(isLatchHandler)
        ? { ...group, hooks: group.hooks.map((existing) => (isLatchHandler(existing) ? handler : existing)) }
        : group,
    );
  }
  for (const event of events) {
    const { groups, at } = withoutLatchHandlers(lists.get(event) ?? []);
    groups.splice(at ?? groups.length, 0, { matcher: '*', hooks: [handler] });
    hooks[event] = groups;
  }
  return { ...settings, hooks };
}
