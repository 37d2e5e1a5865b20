import { existsSync } from 'node:fs';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import { localChallenge, type LocalChallenge } from '../fallback/localChallenge.ts';
import { matchTotp } from '../fallback/totp.ts';
import {
  approvedTotpSecret,
  clearWrongTotpCodes,
  noteWrongTotpCode,
  totpPausedUntil,
} from '../fallback/totpSecret.ts';
import type { BlockReason, GateAnswer, GateRequest } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import { deny, frozenDeny } from './deny.ts';
import type { Conversation } from './conversation.ts';

export interface FallbackContext {
  mode: LatchConfig['fallback']['mode'];
  totpPath: string;
  store: StateStore;
  audit: AuditLog;
}

/**
 * When no phone can be reached: the terminal fallback the config allows, offered and answered on
 * the connection that asked and no other, or else the deny with its reason. One attempt per
 * request. The audit says what was checked: an answer given on that connection, not who typed it.
 */
export async function terminalFallbackOr(
  context: FallbackContext,
  call: { request: GateRequest; details: RequestDetails; conversation: Conversation },
  blockReason: BlockReason,
  reason: string,
): Promise<GateAnswer> {
  const { mode, totpPath, store, audit } = context;
  const { request, details, conversation } = call;
  const { requestId } = details;
  if (
    mode === 'none' ||
    !request.interactive ||
    !conversation.askOnTerminal ||
    (mode === 'totp' && !existsSync(totpPath))
  ) {
    store.settleRequest(requestId, 'denied');
    audit.append({ event: 'refused', requestId, blockReason, reason });
    return deny(blockReason, reason, requestId);
  }
  // When the challenge is shown, on the monotonic clock (checkChallenge).
  const shownAt = performance.now();
  const challenge =
    mode === 'challenge'
      ? localChallenge(details.risk, details.target ?? details.tool, Date.now())
      : undefined;
  const typed = await conversation.askOnTerminal({
    requestId,
    method: mode,
    reason,
    prompt: challenge?.prompt ?? 'Enter the 6-digit code from your authenticator app:',
    exp: details.exp,
  });
  const typedAnswer =
    typed === undefined
      ? deny(blockReason, `${reason}; the terminal fallback was not answered`, requestId)
      : challenge
        ? checkChallenge(typed, challenge, shownAt, requestId)
        : checkTotp(typed, requestId, context);
  return store.db.transaction(
    () => {
      const answer =
        typedAnswer.decision === 'allow' ? stillAllowed(store, typedAnswer, requestId) : typedAnswer;
      store.settleRequest(requestId, answer.decision === 'allow' ? 'approved' : 'denied');
      audit.append({
        event: 'decided',
        requestId,
        decision: answer.decision,
        reason: answer.reason,
        via: mode,
        verified:
          mode === 'totp'
            ? 'a TOTP code, given on the connection that asked'
            : 'the answer only, given on the connection that asked',
      });
      return answer;
    },
    { immediate: true },
  );
}

/**
 * The prompt may have waited minutes: an allow stands only if, now, the fleet is not frozen and
 * the request is still open here (a phone's deny may have reached it meanwhile).
 */
function stillAllowed(store: StateStore, answer: GateAnswer, requestId: string): GateAnswer {
  const switchState = store.switchState();
  if (switchState.frozen) return frozenDeny(switchState.reason, requestId);
  if (store.request(requestId)?.state !== 'pending')
    return deny('denied', 'denied: the request was decided elsewhere while the terminal asked', requestId);
  return answer;
}

/**
 * Each time step's code is accepted once, across every request, from the secret a phone approved
 * only; wrong codes pause the fallback (fallback/totpSecret.ts).
 */
function checkTotp(typed: string, requestId: string, context: FallbackContext): GateAnswer {
  const { store, totpPath } = context;
  const now = Date.now();
  const pausedUntil = totpPausedUntil(store, now);
  if (pausedUntil !== undefined)
    return deny(
      'fallback_failed',
      `too many wrong TOTP codes: codes are refused until ${new Date(pausedUntil).toISOString()}`,
      requestId,
    );
  const secret = approvedTotpSecret(store, totpPath);
  if (!secret)
    return deny(
      'fallback_failed',
      'the TOTP secret file is not the one a phone approved (latch pair --totp)',
      requestId,
    );
  const step = matchTotp(secret, typed.trim(), now);
  if (step === undefined || !store.consumeTotpStep(step, now)) {
    noteWrongTotpCode(store, now);
    return deny('fallback_failed', 'the TOTP code is wrong or was already used', requestId);
  }
  clearWrongTotpCodes(store);
  return {
    decision: 'allow',
    reason: 'approved with a TOTP code (terminal fallback)',
    via: 'totp',
    requestId,
  };
}

/** The local challenge proves an answer, not a person: see docs/security.md. */
function checkChallenge(
  typed: string,
  challenge: LocalChallenge,
  shownAt: number,
  requestId: string,
): GateAnswer {
  // Both clocks: the wall clock set ahead, or the monotonic one (which a clock change leaves
  // alone), cannot end the review time alone.
  if (Date.now() < challenge.notBefore || performance.now() - shownAt < challenge.reviewMs)
    return deny('fallback_failed', 'answered before the review time was over', requestId);
  if (typed.trim() !== challenge.answer) return deny('fallback_failed', 'the answer is wrong', requestId);
  return {
    decision: 'allow',
    reason: 'approved by the local challenge (terminal fallback)',
    via: 'challenge',
    requestId,
  };
}
