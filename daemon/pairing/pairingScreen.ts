import { utf8Length } from '../../shared/encoding/bytes.ts';
import { terminalQr } from './terminalQr.ts';

/** One line above the code, so the code and the link below it keep the rest of the screen. */
const HEADING = 'Waiting for your phone: scan this code with its camera, or open the link below.';

/**
 * The longest link that is a version-4 code at level L (ISO/IEC 18004 Table 7: 78 bytes): 33
 * modules, 41 with the quiet zone, 21 lines. `<origin>/pair#1.<secret>` is that long for an
 * origin of 48 characters.
 */
const FITS_24_ROWS_BYTES = 78;

/**
 * What `latch pair` prints while it waits: the heading, the code, and the link below it. For a
 * link that fits version 4, that is 23 lines, and the cursor waits on the 24th: the whole of it
 * fits 80×24. A longer relay address makes a taller code, which a line then explains.
 */
export function pairingScreen(link: string): string {
  const tall =
    utf8Length(link) > FITS_24_ROWS_BYTES
      ? 'The relay’s address is long: if the code’s top is cut off, enlarge the window.\n'
      : '';
  return `${HEADING}\n${terminalQr(link)}${link}\n${tall}`;
}
