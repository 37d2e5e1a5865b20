import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { approvalBinding } from '../../../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../../../shared/approvals/approvalChallenge.ts';
import { REVIEW_SECONDS } from '../../../shared/approvals/reviewSeconds.ts';
import type { Grant, RequestDetails } from '../../../shared/messages/approvals.ts';
import type { Assertion } from '../../../shared/messages/common.ts';
import type { RequestView } from '../../../shared/messages/relayViews.ts';
import type { ReportScope } from '../../../shared/messages/envelopes.ts';
import { approve, deny, fetchRequest, openRequest, tappedRequest, type OpenedRequest } from '../actions.ts';
import { GRANT_WORDS, rememberRule } from '../allowedRules.ts';
import { AllowSimilar } from '../components/AllowSimilar.tsx';
import { DenyAndReport } from '../components/DenyAndReport.tsx';
import { DenySession } from '../components/DenySession.tsx';
import { FatigueNotes } from '../components/FatigueNotes.tsx';
import { DiffView } from '../components/DiffView.tsx';
import { RiskBadge } from '../components/RiskBadge.tsx';
import { loadIdentity, loadPasskey, type DeviceIdentity, type Passkey } from '../keystore.ts';
import { FACE_ID_CANCELLED, refusalText } from '../refusalText.ts';
import { relayNow, timeLeft } from '../relayClock.ts';
import { AGENT_SAYS, cardContext } from '../requestCard.ts';
import { navigate } from '../router.ts';
import { useConnectivity } from '../useConnectivity.ts';
import { signWithPasskey } from '../webauthn.ts';

type Outcome = 'approved' | 'denied' | 'expired' | 'already decided' | 'withdrawn' | 'failed' | 'unopened';
type Phase =
  | { name: 'loading' }
  | { name: 'ready'; request: OpenedRequest }
  /** `retry`: it could not open for now (the relay out of reach, busy or failing), not for good. */
  | { name: 'done'; outcome: Outcome; message: string; retry?: boolean };

/** What a report does, once its host has verified it. */
const REPORT_EFFECT: Record<ReportScope, string> = {
  session: 'this host refuses the rest of its session',
  fleet: 'every agent is being frozen',
};

/** How often an open request asks the relay whether it still waits, as the home list does. */
const RECHECK_MS = 5000;

/** A withdrawn request: its host withdrew it because nobody waits for the answer any more. */
const NO_LONGER_WAITING = 'The agent stopped waiting, or the fleet froze; nothing was approved.';

/** What the screen says when the relay refused an answer. */
function refusedOutcome(result: { status: number; code: string; message: string }): [Outcome, string] {
  if (result.code === 'withdrawn') return ['withdrawn', NO_LONGER_WAITING];
  return [
    result.status === 409 ? 'already decided' : result.status === 410 ? 'expired' : 'failed',
    refusalText(result),
  ];
}

/** What the screen says of a request that no longer waits, by the relay's view of it. */
function endedOutcome(view: RequestView, me: string): [Outcome, string] | undefined {
  if (view.state === 'withdrawn') return ['withdrawn', NO_LONGER_WAITING];
  const expired = view.state === 'expired' || view.exp <= relayNow();
  if (view.state === 'pending' && !expired) return undefined;
  return [
    expired ? 'expired' : 'already decided',
    `This request was already ${view.state === 'pending' ? 'expired' : view.state}${view.decidedBy === me ? ' on this phone' : ''}.`,
  ];
}

/** A change to Latch itself (a phone, a looser policy or config), asked by its daemon: no agent waits on it. */
const changesLatch = (details: RequestDetails) => details.agent === 'latch';

/**
 * What an approval did: the relay took it, no more. The computer verifies it itself, and may be
 * off or refuse it, so the screen never says the call was allowed.
 */
function sentText(details: RequestDetails, grant?: Grant): string {
  const after = changesLatch(details)
    ? 'makes the change'
    : grant
      ? `the agent goes ahead, and may run calls like this ${GRANT_WORDS[grant]} without asking`
      : 'the agent goes ahead, once';
  return `Your computer checks it, then ${after}.`;
}

const NOT_LISTED =
  ' This phone could not keep the rule in its list: latch policy grants, on your computer, shows it.';

