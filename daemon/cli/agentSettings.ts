import { readSettings, SettingsError, type ReadSettings } from '../install/readSettings.ts';
import { fail } from './home.ts';

/** An agent's settings file, for install and uninstall: one that cannot be read is left as it is. */
export function readSettingsOrFail(path: string, events: readonly string[]): ReadSettings {
  try {
    return readSettings(path, events);
  } catch (error) {
    if (error instanceof SettingsError) fail(`${error.message}; left it as it is`, 1);
    throw error;
  }
}
