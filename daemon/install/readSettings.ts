import { readFileSync } from 'node:fs';
import { isObject, type Settings } from './hookGroups.ts';

/** Why an agent's settings file cannot be changed safely. It is then left as it is. */
export class SettingsError extends Error {
  readonly code:
    'settings_unreadable' | 'settings_not_json' | 'settings_not_object' | 'settings_hooks_invalid';
  constructor(code: SettingsError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** The settings, and the file's text as read (undefined: there is no file yet). */
export interface ReadSettings {
  settings: Settings;
  text: string | undefined;
}

/**
 * Reads an agent's settings file, and checks the parts Latch would change: a JSON object whose
 * `hooks`, if any, is an object, with a list under each of `events` it has. A file that fails is
 * never rewritten, since writing back what could be read would lose what could not.
 */
export function readSettings(path: string, events: readonly string[]): ReadSettings {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { settings: {}, text: undefined };
    throw new SettingsError('settings_unreadable', `cannot read ${path}: ${(error as Error).message}`);
  }
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (error) {
    throw new SettingsError('settings_not_json', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(settings))
    throw new SettingsError('settings_not_object', `${path} does not hold a JSON object`);
  const hooks = settings['hooks'];
  if (hooks !== undefined && !isObject(hooks))
    throw new SettingsError('settings_hooks_invalid', `"hooks" in ${path} is not an object`);
  for (const event of events) {
    if (hooks?.[event] !== undefined && !Array.isArray(hooks[event]))
      throw new SettingsError('settings_hooks_invalid', `"hooks.${event}" in ${path} is not a list`);
  }
  return { settings, text };
}