const OUTCOME_TEXT: Record<Outcome, string> = {
  approved: 'Approval sent',
  denied: 'Denied',
  expired: 'Expired',
  'already decided': 'Already decided',
  withdrawn: 'No longer waiting',
  failed: 'Not sent',
  unopened: 'Cannot open',
};

export function RequestScreen({ fleet, requestId }: { fleet: string; requestId: string }) {
  const [phase, setPhase] = useState<Phase>({ name: 'loading' });
  const [identity, setIdentity] = useState<DeviceIdentity>();
  const [passkey, setPasskey] = useState<Passkey>();
  // Loads whenever the screen is loading: at first, and on "Try again" after "Cannot open" for
  // now (the relay out of reach, say). The screen is made anew for each request (App's key).
  useEffect(() => {
    if (phase.name !== 'loading') return;
    void (async () => {
      const me = await loadIdentity();
      if (!me) return setPhase({ name: 'done', outcome: 'unopened', message: 'This phone is not paired.' });
      setIdentity(me);
      setPasskey(await loadPasskey());
      const pushed = await tappedRequest(me, fleet, requestId);
      if (pushed) return setPhase({ name: 'ready', request: pushed });
      const view = await fetchRequest(me, fleet, requestId);
      if (!view.ok)
        return setPhase({
          name: 'done',
          outcome: 'unopened',
          message: refusalText(view),
          retry: [0, 408, 429].includes(view.status) || view.status > 499,
        });
      const ended = endedOutcome(view.value, me.id);
      if (ended) return setPhase({ name: 'done', outcome: ended[0], message: ended[1] });
      const opened = await openRequest(me, fleet, view.value);
      setPhase(
        'error' in opened
          ? { name: 'done', outcome: 'unopened', message: opened.error }
          : { name: 'ready', request: opened },
      );
    })();
  }, [phase]);

  if (phase.name === 'loading') return <main class="screen">Loading…</main>;
  if (phase.name === 'done')
    return (
      <Result
        outcome={phase.outcome}
        message={phase.message}
        onRetry={phase.retry ? () => setPhase({ name: 'loading' }) : undefined}
      />
    );
  return (
    <Review
      request={phase.request}
      identity={identity!}
      passkey={passkey}
      onDone={(outcome, message, taken = false) =>
        // Once shown, a result stays, but for the relay taking the answer: a late refusal after
        // Expired (this phone's reading of the clock) would only confuse.
        setPhase((shown) => (shown.name === 'done' && !taken ? shown : { name: 'done', outcome, message }))
      }
    />
  );
}

function Result({ outcome, message, onRetry }: { outcome: Outcome; message: string; onRetry?: () => void }) {
  return (
    <main class="screen">
      <div class={`result result-${outcome.replace(' ', '-')}`} role="status" aria-live="assertive">
        <h1 class="result-word">{OUTCOME_TEXT[outcome]}</h1>
        <p>{message}</p>
      </div>
      {onRetry && (
        <button type="button" class="primary" onClick={onRetry}>
          Try again
        </button>
      )}
      <button type="button" class="primary" onClick={() => navigate('/')}>
        Back to the list
      </button>
    </main>
  );
}

