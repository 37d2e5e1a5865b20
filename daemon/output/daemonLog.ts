/** A line of the daemon's own log, on stderr (journald or the terminal keeps it). Never a secret. */
export function daemonLog(line: string): void {
  process.stderr.write(`latch daemon: ${line}\n`);
}
