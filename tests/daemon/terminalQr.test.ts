import { describe, expect, it } from 'vitest';
import { base32, totpUri } from '../../daemon/fallback/totp.ts';
import { pairingScreen } from '../../daemon/pairing/pairingScreen.ts';
import { terminalQr } from '../../daemon/pairing/terminalQr.ts';
import { totpScreen } from '../../daemon/pairing/totpScreen.ts';
import { randomBytes, utf8Length } from '../../shared/encoding/bytes.ts';
import { PAIRING_SECRET_BYTES } from '../../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../../shared/pairing/pairingLink.ts';
import {
  decodeModules,
  quietZone,
  readTerminalQr,
  screenSize,
  type Modules,
  type Theme,
} from '../support/terminalScreen.ts';

/** A relay as `wrangler deploy` names it, on an account subdomain of usual length: 44 characters. */
const WORKERS_DEV = 'https://latch-relay.someusername.workers.dev';
/** The longest origin whose link still makes a version-4 code: 48 characters. */
const LONGEST_FITTING = 'https://latch-relay.lovelace-ada-421.workers.dev';

const link = pairingLink({ origin: WORKERS_DEV, secret: randomBytes(PAIRING_SECRET_BYTES) });
const themes: Theme[] = ['dark', 'light'];

/** The index of the first and the last line of the code in `screen`. */
function codeLines(screen: string): { first: number; last: number } {
  const lines = screen.split('\n');
  // Half blocks and spaces between colour codes, the quiet zone's blank rows included.
  const isCode = (line: string) => /^(\x1b\[[0-9;]*m|[ ▀▄█])+$/.test(line) && /\x1b\[/.test(line);
  return { first: lines.findIndex(isCode), last: lines.length - 1 - [...lines].reverse().findIndex(isCode) };
}

/** The side of the code in modules, without its quiet zone. */
const symbolSize = (modules: Modules) => {
  const { left, right } = quietZone(modules);
  return modules[0]!.length - left - right;
};

describe('the terminal QR code', () => {
  it.each(themes)('reads back as the pairing link on a %s background', (theme) => {
    expect(decodeModules(readTerminalQr(pairingScreen(link), theme))).toBe(link);
  });

  // The `qr` decoder also reads a code inverted (light on dark, no light margin), which phone
  // cameras often do not: this test and the quiet zone's are what hold the code to dark on light.
  it('shows the same modules on either background: every cell sets both its colours', () => {
    const screen = pairingScreen(link);
    expect(readTerminalQr(screen, 'dark')).toEqual(readTerminalQr(screen, 'light'));
  });

  it.each(themes)(
    'leaves a light quiet zone of exactly 4 modules on every side on a %s background',
    (theme) => {
      const margins = quietZone(readTerminalQr(pairingScreen(link), theme));
      // Four, and no more: a lower edge past 4 would be the half line of an odd module count,
      // which is quiet zone too but not drawn on top.
      expect(margins.top).toBe(4);
      expect(margins.left).toBe(4);
      expect(margins.right).toBe(4);
      expect(margins.bottom).toBeGreaterThanOrEqual(4);
    },
  );

  it('does not read once a finder pattern is broken', () => {
    const modules = readTerminalQr(pairingScreen(link), 'light');
    const { top, left } = quietZone(modules);
    // Clear the top-left finder's 3×3 centre: two finders are left, which locate nothing.
    for (let y = top + 2; y < top + 5; y++) for (let x = left + 2; x < left + 5; x++) modules[y]![x] = false;
    expect(decodeModules(modules)).not.toBe(link);
  });
});

describe('what latch pair shows while it waits', () => {
  it.each([
    ['a 44-character workers.dev origin', WORKERS_DEV],
    ['the longest origin that fits, 48 characters', LONGEST_FITTING],
  ])('fits 80×24 for %s: the heading, a version-4 code, the link below it', (_what, origin) => {
    const pairing = pairingLink({ origin, secret: randomBytes(PAIRING_SECRET_BYTES) });
    const screen = pairingScreen(pairing);
    // 23 lines and the row the cursor waits on.
    expect(screenSize(screen, 80)).toEqual({ rows: 24, columns: 79 });

    const modules = readTerminalQr(screen, 'light');
    expect(symbolSize(modules)).toBe(33); // version 4: 17 + 4 × 4 modules
    expect(modules[0]!.length).toBe(41); // and the quiet zone
    expect(decodeModules(modules)).toBe(pairing);
    expect(decodeModules(readTerminalQr(screen, 'dark'))).toBe(pairing);

    const lines = screen.split('\n');
    const { first, last } = codeLines(screen);
    expect(first).toBe(1); // only the heading above the code
    expect(last - first + 1).toBe(21);
    expect(lines.slice(last + 1)).toEqual([pairing, '']); // the link right below it, then the cursor
  });

  it('gives the pairing link at most 78 bytes for a 48-character origin', () => {
    expect(LONGEST_FITTING).toHaveLength(48);
    const pairing = pairingLink({ origin: LONGEST_FITTING, secret: randomBytes(PAIRING_SECRET_BYTES) });
    expect(utf8Length(pairing)).toBe(78);
    expect(utf8Length(link)).toBe(74);
  });

  it('says why when a longer relay address makes the code too tall for 24 rows', () => {
    const origin = `${LONGEST_FITTING}x`;
    const screen = pairingScreen(pairingLink({ origin, secret: randomBytes(PAIRING_SECRET_BYTES) }));
    expect(symbolSize(readTerminalQr(screen, 'light'))).toBe(37); // version 5
    expect(screen).toContain('The relay’s address is long');
    expect(screenSize(screen, 80).columns).toBeLessThanOrEqual(80);
    expect(pairingScreen(link)).not.toContain('The relay’s address is long');
  });
});

describe('the TOTP enrolment code', () => {
  const secret = randomBytes(20);

  it('names only the secret and the label: the algorithm, digits and period are the defaults', () => {
    expect(totpUri(secret, 'build-box')).toBe(`otpauth://totp/Latch:build-box?secret=${base32(secret)}`);
  });

  it('cuts a long host name, at a whole character, to keep the URI within 78 bytes', () => {
    const uri = totpUri(secret, 'adas-macbook-pro.example.internal');
    expect(utf8Length(uri)).toBe(78);
    expect(uri).toContain('/Latch:adas-macbook-pro.?secret=');
    const accented = totpUri(secret, 'éééééééééé');
    expect(utf8Length(accented)).toBeLessThanOrEqual(78);
    expect(decodeURIComponent(accented)).toMatch(/^otpauth:\/\/totp\/Latch:é+\?secret=[A-Z2-7]{32}$/);
  });

  it('fits 80×24 with the line above and the line below, and reads back', () => {
    const uri = totpUri(secret, 'adas-macbook-pro.example.internal');
    const screen = totpScreen(uri);
    expect(screenSize(screen, 80)).toEqual({ rows: 24, columns: 77 });
    const modules = readTerminalQr(screen, 'dark');
    expect(symbolSize(modules)).toBe(33);
    expect(decodeModules(modules)).toBe(uri);
    expect(terminalQr(uri)).toBe(screen.split('\n').slice(1, 22).join('\n') + '\n');
  });
});