function Review({
  request,
  identity,
  passkey,
  onDone,
}: {
  request: OpenedRequest;
  identity: DeviceIdentity;
  passkey: Passkey | undefined;
  /** `taken`: the relay took this phone's answer, so its result replaces any shown before. */
  onDone: (outcome: Outcome, message: string, taken?: boolean) => void;
}) {
  const { details } = request;
  // The daemon may ask for a longer hold (a burst of approvals, asked again after a deny), and
  // refuses an approval that comes sooner.
  const review = Math.max(REVIEW_SECONDS[details.risk], details.reviewSeconds ?? 0);
  const [shownAt] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [cancelled, setCancelled] = useState(false);
  // Offline, neither answer can reach the relay: both are off (OfflineBanner says why).
  const { offline } = useConnectivity();

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);

  const reviewLeft = Math.max(0, Math.ceil((shownAt + review * 1000 - now) / 1000));
  const needsTyping = details.risk === 'critical';
  const target = details.target ?? details.tool;
  // The deadline is the host's: the relay's clock is closer to it than a phone's may be.
  const expired = relayNow() >= details.exp;
  const canApprove =
    !busy &&
    !offline &&
    !expired &&
    reviewLeft === 0 &&
    (!needsTyping || typed === target) &&
    passkey !== undefined;

  // No answer from the relay (out of reach, or its answer lost on the way) says nothing of whether
  // it took this one: the card stays, its buttons off while the relay is out of reach, and the
  // relay, asked again below, says whether it was taken, even past the deadline. A refusal is final.
  const [maybeTaken, setMaybeTaken] = useState(false);
  const unanswered = (result: { status: number; code: string; message: string }) =>
    result.status ? onDone(...refusedOutcome(result)) : (setMaybeTaken(true), setBusy(false));

  const doDeny = async (report?: ReportScope) => {
    if (busy || offline) return;
    setBusy(true);
    const result = await deny(identity, request.fleet, request.view.host, request.view.requestId, report);
    if (!result.ok) return unanswered(result);
    const { state } = result.value;
    const reported = report ? REPORT_EFFECT[report] : '';
    if (state === 'denied')
      return onDone(
        'denied',
        `${changesLatch(details) ? 'Nothing was changed' : 'The agent was told no'}${reported && `, and reported: ${reported}`}.`,
        true,
      );
    // The relay takes a report even for a request that ended meanwhile: it still counts.
    onDone(
      state === 'withdrawn' || state === 'expired' ? state : 'already decided',
      `Too late to deny, but reported: ${reported}.`,
      true,
    );
  };

  // One Face ID approves the call and, with `grant`, the rule shown (AllowSimilar).
  const doApprove = async (grant?: Grant) => {
    if (!canApprove) return;
    setBusy(true);
    // Only Face ID can fail unsent: past it, the screen says what the relay took, whatever fails.
    let assertion: Assertion;
    try {
      assertion = await signWithPasskey(
        passkey!,
        await approvalChallenge(approvalBinding(request.binding, grant)),
      );
    } catch {
      setBusy(false); // Face ID cancelled: nothing was sent, the request still waits.
      return setCancelled(true);
    }
    const result = await approve(identity, request, assertion, grant);
    if (!result.ok) return unanswered(result);
    // The computer keeps the rule; this phone's list of it is a convenience that can fail.
    const listed =
      !grant ||
      (await rememberRule(request, grant).then(
        () => true,
        () => false,
      ));
    onDone('approved', sentText(details, grant) + (listed ? '' : NOT_LISTED), true);
  };

  useEffect(() => {
    if (expired && !maybeTaken) onDone('expired', 'No answer in time: the agent was refused.');
  }, [expired]);

  // Decided on another phone, or withdrawn: the push that closes its notification also has the
  // service worker tell this page, which asks the relay (not while this phone's own answer is
  // under way: its result says more). A push the relay's caps held back brings no message, so it
  // is asked every few seconds too.
  useEffect(() => {
    if (busy) return;
    const recheck = async () => {
      const view = await fetchRequest(identity, request.fleet, request.view.requestId);
      const ended = view.ok && endedOutcome(view.value, identity.id);
      if (ended) onDone(...ended);
    };
    const timer = setInterval(recheck, RECHECK_MS);
    navigator.serviceWorker?.addEventListener('message', recheck);
    return () => {
      clearInterval(timer);
      navigator.serviceWorker?.removeEventListener('message', recheck);
    };
  }, [busy]);

  // A layout effect: the keys work from the moment the request is on screen (a plain effect runs
  // after the paint, and an Escape pressed in between was lost).
  useLayoutEffect(() => {
    // Escape denies; with a panel open (report, calls like this), it closes that first, as a
    // dialog's would. Enter never approves: on an Approve button it does nothing, as elsewhere
    // it presses the button in focus (a keyboard's or a switch's only way to).
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as Element;
      // In a text box (the word a critical request asks for), Escape is the box's: it clears or
      // closes a suggestion there, and a deny the person did not choose is final.
      if (event.key === 'Escape' && !target.matches('input')) {
        event.preventDefault();
        const panelCancel = document.querySelector<HTMLElement>('fieldset .link');
        if (panelCancel) panelCancel.click();
        else void doDeny();
      } else if (event.key === 'Enter' && target.matches('.approve')) {
        event.preventDefault();
      }
    };
    addEventListener('keydown', onKey, true);
    return () => removeEventListener('keydown', onKey, true);
  });

  return (
    <main class="screen request">
      {/* Leaves the request waiting: a standalone app has no browser Back button. */}
      <button type="button" class="link" onClick={() => navigate('/')}>
        Back to the list
      </button>
      {/* What runs or changes first, then where it comes from. A one-line command, the detail's
          first line, is its own title. */}
      <h1
        data-title="Request"
        class={
          `${details.detail}\n`.startsWith(`${details.title}\n`) ? 'request-title command' : 'request-title'
        }
      >
        {details.title}
      </h1>
      {details.description && (
        <p class="request-description">
          {AGENT_SAYS}
          {details.description}
        </p>
      )}
      <p class="request-meta">
        <span>{cardContext(details)}</span> · <span>{details.agent}</span> · <span>{details.tool}</span> ·{' '}
        <RiskBadge risk={details.risk} />
      </p>
      {details.shortened && (
        <p class="shortened" role="note">
          Text shortened: hidden or control characters were removed, or part of it is not shown.
        </p>
      )}
      <FatigueNotes details={details} />
      {details.detail === details.title ? null : details.detail.trim() ? (
        <pre class="detail">{details.detail}</pre>
      ) : (
        <p class="muted no-detail">No details: the title above is all the agent sent.</p>
      )}
      {/* Latch's words, each in a box of its own: no line of the command can read as one. */}
      {details.notes?.map((note) => (
        <pre class="detail note">{note}</pre>
      ))}
      {details.diff && <DiffView diff={details.diff} />}
      {details.cwd && (
        <p class="muted request-cwd">
          in <code>{details.cwd}</code>
        </p>
      )}
      {needsTyping && (
        <label class="confirm">
          <span>
            To approve, type <code class="target">{target}</code>
          </span>
          <input
            value={typed}
            onInput={(event) => setTyped(event.currentTarget.value)}
            autocomplete="off"
            autocapitalize="off"
            autocorrect="off"
            spellcheck={false}
          />
          {/* Exact on purpose (reading the name is the point), so a near miss says so. */}
          {typed !== '' && !target.startsWith(typed) && (
            <span class="confirm-mismatch" role="status">
              Not the same yet.
            </span>
          )}
        </label>
      )}
      <div class="actions">
        <button type="button" class="deny" disabled={busy || offline} onClick={() => void doDeny()}>
          Deny
        </button>
        <button type="button" class="approve" disabled={!canApprove} onClick={() => void doApprove()}>
          {offline
            ? 'Offline'
            : needsTyping && typed !== target
              ? reviewLeft > 0
                ? `Type the name above; approve in ${reviewLeft}\u00a0s`
                : 'Type the name above to approve'
              : reviewLeft > 0
                ? `Approve in ${reviewLeft}\u00a0s`
                : 'Approve with Face ID'}
        </button>
      </div>
      {cancelled && !busy && <p role="status">{FACE_ID_CANCELLED}</p>}
      {details.similar && (
        <AllowSimilar
          similar={details.similar}
          disabled={!canApprove}
          approveLabel={(grant) =>
            `${reviewLeft > 0 ? `In ${reviewLeft}\u00a0s: approve` : 'Approve'}, and allow calls like this ${GRANT_WORDS[grant]}`
          }
          onApprove={(grant) => void doApprove(grant)}
        />
      )}
      <DenyAndReport
        disabled={busy || offline}
        hasSession={details.session !== undefined}
        onReport={(scope) => void doDeny(scope)}
      />
      <DenySession
        identity={identity}
        request={request}
        disabled={busy || offline}
        setBusy={setBusy}
        onDone={(denied) =>
          onDone('denied', `${denied} request${denied === 1 ? '' : 's'} from this session denied.`, true)
        }
      />
      <p class="muted">
        {!offline && <span class="keys-hint">Escape denies. </span>}
        {timeLeft(details.exp)}.
      </p>
    </main>
  );
}
