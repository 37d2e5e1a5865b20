import { describe, expect, it } from 'vitest';
import { parseHostFrame } from '../../daemon/relay/parseHostFrame.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { expectRefused } from '../support/expectRefused.ts';

const state = (reason: unknown) =>
  JSON.stringify({
    v: PROTOCOL_VERSION,
    seq: 4,
    event: {
      v: PROTOCOL_VERSION,
      type: 'state',
      state: { v: PROTOCOL_VERSION, fleet: 'fleet-1', frozen: true, epoch: 2, reason, votes: [], needed: 1 },
    },
  });

describe('a frame from the relay', () => {
  it('keeps a state frame whose reason is unclean, the reason cleaned and cut', () => {
    const frame = parseHostFrame(state(`stop\x1b[2J\u202e now ${'x'.repeat(400)}`));
    expect(frame.ok && frame.value.event.type === 'state' && frame.value.event.state.reason).toMatch(
      /^stop\[2J now x+…$/,
    );
  });

  it('keeps a state frame whose reason is not text, without it', () => {
    const frame = parseHostFrame(state(42));
    expect(frame.ok && frame.value.event.type === 'state' && frame.value.event.state).not.toHaveProperty(
      'reason',
    );
  });

  it('refuses what else is wrong, and unclean text the relay did not write itself', () => {
    expectRefused(parseHostFrame(state('fine').replace('"epoch":2', '"epoch":-1')), 'invalid_field');
    expectRefused(
      parseHostFrame(
        JSON.stringify({
          v: PROTOCOL_VERSION,
          seq: 5,
          event: { v: PROTOCOL_VERSION, type: 'expired', requestId: 'bad\x1bid', at: 1 },
        }),
      ),
      'invalid_id',
    );
    expectRefused(parseHostFrame('{'), 'malformed_json');
  });
});
