/** The commented config.toml that `latch init` writes; every setting is read by config.ts. */
export function configTemplate(options: {
  relayUrl: string;
  hostName: string;
  fleet: string;
  quorum: number;
}): string {
  return `# Latch configuration. Keep this file mode 0600. Reference: docs/daemon.md

[relay]
# The relay's origin: your own Worker, or http://localhost:8787 from \`npm start\`.
url = ${JSON.stringify(options.relayUrl)}

[host]
# How this machine is named on your phone.
name = ${JSON.stringify(options.hostName)}
# The fleet this host belongs to. A phone already in the fleet adds this host to it when it
# scans this host's pairing code. To join an existing fleet: latch init --fleet <id>.
fleet = ${JSON.stringify(options.fleet)}

[approvals]
# How long a request waits for a phone, in seconds. No answer in time is a deny.
timeout_seconds = 300
# Push fatigue (docs/security.md): after burst_approvals phone approvals within
# burst_window_seconds, each new request waits review_seconds before an approval counts.
burst_approvals = 5
burst_window_seconds = 600
review_seconds = 30
# A request asked again this soon after a phone denied it is marked, held, and cannot be
# approved from the notification.
asked_again_seconds = 600

[kill_switch]
# Phones needed to resume after a freeze. 1 suits a single phone; once more are paired, raise
# it here (raising takes effect at once; lowering waits for a phone's approval).
quorum = ${options.quorum}
# false: while the relay is unreachable, keep the last state. true: freeze after grace_seconds.
strict = false
grace_seconds = 120
# What \`latch exec\` does to the processes it started when the fleet freezes:
# "stop" (SIGSTOP, resumable with SIGCONT) or "terminate" (SIGTERM).
on_freeze = "stop"

[fallback]
# When no phone can be reached: "none" (deny), "totp" (a code from your authenticator app,
# typed on the terminal; enrol with latch pair --totp) or "challenge" (a question typed on the
# terminal). Both read /dev/tty, never the agent's stdin.
mode = "none"

[audit]
# "full" keeps command text in the audit log; "none" keeps only ids.
# LATCH_AUDIT_CONTENT=none overrides this.
content = "full"
# audit.log is renamed audit.log.<its last line's number> once it would pass rotate_bytes;
# the newest keep_files of those are kept, and beyond them every one whose last line is younger
# than keep_hours (so that a flood of calls cannot push a day's record out). Keeping less needs a
# phone's approval.
rotate_bytes = 10485760
keep_files = 10
keep_hours = 24

[retention]
# Days a settled request (approved, denied, expired, withdrawn) is kept in state.db; a pending
# one is always kept. Fractions are allowed. Beyond max_requests settled requests, those with the
# earliest deadlines go first (one a phone may still report, until a day past its deadline, stays
# up to twice as many; an approval always). Keeping less needs a phone's approval.
requests_days = 30
max_requests = 10000
`;
}
