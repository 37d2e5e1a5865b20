import { GRANT_LIFETIME_MS } from '../../shared/approvals/grantLifetime.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { Grant, SimilarCall } from '../../shared/messages/approvals.ts';
import { f } from '../../shared/schema/index.ts';
import type { OpenedRequest } from './actions.ts';
import { loadAllowedRules, saveAllowedRules, type DeviceIdentity } from './keystore.ts';
import { fleetPath, relayCall } from './relayApi.ts';

/** How the app names each grant: "Approve, and allow calls like this …". */
export const GRANT_WORDS: Record<Grant, string> = {
  half_hour: 'for 30 minutes',
  session: 'for this session',
};

/**
 * A rule this phone allowed (docs/phone.md#allow-calls-like-this). Kept on the phone only: the
 * relay never learns a rule's text, so it cannot list them.
 */
export interface AllowedRule {
  fleet: string;
  host: string;
  hostName: string;
  /** The request whose approval granted it: what a revoke names. */
  requestId: string;
  grant: Grant;
  similar: SimilarCall;
  expiresAt: number;
  /** When the relay reported a freeze of the fleet, which ended the rule if the relay told the truth. */
  frozenAt?: number;
}

/** The rules this phone allowed that have not lapsed, newest first. */
export async function liveRules(now = Date.now()): Promise<AllowedRule[]> {
  const rules = await loadAllowedRules<AllowedRule>();
  return rules.filter((rule) => rule.expiresAt > now).reverse();
}

/** Notes the rule an approval granted, once the relay has taken the approval. */
export async function rememberRule(request: OpenedRequest, grant: Grant): Promise<void> {
  const { details } = request;
  const rules = await liveRules();
  rules.reverse().push({
    fleet: request.fleet,
    host: details.host,
    hostName: details.hostName,
    requestId: details.requestId,
    grant,
    similar: details.similar!,
    expiresAt: Date.now() + GRANT_LIFETIME_MS[grant],
  });
  await saveAllowedRules(rules);
}

/**
 * A freeze revokes every rule on the fleet's hosts (docs/kill-switch.md#freeze). The phone cannot
 * check a freeze's signature (it holds neither the other phones' keys nor the hosts'), so a relay
 * could say "frozen" to this phone alone: the rules stay on its list, marked with the freeze, and
 * keep their Revoke, which costs nothing when the host has already ended the rule.
 */
export async function markRulesFrozen(frozen: { fleet: string; at: number }[]): Promise<void> {
  const rules = await loadAllowedRules<AllowedRule>();
  const freezeOf = (rule: AllowedRule) => frozen.find((fleet) => fleet.fleet === rule.fleet);
  const newlyFrozen = rules.filter((rule) => rule.frozenAt === undefined && freezeOf(rule));
  if (newlyFrozen.length === 0) return;
  for (const rule of newlyFrozen) rule.frozenAt = freezeOf(rule)!.at;
  await saveAllowedRules(rules);
}

const revoked = /* @__PURE__ */ f.object({ v: f.version(), requestId: f.id() });

/**
 * Revokes a rule: a revoke signed with the device key (no biometric: it only tightens), which the
 * relay carries to the host. The phone forgets the rule once the relay has taken it.
 */
export async function revokeRule(identity: DeviceIdentity, rule: AllowedRule) {
  const result = await relayCall('POST', fleetPath(rule.fleet, '/grants/revoke'), revoked, {
    signedBody: (relayNow) =>
      signEnvelope(
        'revoke-grant',
        { fleet: rule.fleet, host: rule.host, requestId: rule.requestId },
        { role: 'device', id: identity.id },
        identity.signing.privateKey,
        relayNow,
      ),
  });
  if (result.ok)
    await saveAllowedRules(
      (await loadAllowedRules<AllowedRule>()).filter((kept) => kept.requestId !== rule.requestId),
    );
  return result;
}
