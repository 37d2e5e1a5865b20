import { useEffect, useState } from 'preact/hooks';
import { similarCommandText } from '../../../shared/approvals/similarCallText.ts';
import { GRANT_WORDS, liveRules, revokeRule, type AllowedRule } from '../allowedRules.ts';
import type { DeviceIdentity } from '../keystore.ts';
import { refusalText } from '../refusalText.ts';
import { useAction } from '../useConnectivity.ts';

/**
 * "Rules you allowed": what this phone granted with an approval and has not lapsed, each
 * revocable with one tap (a revoke only tightens: no Face ID). Kept on this phone alone; the
 * host lists every phone's with `latch policy grants`.
 */
const clockTime = (at: number) => new Date(at).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
/** A rule as told apart from another of the same words (one ended by a freeze, one still live). */
const ruleName = ({ similar, grant, expiresAt }: AllowedRule) =>
  `${similar.tool} ${similarCommandText(similar)}, ${GRANT_WORDS[grant]} until ${clockTime(expiresAt)}`;

export function AllowedRules({ identity }: { identity: DeviceIdentity | undefined }) {
  const [rules, setRules] = useState<AllowedRule[]>();
  const [message, setMessage] = useState<string>();
  const [off, run] = useAction();
  useEffect(() => void liveRules().then(setRules), []);

  const revoke = async (rule: AllowedRule) => {
    if (!identity) return;
    const result = await revokeRule(identity, rule);
    if (!result.ok) return setMessage(`Not revoked. ${refusalText(result)}`);
    setMessage(`Revoked: ${ruleName(rule)}.`);
    setRules(await liveRules());
  };

  return (
    <>
      <h2>Rules you allowed</h2>
      {message && <p role="status">{message}</p>}
      {rules?.length === 0 && (
        <p class="muted">None: what your policy asks about, it asks about each time.</p>
      )}
      <ul class="members">
        {rules?.map((rule) => (
          <li key={rule.requestId}>
            <span class="allowed-rule">
              <span>
                <strong>{rule.similar.tool}</strong> <code>{similarCommandText(rule.similar)}</code>
              </span>
              <span class="muted">
                in <code>{rule.similar.folder}</code> on {rule.hostName}, {GRANT_WORDS[rule.grant]} (until{' '}
                {clockTime(rule.expiresAt)})
              </span>
              {rule.frozenAt !== undefined && (
                <span class="muted">
                  Ended by the freeze of {clockTime(rule.frozenAt)}, as the relay says. Revoke it to be sure.
                </span>
              )}
            </span>
            <span class="member-actions">
              <button
                type="button"
                class="deny"
                aria-label={`Revoke rule ${ruleName(rule)}`}
                disabled={off}
                onClick={() => run(() => revoke(rule))}
              >
                Revoke rule
              </button>
            </span>
          </li>
        ))}
      </ul>
    </>
  );
}
