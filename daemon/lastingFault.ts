/**
 * A fault that stops the daemon from starting and that a restart cannot mend: state or config it
 * cannot trust, a socket directory others could reach into. Only a person can fix one, so
 * `latch daemon` exits DAEMON_REFUSED_EXIT on it (cli/commands/daemon.ts), which the systemd unit
 * names in RestartPreventExitStatus: one clear error, no restart loop. Any other fault exits 1
 * and is restarted.
 */
export class LastingFault extends Error {}
