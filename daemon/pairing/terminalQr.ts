import { encodeQR } from 'qr';

/** ISO/IEC 18004:2024 §5.3.8: a light margin of 4 modules on every side of the symbol. */
const QUIET_ZONE = 4;

/**
 * Black modules on a white ground, both set explicitly in every cell: a terminal's theme is dark
 * or light and a program cannot ask which, so a code drawn in the default colours (or in reverse
 * video, which only swaps them) comes out light-on-dark on a dark theme, with its quiet zone the
 * colour of the screen. Scanners expect dark on light with a light margin; explicit colours give
 * that on either theme. They are the 256-colour cube's 16 (#000000) and 231 (#ffffff), not the
 * basic 30/47: themes restyle the sixteen basic colours (Solarized's "white" is beige, many
 * dark themes' "black" is their background), and leave the cube alone.
 */
const BLACK_ON_WHITE = '\x1b[38;5;16;48;5;231m';
/** Reset before each newline: a terminal that scrolls fills the new line with the current background. */
const RESET = '\x1b[0m';

/**
 * `text` as a QR code for a terminal, two modules per row of characters (a cell is about twice
 * as tall as it is wide, so each module is close to square), with the quiet zone drawn. One line
 * per row, each ending in a newline.
 *
 * Error correction is level L: the code is shown on a screen, which does not get the smudges and
 * tears that the higher levels are for, and every level up costs rows: a 78-byte pairing link is
 * version 4 at L (33 modules, 21 rows with the quiet zone) and version 5 at M (37, 23 rows), too
 * tall for 24 rows with the link below it.
 */
export function terminalQr(text: string): string {
  const modules = encodeQR(text, 'raw', { ecc: 'low', border: QUIET_ZONE });
  let out = '';
  for (let y = 0; y < modules.length; y += 2) {
    const top = modules[y]!;
    // A symbol has an odd number of rows: the last character row's lower half is quiet zone.
    const bottom = modules[y + 1];
    let line = '';
    top.forEach((dark, x) => {
      const below = bottom?.[x] ?? false;
      line += dark ? (below ? '█' : '▀') : below ? '▄' : ' ';
    });
    out += `${BLACK_ON_WHITE}${line}${RESET}\n`;
  }
  return out;
}
