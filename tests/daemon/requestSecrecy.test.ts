import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHash } from '../../shared/approvals/requestHash.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { hookInput, startHook } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { phoneApproves } from '../support/phoneApproves.ts';

let paired: PairedDaemon;

beforeAll(async () => {
  paired = await startPairedDaemon();
});
afterAll(() => paired.stop());

describe('what the relay learns of a request', () => {
  it('cannot confirm a guess of the sealed details: their hash holds a salt it never receives (review hd)', async () => {
    const { relay, machine } = paired;
    const hook = startHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }));
    const request = await relay.nextRequest();
    const { token, details } = await phoneApproves(paired.phones[0]!, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    await hook;

    expect(fromBase64url(details.salt!)).toHaveLength(16);
    // Everything the relay holds of the request, but for the boxes it cannot open.
    const { sealed, ...seen } = request;
    expect(sealed.length).toBeGreaterThan(0);
    expect(JSON.stringify(seen)).not.toContain(details.salt!);
    // A relay that guessed every other member right, with what it does hold in the salt's place,
    // still gets another hash.
    expect(await requestHash(details)).toBe(request.requestHash);
    for (const stand of [request.nonce, request.requestId, ''])
      expect(await requestHash({ ...details, salt: stand })).not.toBe(request.requestHash);
  });
});
