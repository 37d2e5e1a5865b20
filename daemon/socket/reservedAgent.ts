/** The agent name under which the daemon asks the phones about changes to Latch itself. */
export const RESERVED_AGENT = 'latch';
