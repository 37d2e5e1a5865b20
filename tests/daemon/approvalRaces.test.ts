import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, expect, it, onTestFinished } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { parseConfig } from '../../daemon/config/config.ts';
import { configTemplate } from '../../daemon/config/configTemplate.ts';
import { Asking } from '../../daemon/gate/asking.ts';
import { CallIds } from '../../daemon/gate/callIds.ts';
import { deny } from '../../daemon/gate/deny.ts';
import { PushFatigue } from '../../daemon/gate/pushFatigue.ts';
import { RelayAnswers } from '../../daemon/gate/relayAnswers.ts';
import { Waiting } from '../../daemon/gate/waiting.ts';
import { recordWithdrawal } from '../../daemon/gate/withdrawal.ts';
import { Grants } from '../../daemon/grants/grants.ts';
import { RelayClient } from '../../daemon/relay/relayClient.ts';
import type { GateRequest } from '../../daemon/socket/localApi.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import {
  pairedFleet,
  requestDetails,
  signToken,
  type PairedFleet,
} from '../../scripts/lib/approvalFixture.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';
import { StandInRelay, type RequestAnswer } from '../support/standInRelay.ts';

/**
 * A phone's approval takes a while to verify (signatures on the thread pool). What happened here
 * meanwhile (a withdrawal, a freeze) decides: the record is read again when the answer is given.
 */

let fleet: PairedFleet;
let directory: string;
let store: StateStore;
let auditPath: string;
let audit: AuditLog;
let fatigue: PushFatigue;
let grants: Grants;
let waiting: Waiting;
let answers: RelayAnswers;

beforeEach(async () => {
  fleet = await pairedFleet();
  directory = mkdtempSync(join(tmpdir(), 'latch-approval-races-'));
  store = new StateStore(join(directory, 'state.db'));
  store.addDevice(fleet.device, Date.now());
  auditPath = join(directory, 'audit.log');
  audit = new AuditLog(auditPath, store, { redactContent: false });
  fatigue = new PushFatigue(store);
  grants = new Grants(store.db);
  waiting = new Waiting({ store, audit, fatigue, onAllGone: () => undefined });
  answers = new RelayAnswers({
    store,
    audit,
    relying: { origins: [TEST_ORIGIN], rpId: TEST_RP_ID },
    freezeFleet: async () => undefined,
    fatigue,
    grants,
    waiting,
    sessionReported: () => undefined,
  });
  return () => store.close();
});

