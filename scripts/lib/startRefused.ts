/**
 * Why `npm start` will not run: said in one line, and it exits 1. It never takes over a process
 * that it did not start.
 */
export type StartRefusal = 'already_running' | 'port_in_use' | 'daemon_running';

export class StartRefused extends Error {
  override readonly name = 'StartRefused';
  readonly code: StartRefusal;

  constructor(code: StartRefusal, message: string) {
    super(message);
    this.code = code;
  }
}
