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
  /** A number that is stricter when it is larger (`more`) or smaller (`less`). */
  const number = (setting: string, read: (config: LatchConfig) => number, stricter: 'more' | 'less') => {
    const [from, to] = [read(approved), read(next)];
    compare(setting, from, to, stricter === 'more' ? to > from : to < from);
  };
  compare('relay.url', approved.relay.url, next.relay.url, false);
  compare('host.fleet', approved.host.fleet, next.host.fleet, false);
  compare('host.name', approved.host.name, next.host.name, false);
  // Less time to approve; more phones to resume; freezing when the relay is lost, and sooner.
  number('approvals.timeout_seconds', (config) => config.approvals.timeoutSeconds, 'less');
  // Push fatigue: a hold after fewer approvals, counted over a longer window, held longer; a
  // deny remembered longer.
  number('approvals.burst_approvals', (config) => config.approvals.burstApprovals, 'less');
  number('approvals.burst_window_seconds', (config) => config.approvals.burstWindowSeconds, 'more');
  number('approvals.review_seconds', (config) => config.approvals.reviewSeconds, 'more');
  number('approvals.asked_again_seconds', (config) => config.approvals.askedAgainSeconds, 'more');
  number('kill_switch.quorum', (config) => config.killSwitch.quorum, 'more');
  compare('kill_switch.strict', approved.killSwitch.strict, next.killSwitch.strict, next.killSwitch.strict);
  number('kill_switch.grace_seconds', (config) => config.killSwitch.graceSeconds, 'less');
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
  number('audit.rotate_bytes', (config) => config.audit.rotateBytes, 'more');
  number('audit.keep_files', (config) => config.audit.keepFiles, 'more');
  number('audit.keep_hours', (config) => config.audit.keepHours, 'more');
  number('retention.requests_days', (config) => config.retention.requestsDays, 'more');
  number('retention.max_requests', (config) => config.retention.maxRequests, 'more');
  return changes;
}
