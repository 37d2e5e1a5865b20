import { useState } from 'preact/hooks';
import { similarCommandText } from '../../../shared/approvals/similarCallText.ts';
import { GRANTS, type Grant, type SimilarCall } from '../../../shared/messages/approvals.ts';

/**
 * "Approve, and allow calls like this": the exact rule the host proposed, shown before Face ID,
 * and one button per grant. The signature commits to both the rule (it is in the sealed details)
 * and the grant (docs/phone.md#allow-calls-like-this).
 */
export function AllowSimilar({
  similar,
  disabled,
  approveLabel,
  onApprove,
}: {
  similar: SimilarCall;
  disabled: boolean;
  /** The Approve button's own words, while it counts down or waits. */
  approveLabel: (grant: Grant) => string;
  onApprove: (grant: Grant) => void;
}) {
  const [open, setOpen] = useState(false);
  // A session grant needs a session to belong to; the host refuses one without.
  const grants = GRANTS.filter((grant) => grant !== 'session' || similar.conversation !== undefined);
  if (!open)
    return (
      <button type="button" class="similar-open" onClick={() => setOpen(true)}>
        Allow calls like this…
      </button>
    );
  return (
    <fieldset class="similar">
      <legend>Approve, and allow calls like this</legend>
      <p class="muted">Without asking again, this host would also run:</p>
      <dl class="similar-rule">
        {/* A grant names no agent: one approved on an SDK card covers Claude Code's same call. */}
        <dt>Agent</dt>
        <dd>any agent on this host, not only this one</dd>
        <dt>Tool</dt>
        <dd>{similar.tool}</dd>
        <dt>Command</dt>
        <dd>
          <code>{similarCommandText(similar)}</code>
          <span class="muted">
            {similar.thenAnyName
              ? ' — then any name for ‹name›: letters, digits, . _ - /'
              : ' — exactly this, nothing added'}
          </span>
        </dd>
        <dt>Folder</dt>
        <dd>
          <code>{similar.folder}</code>
        </dd>
        <dt>Only while</dt>
        <dd>the policy rule “{similar.policyRule}” is what asks, at no higher risk</dd>
        <dt>Until</dt>
        <dd>
          30 minutes from now, for any agent's session
          {grants.includes('session') ? ', or the end of this session alone (12 hours at most)' : ''}: you
          choose below. Revoke it any time under Devices.
        </dd>
      </dl>
      {grants.map((grant) => (
        <button
          key={grant}
          type="button"
          class="approve"
          disabled={disabled}
          onClick={() => onApprove(grant)}
        >
          {approveLabel(grant)}
        </button>
      ))}
      {/* Named apart from the report's Cancel, open beside it. */}
      <button
        type="button"
        class="link"
        aria-label="Cancel allowing calls like this"
        onClick={() => setOpen(false)}
      >
        Cancel
      </button>
    </fieldset>
  );
}
