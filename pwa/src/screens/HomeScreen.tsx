import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { freezeId } from '../../../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../../../shared/kill-switch/resumeChallenge.ts';
import type { FreezeEnvelope } from '../../../shared/messages/envelopes.ts';
import type { FleetState } from '../../../shared/messages/killSwitch.ts';
import {
  fetchState,
  freeze,
  listRequests,
  openRequest,
  voteToResume,
  type OpenedRequest,
} from '../actions.ts';
import { markRulesFrozen } from '../allowedRules.ts';
import { NotificationBanner } from '../components/NotificationBanner.tsx';
import { PanicButton } from '../components/PanicButton.tsx';
import { RiskBadge } from '../components/RiskBadge.tsx';
import {
  loadIdentity,
  loadMemberships,
  loadPasskey,
  type DeviceIdentity,
  type Membership,
  type Passkey,
} from '../keystore.ts';
import { requestPath } from '../paths.ts';
import { FACE_ID_CANCELLED, refusalText } from '../refusalText.ts';
import { timeLeft } from '../relayClock.ts';
import { AGENT_SAYS, cardContext } from '../requestCard.ts';
import { navigate } from '../router.ts';
import { useAction, useConnectivity } from '../useConnectivity.ts';
import { signWithPasskey } from '../webauthn.ts';

interface FleetView {
  membership: Membership;
  state?: FleetState;
  /** Why the state could not be read, when it could not. */
  problem?: string;
  /** The relay does not know this phone in the fleet (revoked, or never paired there). */
  outside?: boolean;
  pending: OpenedRequest[];
  recent: OpenedRequest[];
}

const POLL_MS = 3000;

const FROZEN = 'Frozen. Every agent is stopped.';

async function loadFleet(identity: DeviceIdentity, membership: Membership): Promise<FleetView> {
  const [state, pending, recent] = await Promise.all([
    fetchState(identity, membership.fleet),
    listRequests(identity, membership.fleet, 'pending'),
    listRequests(identity, membership.fleet, 'recent'),
  ]);
  const open = async (list: typeof pending) =>
    list.ok
      ? (
          await Promise.all(list.value.requests.map((view) => openRequest(identity, membership.fleet, view)))
        ).filter((opened): opened is OpenedRequest => !('error' in opened))
      : [];
  return {
    membership,
    ...(state.ok
      ? { state: state.value }
      : { problem: refusalText(state), outside: state.code === 'unknown_credential' }),
    pending: await open(pending),
    recent: await open(recent),
  };
}

const hostNames = (fleet: FleetView) => fleet.membership.hosts.map((host) => host.name).join(', ');

/** Frozen by a signed freeze, which votes can lift: another press would add nothing. */
const frozenForGood = (fleet: FleetView): boolean => Boolean(fleet.state?.frozen && fleet.state.freeze);

