import type { LatchConfig } from './config.ts';

/** One setting whose value changed, and whether the change can only make Latch stricter. */
export interface ConfigChange {
  setting: string;
  from: string | number | boolean;
  to: string | number | boolean;
  tightens: boolean;
}

/**
 * Every setting that differs between two configs, each judged on its own. Conservative: a
 * change not known to tighten (the relay, the fleet, the host's name among them) loosens, and
 * a loosening waits for a phone.
 */
export function configChanges(approved: LatchConfig, next: LatchConfig): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const compare = <T extends string | number | boolean>(
    setting: string,
    from: T,
    to: T,
    tightens: boolean,
  ) => {
    if (from !== to) changes.push({ setting, from, to, tightens });
  };
  compare('relay.url', approved.relay.url, next.relay.url, false);
  compare('host.fleet', approved.host.fleet, next.host.fleet, false);
  compare('host.name', approved.host.name, next.host.name, false);
  // Less time to approve; more phones to resume; freezing when the relay is lost, and sooner.
  compare(
    'approvals.timeout_seconds',
    approved.approvals.timeoutSeconds,
    next.approvals.timeoutSeconds,
    next.approvals.timeoutSeconds < approved.approvals.timeoutSeconds,
  );
  // Push fatigue: a hold after fewer approvals, counted over a longer window, held longer; a
  // deny remembered longer.
  compare(
    'approvals.burst_approvals',
    approved.approvals.burstApprovals,
    next.approvals.burstApprovals,
    next.approvals.burstApprovals < approved.approvals.burstApprovals,
  );
  compare(
    'approvals.burst_window_seconds',
    approved.approvals.burstWindowSeconds,
    next.approvals.burstWindowSeconds,
    next.approvals.burstWindowSeconds > approved.approvals.burstWindowSeconds,
  );
  compare(
    'approvals.review_seconds',
    approved.approvals.reviewSeconds,
    next.approvals.reviewSeconds,
    next.approvals.reviewSeconds > approved.approvals.reviewSeconds,
  );
  compare(
    'approvals.asked_again_seconds',
    approved.approvals.askedAgainSeconds,
    next.approvals.askedAgainSeconds,
    next.approvals.askedAgainSeconds > approved.approvals.askedAgainSeconds,
  );
  compare(
    'kill_switch.quorum',
    approved.killSwitch.quorum,
    next.killSwitch.quorum,
    next.killSwitch.quorum > approved.killSwitch.quorum,
  );
  compare('kill_switch.strict', approved.killSwitch.strict, next.killSwitch.strict, next.killSwitch.strict);
  compare(
    'kill_switch.grace_seconds',
    approved.killSwitch.graceSeconds,
    next.killSwitch.graceSeconds,
    next.killSwitch.graceSeconds < approved.killSwitch.graceSeconds,
  );
  // Terminating what `latch exec` started is stricter than pausing it.
  compare(
    'kill_switch.on_freeze',
    approved.killSwitch.onFreeze,
    next.killSwitch.onFreeze,
    next.killSwitch.onFreeze === 'terminate',
  );
  // No terminal fallback is stricter than any; one fallback for another is not.
  compare('fallback.mode', approved.fallback.mode, next.fallback.mode, next.fallback.mode === 'none');
  // Less agent text in the audit log is stricter.
  compare('audit.content', approved.audit.content, next.audit.content, next.audit.content === 'none');
  // Keeping more history is stricter: less of the record of what happened is lost. Keeping less
  // would let an agent shorten its own trail, so it waits for a phone.
  compare(
    'audit.rotate_bytes',
    approved.audit.rotateBytes,
    next.audit.rotateBytes,
    next.audit.rotateBytes > approved.audit.rotateBytes,
  );
  compare(
    'audit.keep_files',
    approved.audit.keepFiles,
    next.audit.keepFiles,
    next.audit.keepFiles > approved.audit.keepFiles,
  );
  compare(
    'retention.requests_days',
    approved.retention.requestsDays,
    next.retention.requestsDays,
    next.retention.requestsDays > approved.retention.requestsDays,
  );
  return changes;
}
