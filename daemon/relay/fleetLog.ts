import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import type { HostEvent, HostFrame } from '../../shared/messages/events.ts';

/** What the daemon does with each kind of event from its fleet's log. */
export type FleetLogHandlers = {
  [Type in HostEvent['type']]: (event: Extract<HostEvent, { type: Type }>) => Promise<void> | void;
};

/** Where the daemon keeps the sequence number of the last frame it handled (state.db's meta). */
export interface Cursor {
  read(): number;
  write(seq: number): void;
}

/** A frame whose handler failed is tried again after this, doubling up to the cap. */
const RETRY_FIRST_MS = 250;
const RETRY_CAP_MS = 10_000;

/**
 * Follows the fleet's event log as the relay streams it, from the cursor on: each frame is handled
 * to the end before the next, in order, and the cursor then moves past it, so a restart replays
 * nothing already handled and misses nothing decided meanwhile. A frame whose handler fails (a
 * full disk, a busy database) is tried again until it is handled, the frames after it waiting:
 * passed over, a freeze would be lost for good, as the cursor moves on with the next frame.
 */
export class FleetLog {
  readonly #handlers: FleetLogHandlers;
  readonly #cursor: Cursor;
  readonly #log: (line: string) => void;
  #frames = Promise.resolve();
  #stopped = false;
  #wakeRetry = () => {};
  // A state frame sums up the relay's log so far; the frames replayed after it, up to its seq,
  // are that past. A freeze among them other than the one the state holds in force ended before
  // this connection (and this host never saw it): applied now, it would end the freeze in force,
  // and the votes that ended it would then lift this host while the fleet stays frozen. Passing
  // it over is what a relay withholding it would cause, so the relay's word is enough for that.
  #summed: { seq: number; inForce: string | null } = { seq: 0, inForce: null };

  constructor(handlers: FleetLogHandlers, cursor: Cursor, log: (line: string) => void) {
    this.#handlers = handlers;
    this.#cursor = cursor;
    this.#log = log;
  }

  /** Queues a frame from the relay connection; resolves once it is handled (or given up at stop()). */
  receive(frame: HostFrame): Promise<void> {
    this.#frames = this.#frames.then(() => this.#handleUntilDone(frame));
    return this.#frames;
  }

  /** Resolves once every frame received so far has been handled, or given up at stop(). */
  settled(): Promise<void> {
    return this.#frames;
  }

  /** Stops trying failed frames again: what is left unhandled is replayed after a restart. */
  stop(): void {
    this.#stopped = true;
    this.#wakeRetry();
  }

  async #handleUntilDone(frame: HostFrame): Promise<void> {
    for (let attempt = 0; !this.#stopped; attempt++) {
      try {
        await this.#handle(frame);
        return;
      } catch (error) {
        const delay = Math.min(RETRY_CAP_MS, RETRY_FIRST_MS * 2 ** attempt);
        this.#log(
          `the ${frame.event.type} event (seq ${frame.seq}) failed: ${(error as Error).message}; trying it again in ${delay} ms`,
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.#wakeRetry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }

  async #handle({ seq, event }: HostFrame): Promise<void> {
    if (event.type === 'state') {
      this.#summed = {
        seq,
        inForce: event.state.frozen && event.state.freeze ? await freezeId(event.state.freeze) : null,
      };
      await this.#handlers.state(event);
      // A cursor beyond the relay's log did not come from it: the relay replays its whole log
      // after this frame, and the cursor follows the relay's numbering from here.
      if (seq < this.#cursor.read()) this.#cursor.write(seq);
      return;
    }
    const pastFreeze =
      event.type === 'frozen' &&
      seq <= this.#summed.seq &&
      (await freezeId(event.envelope)) !== this.#summed.inForce;
    if (!pastFreeze) await (this.#handlers[event.type] as (event: HostEvent) => Promise<void> | void)(event);
    // After the answers the event gave have gone out: the cursor's commit (a sync to disk) is not
    // on the path of an agent waiting for its approval. A crash meanwhile replays the event, which
    // its handler meets as handled (a token used once, a freeze already in force).
    await new Promise(setImmediate);
    this.#cursor.write(Math.max(seq, this.#cursor.read()));
  }
}