export function HomeScreen() {
  const [identity, setIdentity] = useState<DeviceIdentity>();
  const [passkey, setPasskey] = useState<Passkey>();
  const [fleets, setFleets] = useState<FleetView[]>();
  /** What became of this phone's last panic (frozen, or why not): said until it no longer holds. */
  const [panicked, setPanicked] = useState<string>();
  // Offline, the list is the last one known and what needs the relay is off (OfflineBanner says why).
  const { offline } = useConnectivity();

  // Refreshes overlap (polls, the worker's messages, a panic): one begun before the one shown
  // last (a poll from before a panic) is not shown after it. Counted, since each may take long.
  const begunCount = useRef(0);
  const shownBegun = useRef(0);
  // A fleet that no longer knows this phone never takes it back: asked once, not on every poll.
  const outside = useRef<Record<string, FleetView>>({});
  const refresh = useCallback(async () => {
    const begun = ++begunCount.current;
    const me = identity ?? (await loadIdentity());
    if (!me) return setFleets([]);
    setIdentity(me);
    setPasskey(await loadPasskey());
    const views = await Promise.all(
      (await loadMemberships()).map(
        (membership) => outside.current[membership.fleet] ?? loadFleet(me, membership),
      ),
    );
    for (const view of views) if (view.outside) outside.current[view.membership.fleet] = view;
    if (begun < shownBegun.current) return;
    // A freeze ended every rule phones allowed on the fleet's hosts: this phone's list says so,
    // before the screen does (a page left at once would lose the write).
    await markRulesFrozen(
      views.flatMap(({ membership, state }) =>
        state?.frozen ? [{ fleet: membership.fleet, at: state.frozenAt ?? Date.now() }] : [],
      ),
    );
    if (begun < shownBegun.current) return;
    shownBegun.current = begun;
    setFleets(views);
    // A resume (voted here or on another phone) ends "Frozen" as soon as the relay says so.
    if (!views.some((fleet) => fleet.state?.frozen))
      setPanicked((said) => (said === FROZEN ? undefined : said));
  }, [identity]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), POLL_MS);
    const onMessage = () => void refresh();
    navigator.serviceWorker?.addEventListener('message', onMessage);
    return () => {
      clearInterval(timer);
      navigator.serviceWorker?.removeEventListener('message', onMessage);
    };
  }, [refresh]);

  if (!fleets) return <main class="screen">Loading…</main>;
  if (!identity || fleets.length === 0) {
    return (
      <main class="screen">
        <h1>Latch</h1>
        <p>
          This phone is not paired yet. On your computer, run <code>latch pair</code> and scan its code.
        </p>
        <button type="button" class="primary" onClick={() => navigate('/scan')}>
          Scan a pairing code
        </button>
      </main>
    );
  }

  const paired = fleets.filter((fleet) => !fleet.outside);
  const allFrozen = paired.length > 0 && paired.every(frozenForGood);
  const panic = async () => {
    // Not the fleets that removed this phone: they would refuse, and "Not frozen" would hide that
    // the others froze.
    const results = await Promise.all(
      paired.map((fleet) => freeze(identity, fleet.membership.fleet, 'panic button')),
    );
    const refused = results.find((result) => !result.ok);
    // The way that needs no relay, which may be what failed (a phone walk); some fleets may have
    // frozen: "Not frozen" would hide that others still run.
    setPanicked(
      refused?.ok === false
        ? `${results.some((result) => result.ok) ? 'Not every fleet froze' : 'Not frozen'}. ${refusalText(refused)} On a computer, latch panic freezes it.`
        : FROZEN,
    );
    await refresh();
  };

  return (
    <main class="screen">
      <header class="top">
        <h1>Latch</h1>
        <nav>
          <button type="button" class="link" onClick={() => navigate('/devices')}>
            Devices
          </button>
          <button type="button" class="link" onClick={() => navigate('/scan')}>
            Scan
          </button>
        </nav>
      </header>
      <PanicButton
        onFire={() => void panic()}
        // A freeze with no signed envelope cannot be voted away: freezing anew is the way out. A
        // phone no fleet knows any more freezes nothing: it does not look armed.
        disabled={offline || paired.length === 0 || allFrozen}
        why={
          paired.length === 0 ? 'no fleet knows this phone' : allFrozen ? 'every agent is frozen' : undefined
        }
      />
      {panicked && (
        <p
          class={panicked === FROZEN ? 'notice' : 'notice error'}
          role={panicked === FROZEN ? 'status' : 'alert'}
        >
          {panicked}
        </p>
      )}
      {/* Offline, the relay cannot be asked about push: the offline banner says why instead. */}
      {!offline && <NotificationBanner />}
      {fleets.map((fleet) => (
        // Named for its hosts (as this phone paired with them): with two fleets, which is which.
        <section key={fleet.membership.fleet} aria-label={hostNames(fleet)}>
          {fleets.length > 1 && <h2>{hostNames(fleet)}</h2>}
          {/* A new freeze, or a resume, starts it afresh: "Your vote is counted" was the last one's. */}
          <FleetStatus
            key={`${fleet.state?.epoch}-${fleet.state?.frozen}`}
            fleet={fleet}
            identity={identity}
            passkey={passkey}
            onChange={refresh}
          />
          {/* A phone the fleet no longer knows sees none of its requests: it says so above, and
              lists nothing here, "Nothing is waiting" least of all. */}
          {!fleet.outside && (
            <>
              <h2>Waiting for you ({fleet.pending.length})</h2>
              {fleet.pending.length === 0 && <p class="muted">Nothing is waiting.</p>}
              <ul class="requests">
                {fleet.pending.map((request) => (
                  <li key={request.view.requestId}>
                    <button
                      type="button"
                      class="request-item"
                      disabled={offline}
                      aria-describedby={offline ? 'offline-reason' : undefined}
                      onClick={() => navigate(requestPath(fleet.membership.fleet, request.view.requestId))}
                    >
                      <span class="request-title">{request.details.title}</span>
                      {request.details.description && (
                        <span class="request-description">
                          {AGENT_SAYS}
                          {request.details.description}
                        </span>
                      )}
                      {request.details.askedAgainAfterDeny && (
                        <span class="asked-again">Asked again after you denied</span>
                      )}
                      <span class="request-meta">
                        {cardContext(request.details)} · <RiskBadge risk={request.details.risk} /> ·{' '}
                        {timeLeft(request.details.exp)}
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
              <h2>Recent</h2>
              {fleet.recent.length === 0 && <p class="muted">Nothing decided yet.</p>}
              <ul class="requests recent">
                {fleet.recent.map((request) => (
                  <li key={request.view.requestId}>
                    <span class="request-title">{request.details.title}</span>
                    <span class={`outcome outcome-${request.view.state}`}>{request.view.state}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      ))}
    </main>
  );
}

function FleetStatus({
  fleet,
  identity,
  passkey,
  onChange,
}: {
  fleet: FleetView;
  identity: DeviceIdentity;
  passkey: Passkey | undefined;
  onChange: () => Promise<void>;
}) {
  const [message, setMessage] = useState<string>();
  const [off, run] = useAction();
  const { state } = fleet;
  if (!state)
    return (
      <p class="status unknown">
        {fleet.problem}
        {fleet.outside && ' To pair it again, clear this app’s data: it then leaves every fleet.'}
      </p>
    );
  if (!state.frozen) {
    return (
      <p class="status armed" aria-live="polite">
        Armed: agents run under your policy.
      </p>
    );
  }
  const voted = state.votes.includes(identity.id);
  const { freeze } = state;
  const vote = async (envelope: FreezeEnvelope) => {
    if (!passkey) return setMessage('This phone has no passkey.');
    // The vote names the freeze by the id of its signed envelope, computed here: it can end this
    // freeze and no other, whatever the relay labels it.
    const id = await freezeId(envelope);
    try {
      const assertion = await signWithPasskey(
        passkey,
        await resumeChallenge({ fleet: state.fleet, freeze: id }),
      );
      const result = await voteToResume(identity, state.fleet, id, assertion);
      setMessage(result.ok ? 'Your vote is counted.' : `Vote refused. ${refusalText(result)}`);
    } catch {
      setMessage(FACE_ID_CANCELLED);
    }
    await onChange();
  };
  return (
    <div class="status frozen" role="alert">
      {/* The signed freeze's reason, not the relay's unsigned copy, which it could write anything in. */}
      <strong>FROZEN</strong>, reason given: {freeze?.body.reason ?? 'none'}
      <p>
        Votes to resume: {state.votes.length} of {state.needed}
      </p>
      {!freeze ? (
        <p>No signed freeze to vote on: hold PANIC to freeze again, then vote.</p>
      ) : voted ? (
        <p>This phone has voted. If too few phones are left to vote, run latch doctor on the computer.</p>
      ) : (
        <button type="button" class="primary" disabled={off} onClick={() => run(() => vote(freeze))}>
          Vote to resume (Face ID)
        </button>
      )}
      {message && <p role="status">{message}</p>}
    </div>
  );
}
