import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { CallIds } from '../../daemon/gate/callIds.ts';
import { connect } from '../../daemon/sdk/latch.ts';
import { readGateRequest, type GateRequest } from '../../daemon/socket/localApi.ts';
import { withStore } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * The ids the relay sees beside a request's sealed details (its dedup key, its conversation)
 * are keyed by a secret of the host: a relay that knows Latch's code and guesses a call cannot
 * test the guess against them offline (review kb, F1).
 */

let paired: PairedDaemon;
beforeAll(async () => {
  paired = await startPairedDaemon({
    config: (t) => t.replace('timeout_seconds = 300', 'timeout_seconds = 5'),
  });
});
afterAll(() => paired?.stop());

const sha256Id = (text: string, bytes: number) =>
  toBase64url(createHash('sha256').update(text).digest().subarray(0, bytes));

/** The ids as a relay can make them without the host's secret: unkeyed (Latch before), or under a key of its own. */
const guessers = [
  {
    dedupKey: (request: GateRequest) =>
      sha256Id(
        `latch dedup v1\0${JSON.stringify(Object.entries(request).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`,
        18,
      ),
    conversation: (session: string) => sha256Id(session, 12),
  },
  new CallIds(randomBytes(32)),
];

describe('the ids the relay sees of a request', () => {
  it('confirm no guess of an SDK call’s command or session name, and are this host’s own keyed ids', async () => {
    const { relay, machine } = paired;
    const latch = await connect({ socketPath: machine.socket, agent: 'deploy-bot' });
    const secret = 'psql prod -c "DROP TABLE customers"';
    const guarded = latch.guard(
      { tool: 'shell', command: secret, session: 'nightly', callId: '3', cwd: '/srv/app' },
      async () => 'ran',
    );
    const seen = await relay.nextRequest(0);
    const call = (command: string, session: string, id: string) =>
      readGateRequest({
        agent: 'deploy-bot',
        tool: 'shell',
        interactive: false,
        canDefer: false,
        command,
        cwd: '/srv/app',
        session,
        toolUseId: id,
      }) as GateRequest;
    const hits: string[] = [];
    for (const guess of guessers)
      for (const command of ['rm -rf /srv/app', 'git push origin main', secret, 'ls'])
        for (const session of ['nightly', 'ci', 'default']) {
          if (command === secret && guess.conversation(session) === seen.conversation)
            hits.push(`session ${session}`);
          for (let id = 0; id < 10; id++)
            if (guess.dedupKey(call(command, session, String(id))) === seen.dedupKey)
              hits.push(`${command} | ${session} | ${id}`);
        }
    expect(hits).toEqual([]);
    // What the daemon sent is keyed by the secret in its own state.db, which no frame carried.
    const mine = withStore(machine, (store) => ({
      ids: CallIds.of(store),
      key: toBase64url(store.callKey()),
    }));
    expect(mine.ids.dedupKey(call(secret, 'nightly', '3'))).toBe(seen.dedupKey);
    expect(mine.ids.conversation('nightly')).toBe(seen.conversation);
    expect(JSON.stringify(relay.requests)).not.toContain(mine.key);
    await guarded.catch(() => undefined);
  });
});
