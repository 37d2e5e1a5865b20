import { useEffect, useState } from 'preact/hooks';
import { parsePairingLink } from '../../../shared/pairing/pairingLink.ts';
import { NotificationBanner } from '../components/NotificationBanner.tsx';
import { pairWith, type PairingProgress } from '../pairing.ts';
import { navigate } from '../router.ts';

function guessDeviceName(): string {
  const agent = navigator.userAgent;
  if (/iPhone/.test(agent)) return 'iPhone';
  if (/iPad/.test(agent)) return 'iPad';
  if (/Android/.test(agent)) return 'Android phone';
  return 'Browser';
}

/** Opened by the QR link: the secret is in the fragment, which never leaves this page. */
export function PairScreen() {
  const [progress, setProgress] = useState<PairingProgress>({ step: 'checking' });
  const [name, setName] = useState(guessDeviceName);
  const [started, setStarted] = useState(false);
  // Read on arrival, and again when another code is scanned while this screen is open (only the
  // fragment changes then: the page is not loaded again).
  const [link, setLink] = useState(() => parsePairingLink(location.href));
  useEffect(() => {
    const readNewLink = () => {
      if (!location.hash) return;
      setLink(parsePairingLink(location.href));
      setStarted(false);
      setProgress({ step: 'checking' });
    };
    addEventListener('hashchange', readNewLink);
    return () => removeEventListener('hashchange', readNewLink);
  }, []);

  useEffect(() => {
    // Keep the secret out of the address bar and history once read.
    if (link.ok) history.replaceState(null, '', '/pair');
  }, [link]);
  // Ended: a reload, or Back from a later screen, opens the app, not an empty pairing.
  useEffect(() => {
    if (progress.step === 'done' || progress.step === 'failed') history.replaceState(null, '', '/');
  }, [progress.step]);

  // Also where a reload lands once the link's secret is out of the address: after pairing, or
  // during it (the keys outlive a reload, the wait for the computer does not).
  if (!link.ok) {
    return (
      <main class="screen">
        <h1>Pair this phone</h1>
        <p>
          No valid pairing link here. If this phone was pairing when the page reloaded, the computer may have
          added it: check <code>latch devices</code>. Else run <code>latch pair</code> again and scan its
          code.
        </p>
        <button type="button" class="primary" onClick={() => navigate('/')}>
          Done
        </button>
      </main>
    );
  }

  const start = () => {
    if (!link.ok) return;
    setStarted(true);
    pairWith(link.value, name.trim() || guessDeviceName(), setProgress).catch((error: unknown) =>
      setProgress({
        step: 'failed',
        message:
          error instanceof Error && error.name === 'NotAllowedError'
            ? 'Face ID was cancelled.'
            : 'Pairing failed.',
      }),
    );
  };

  if (!started) {
    return (
      <main class="screen">
        <h1>Pair this phone</h1>
        <p>This phone will be asked before your agents do anything dangerous, and can freeze them all.</p>
        <label class="field">
          Name this phone
          <input value={name} maxLength={40} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <button type="button" class="primary" onClick={start}>
          Pair with Face ID
        </button>
      </main>
    );
  }

  return (
    <main class="screen">
      <h1>Pair this phone</h1>
      {progress.step === 'checking' && <p>Checking the code…</p>}
      {progress.step === 'passkey' && (
        <p>Confirm with Face ID or your fingerprint to create this phone’s key.</p>
      )}
      {progress.step === 'sending' && <p>Sending this phone’s keys…</p>}
      {(progress.step === 'compare' || progress.step === 'done') && (
        <div class="code-box">
          <p>Type this code if your terminal asks for it, or check it shows the same:</p>
          <p class="short-code" aria-label="short code">
            {progress.code}
          </p>
          <p>
            {progress.step === 'done'
              ? `Paired with ${progress.hostName}.`
              : `Waiting for ${progress.hostName}: type the code if its terminal asks, or approve this phone on one it already trusts.`}
          </p>
          {/* Paired already: the check is what to do if the terminal shows another code. */}
          {progress.step === 'done' && (
            <p class="muted">
              A different code there? Revoke this phone: latch devices --revoke {progress.device}
            </p>
          )}
          {progress.step === 'done' && <NotificationBanner confirm />}
        </div>
      )}
      {progress.step === 'failed' && (
        <p class="error" role="alert">
          {progress.message}
        </p>
      )}
      {/* Face ID cancelled, or the relay unreachable: the same code can be tried again while it
          is valid (the relay refuses one already used, or expired, with its reason). */}
      {progress.step === 'failed' && !progress.final && (
        <button type="button" class="primary" onClick={() => setStarted(false)}>
          Try again
        </button>
      )}
      {(progress.step === 'done' || progress.step === 'failed') && (
        <button type="button" class={progress.step === 'done' ? 'primary' : ''} onClick={() => navigate('/')}>
          Done
        </button>
      )}
    </main>
  );
}
