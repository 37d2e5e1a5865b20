/** What a numeric option accepts: `unit` names it in the message, "whole seconds", say. */
export interface WholeNumberRange {
  min: number;
  max: number;
  unit: string;
}

/**
 * A numeric option's text as a whole number within its range, or what it must be. Only digits
 * are read: `abc`, `-5`, `1.5`, `1e3`, ` 5` or an empty value is refused, never taken as 0 or
 * as the default, which is what `Number(text) || fallback` did.
 */
export function parseWholeNumber(text: string, range: WholeNumberRange): number | { error: string } {
  const value = Number(text);
  if (/^\d+$/.test(text) && value >= range.min && value <= range.max) return value;
  return { error: `must be ${range.unit} from ${range.min} to ${range.max}` };
}
