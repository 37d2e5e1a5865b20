/**
 * Everything one run of `latch exec` started, however it tried to leave (setsid, a double fork),
 * held as one: what a freeze stops, a resume continues, and the end of the run takes down.
 */
export interface CommandTree {
  /** Stops every process of the run (a freeze). */
  hold(): void;
  /** Continues what hold() stopped (a resume). */
  release(): void;
  /** Sends a signal to every process of the run. SIGKILL reaches stopped and frozen ones too. */
  signal(signal: NodeJS.Signals): void;
  /** Whether any process of the run is alive. */
  alive(): boolean;
  /**
   * Kills what is left at once and gives back what the tree holds (its cgroup). Synchronous,
   * because it also runs as latch exec exits; a second call does nothing.
   */
  close(): void;
}
