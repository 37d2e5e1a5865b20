import { useState } from 'preact/hooks';
import type { ReportScope } from '../../../shared/messages/envelopes.ts';

/**
 * "I didn't expect this": denies, and has the host refuse this agent session from now on, or
 * freezes every agent (the kill switch). One signed deny carries the choice (docs/phone.md).
 */
export function DenyAndReport({
  disabled,
  hasSession,
  onReport,
}: {
  disabled: boolean;
  /** The call named an agent session, which the host can refuse from now on. */
  hasSession: boolean;
  onReport: (scope: ReportScope) => void;
}) {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <button type="button" class="report-open" disabled={disabled} onClick={() => setOpen(true)}>
        I didn’t expect this: report…
      </button>
    );
  return (
    <fieldset class="report">
      <legend>Deny and report</legend>
      <p class="muted">The request is denied either way. Then:</p>
      {hasSession ? (
        <button type="button" class="deny" disabled={disabled} onClick={() => onReport('session')}>
          Deny and block this agent session
        </button>
      ) : (
        <p class="muted">This call came with no agent session to block.</p>
      )}
      <button type="button" class="deny" disabled={disabled} onClick={() => onReport('fleet')}>
        Deny and freeze all agents
      </button>
      {/* Named apart from the Cancel of "Allow calls like this", open beside it. */}
      <button type="button" class="link" aria-label="Cancel the report" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </fieldset>
  );
}
