import { useState } from 'preact/hooks';
import { fetchRequest, type OpenedRequest } from '../actions.ts';
import { denyConversation } from '../denyConversation.ts';
import type { DeviceIdentity } from '../keystore.ts';
import { refusalText } from '../refusalText.ts';

/**
 * "Deny all waiting from this session": every pending request of this request's agent session on
 * its host, this one included, each with its own signed deny. Shown only for a call that has a
 * session.
 */
export function DenySession({
  identity,
  request,
  disabled,
  setBusy,
  onDone,
}: {
  identity: DeviceIdentity;
  request: OpenedRequest;
  disabled: boolean;
  /** The request screen's own: while its denies go out, Approve and Escape wait too. */
  setBusy: (busy: boolean) => void;
  onDone: (denied: number) => void;
}) {
  const [problem, setProblem] = useState<string>();
  if (request.view.conversation === 'none') return null;
  const denyAll = async () => {
    setBusy(true);
    // A request opened from its push does not know its conversation's id: the relay does.
    const view = request.view.conversation
      ? { ok: true as const, value: request.view }
      : await fetchRequest(identity, request.fleet, request.view.requestId);
    const result = view.ok
      ? await denyConversation(identity, request.fleet, {
          host: view.value.host,
          conversation: view.value.conversation,
        })
      : view;
    setBusy(false);
    if (result.ok) onDone(result.value);
    else setProblem(refusalText(result));
  };
  return (
    <>
      <button type="button" class="deny-session" disabled={disabled} onClick={() => void denyAll()}>
        Deny all waiting from this session
      </button>
      {problem && <p role="alert">{problem}</p>}
    </>
  );
}