const auditEvents = () =>
  readFileSync(auditPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** A pending request whose caller waits, and the phone's approval of it with a half-hour grant. */
async function askedAndApproved() {
  const now = Date.now();
  const details = requestDetails(fleet, {
    risk: 'medium',
    createdAt: now,
    exp: now + 300_000,
    similar: {
      tool: 'Bash',
      words: ['rm', '-rf', 'build'],
      thenAnyName: false,
      folder: '/home/dev/project',
      policyRule: 'ask-rm',
    },
  });
  const binding = await detailsBinding(details);
  store.saveRequest({ requestId: details.requestId, dedupKey: 'k', details, binding, state: 'pending' }, now);
  const answer = waiting.wait(details.requestId, details.exp);
  return {
    requestId: details.requestId,
    answer,
    token: await signToken(fleet.phone, { ...binding, grant: 'half_hour' }),
  };
}

/** Runs `meanwhile` as the token's single use is recorded: in the middle of its verification. */
function duringVerification(meanwhile: () => void): void {
  const consume = store.consume.bind(store);
  store.consume = (key, exp) => {
    meanwhile();
    return consume(key, exp);
  };
}

it('refuses an approval verified while its request was withdrawn, and adds no grant', async () => {
  const { requestId, answer, token } = await askedAndApproved();
  duringVerification(() => {
    recordWithdrawal(
      store,
      new AuditLog(auditPath, store, { redactContent: false }),
      requestId,
      'caller_gone',
    );
    waiting.settle(requestId, deny('denied', 'withdrawn: every caller stopped waiting', requestId));
  });
  await answers.onApproved(requestId, token);
  expect(await answer).toMatchObject({ decision: 'deny', reason: 'withdrawn: every caller stopped waiting' });
  expect(store.request(requestId)?.state).toBe('withdrawn');
  expect(grants.store.live(Date.now())).toEqual([]);
  expect(auditEvents()).toContainEqual(
    expect.objectContaining({ event: 'token_refused', requestId, code: 'withdrawn' }),
  );
  expect(auditEvents().map((line) => line['event'])).not.toContain('grant_added');
});

it('refuses an approval verified while the fleet froze: the caller hears kill_switch, and no grant is added', async () => {
  const { requestId, answer, token } = await askedAndApproved();
  duringVerification(() =>
    store.applyFreeze({ id: null, reason: 'panic', cause: 'panic', signedAt: null }, Date.now()),
  );
  await answers.onApproved(requestId, token);
  expect(await answer).toMatchObject({
    decision: 'deny',
    blockReason: 'kill_switch',
    reason: 'kill_switch: the fleet is frozen (panic)',
  });
  expect(store.request(requestId)?.state).toBe('denied');
  expect(grants.store.live(Date.now())).toEqual([]);
  expect(auditEvents()).toContainEqual(
    expect.objectContaining({ event: 'token_refused', requestId, code: 'kill_switch' }),
  );
});

it('allows the same approval when nothing happened meanwhile, grant and all', async () => {
  const { requestId, answer, token } = await askedAndApproved();
  await answers.onApproved(requestId, token);
  expect(await answer).toMatchObject({ decision: 'allow', via: 'phone' });
  expect(grants.store.live(Date.now())).toHaveLength(1);
});

/** The signature counter an approval's authenticator data carries. */
const counterOf = (token: { assertion: { authenticatorData: string } }) =>
  new DataView(fromBase64url(token.assertion.authenticatorData).buffer).getUint32(33);

const storedCounter = () => store.activeDevice(fleet.device.id)!.credential.counter;

it('refuses an approval whose counter another assertion of the passkey passed while it was verified', async () => {
  const { requestId, answer, token } = await askedAndApproved();
  const later = counterOf(token) + 5;
  // Another assertion of the same passkey (a resume vote, say) is stored meanwhile.
  duringVerification(() =>
    store.db.prepare('UPDATE devices SET counter = ? WHERE id = ?').run(later, fleet.device.id),
  );
  await answers.onApproved(requestId, token);
  expect(storedCounter()).toBe(later);
  expect(auditEvents()).toContainEqual(
    expect.objectContaining({ event: 'token_refused', requestId, code: 'counter_not_increased' }),
  );
  expect(store.request(requestId)?.state).toBe('pending');
  waiting.settle(requestId, deny('expired', 'expired', requestId));
  await answer;
});

it('never stores a revoked phone again, whose tokens signed before would otherwise count under its new pairing', async () => {
  const { requestId, answer, token } = await askedAndApproved();
  await answers.onApproved(requestId, token);
  expect(await answer).toMatchObject({ decision: 'allow' });
  store.revokeDevice(fleet.device.id, Date.now());
  // Paired again with the same passkey, whose registration reported the counter of its making.
  expect(() => store.addDevice(fleet.device, Date.now())).toThrow();
  expect(store.activeDevice(fleet.device.id)).toBeUndefined();
});

it('refuses a relay’s “joined” for a request a phone approved early: one that joined another was never shown, and the rule is undone', async () => {
  const relay = await StandInRelay.start();
  onTestFinished(() => relay.stop());
  const config = parseConfig(
    configTemplate({ relayUrl: relay.origin, hostName: 'box', fleet: fleet.fleet, quorum: 1 }),
    'config.toml',
  );
  const asking = new Asking({
    store,
    audit,
    relay: new RelayClient(relay.origin, fleet.fleet, () => 'host-token'),
    hostId: 'host-1',
    totpPath: join(directory, 'totp.json'),
    config: () => config,
    fatigue,
    grants,
    waiting,
  });
  const call: GateRequest = {
    agent: 'claude-code',
    tool: 'Bash',
    command: 'rm -rf build',
    paths: [],
    session: 'session-1',
    toolUseId: 'toolu-1',
    interactive: false,
    canDefer: false,
    shortened: false,
  };
  // A request of the same call left pending here with no caller (after a local failure), soon
  // to expire: what the relay says the new one joined.
  const now = Date.now();
  const left = requestDetails(fleet, { createdAt: now, exp: now + 1500 });
  store.saveRequest(
    {
      requestId: left.requestId,
      dedupKey: CallIds.of(store).dedupKey(call)!,
      details: left,
      binding: await detailsBinding(left),
      state: 'pending',
    },
    now,
  );
  let answerThePost!: (answer: RequestAnswer) => void;
  relay.answerRequest = () => new Promise((resolve) => (answerThePost = resolve));
  const similar = {
    tool: 'Bash',
    words: ['rm', '-rf', 'build'],
    thenAnyName: false,
    folder: '/',
    policyRule: 'ask-rm',
  };
  const answer = asking.askOnce(call, { risk: 'medium', timeoutSeconds: 60, target: 'build', similar });
  const sent = await relay.nextRequest(0);
  const token = await signToken(fleet.phone, {
    ...store.request(sent.requestId)!.binding,
    grant: 'half_hour',
  });
  await answers.onApproved(sent.requestId, token);
  expect(grants.store.live(Date.now())).toHaveLength(1);
  answerThePost({ requestId: left.requestId, joined: true });
  expect(await answer).toMatchObject({
    decision: 'deny',
    reason: 'relay_unreachable: the relay answered for a request this host did not make; refused',
  });
  expect(grants.store.live(Date.now())).toEqual([]);
  expect(auditEvents()).toContainEqual(
    expect.objectContaining({ event: 'relay_claim_refused', requestId: sent.requestId, joined: true }),
  );
});
