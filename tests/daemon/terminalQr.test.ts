import { describe, expect, it } from 'vitest';
import { terminalQr } from '../../daemon/pairing/terminalQr.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { PAIRING_SECRET_BYTES } from '../../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../../shared/pairing/pairingLink.ts';
import {
  decodeModules,
  quietZone,
  readTerminalQr,
  screenSize,
  type Theme,
} from '../support/terminalScreen.ts';

/** A link as `latch pair` builds it: a fleet id as `latch init` makes one, a 12-byte offer id. */
const link = pairingLink({
  origin: 'http://localhost:8787',
  fleet: `fleet-${toBase64url(randomBytes(16))}`,
  offerId: toBase64url(randomBytes(12)),
  secret: randomBytes(PAIRING_SECRET_BYTES),
});

/** What `latch pair` prints from its first line to the one it waits on (daemon/cli/commands/pair.ts). */
const pairScreen = (text: string) =>
  'Scan this code with your phone’s camera, or open the link in the Latch app:\n' +
  `${terminalQr(text)}${text}\nWaiting for your phone…\n`;

const themes: Theme[] = ['dark', 'light'];

describe('the terminal QR code', () => {
  it.each(themes)('reads back as the pairing link on a %s background', (theme) => {
    expect(decodeModules(readTerminalQr(pairScreen(link), theme))).toBe(link);
  });

  // The `qr` decoder also reads a code inverted (light on dark, no light margin), which phone
  // cameras often do not: this test and the quiet zone's are what hold the code to dark on light.
  it('shows the same modules on either background: every cell sets both its colours', () => {
    const screen = pairScreen(link);
    expect(readTerminalQr(screen, 'dark')).toEqual(readTerminalQr(screen, 'light'));
  });

  it.each(themes)(
    'leaves a light quiet zone of at least 4 modules on every side on a %s background',
    (theme) => {
      const margins = quietZone(readTerminalQr(pairScreen(link), theme));
      expect(Math.min(...Object.values(margins))).toBeGreaterThanOrEqual(4);
    },
  );

  it('draws two modules a line, one a column: 45 modules and the quiet zone in 53 columns × 27 lines', () => {
    // The 139-byte link is version 7 at level L: 45 modules, 53 with the quiet zone.
    const modules = readTerminalQr(pairScreen(link), 'light');
    expect(modules[0]!.length).toBe(53);
    expect(screenSize(terminalQr(link).trimEnd(), 80)).toEqual({ rows: 27, columns: 53 });
  });

  it('does not read once a finder pattern is broken', () => {
    const modules = readTerminalQr(pairScreen(link), 'light');
    const { top, left } = quietZone(modules);
    // Clear the top-left finder's 3×3 centre: two finders are left, which locate nothing.
    for (let y = top + 2; y < top + 5; y++) for (let x = left + 2; x < left + 5; x++) modules[y]![x] = false;
    expect(decodeModules(modules)).not.toBe(link);
  });

  it('fits 80×24 with the lines around it for a link of up to 53 bytes (version 3 at level L)', () => {
    const longest = `http://localhost:8787/pair#${'x'.repeat(53 - 27)}`;
    expect(screenSize(pairScreen(longest), 80)).toEqual({ rows: 23, columns: 75 });
    expect(screenSize(pairScreen(`${longest}x`), 80).rows).toBe(25);
  });
});
