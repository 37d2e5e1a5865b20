import type { Result } from '../../shared/errors.ts';
import { hostFrameSchema, type HostFrame } from '../../shared/messages/events.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { parse, parseJson } from '../../shared/schema/parse.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';

/**
 * A frame from the relay, checked like every message it sends, but for the relay's own words in
 * a `state` frame (`state.reason`, which nothing signs): a relay that writes them badly (control
 * characters, bidi marks, too long) has them cleaned and cut as its refusal messages are
 * (errors.ts refusalInBody), or dropped when they are not text. Refused with them, the frame took
 * the signed freeze it carries along, silently. The signed parts are never touched: a freeze
 * whose own reason is unclean is refused whole, as its signature covers it.
 */
export function parseHostFrame(text: string): Result<HostFrame> {
  const strict = parseJson(hostFrameSchema, text);
  if (strict.ok || strict.error.code === 'body_too_large' || strict.error.code === 'malformed_json')
    return strict;
  const frame = JSON.parse(text) as unknown;
  const state = relayState(frame);
  if (!state || !('reason' in state)) return strict;
  const { reason } = state;
  if (typeof reason === 'string')
    state['reason'] = sanitizeText(reason, { maxBytes: LIMITS.reasonBytes, multiline: false }).text;
  else delete state['reason'];
  const cleaned = parse(hostFrameSchema, frame);
  // Still refused: for something else, which the first refusal names.
  return cleaned.ok ? cleaned : strict;
}

/** The relay's fleet state in a frame that holds one (`{event: {type: 'state', state}}`). */
function relayState(frame: unknown): Record<string, unknown> | undefined {
  const event = isObject(frame) ? frame['event'] : undefined;
  if (!isObject(event) || event['type'] !== 'state') return undefined;
  const state = event['state'];
  return isObject(state) ? state : undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
