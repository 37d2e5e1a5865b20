import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strangerBrowser } from '../support/browserPhone.ts';
import { contrastRatio } from '../support/contrast.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { SCHEMES } from '../support/screenAudit.ts';

let rig: PhoneRig;
let origin: string;
const stranger = strangerBrowser('contrast-stranger');

beforeAll(async () => {
  rig = await startPhoneRig({ name: 'contrast', relay: 'plain' });
  ({ origin } = rig);
}, 120_000);

afterAll(async () => {
  await stranger.close();
  await rig?.stop();
});

describe('contrast, measured as WCAG defines it', () => {
  it('computes the contrast ratio of known pairs, and finds the old dark palette’s failures', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    // The failures issue 14 names: each under AA's 4.5:1.
    expect(contrastRatio('#ffffff', '#22c55e')).toBeCloseTo(2.28, 2);
    expect(contrastRatio('#ffffff', '#60a5fa')).toBeCloseTo(2.54, 2);
    expect(contrastRatio('#dc2626', '#111827')).toBeCloseTo(3.67, 2);
    expect(paletteFailures(OLD_DARK_PALETTE)).toEqual([
      '--red on --bg: 3.90 < 4.5',
      '--red on --card: 3.67 < 4.5',
      '--on-fill on --green-fill: 2.28 < 4.5',
      '--on-fill on --blue-fill: 2.54 < 4.5',
    ]);
  });

  it('draws every pair of the palette at AA contrast, in light and in dark', async () => {
    const { page, cdp } = await stranger.open();
    await page.goto(origin);
    for (const scheme of SCHEMES) {
      await cdp.send('Emulation.setEmulatedMedia', {
        features: [{ name: 'prefers-color-scheme', value: scheme }],
      });
      const palette = await page.evaluate((names) => {
        const style = getComputedStyle(document.documentElement);
        return Object.fromEntries(names.map((name) => [name, style.getPropertyValue(name).trim()]));
      }, PALETTE_NAMES);
      expect({ scheme, failures: paletteFailures(palette) }).toEqual({ scheme, failures: [] });
    }
    await cdp.send('Emulation.setEmulatedMedia', { features: [] });
  });
});

/**
 * The pairs pwa/src/styles/palette.css draws: [foreground, background, the ratio AA asks]. 4.5:1 for text; 3:1
 * for what only has to be seen as a boundary (field edges, the focus ring, the panic button).
 */
const PAIRS: [string, string, number][] = [
  ...['--bg', '--card', '--code-bg', '--added-bg', '--removed-bg'].map((ground): [string, string, number] => [
    '--fg',
    ground,
    4.5,
  ]),
  ...['--muted', '--red', '--green', '--amber', '--blue'].flatMap((text) =>
    ['--bg', '--card'].map((ground): [string, string, number] => [text, ground, 4.5]),
  ),
  ...['--red-fill', '--red-fill-strong', '--green-fill', '--blue-fill', '--neutral-fill'].map(
    (fill): [string, string, number] => ['--on-fill', fill, 4.5],
  ),
  ['--field-line', '--bg', 3],
  ['--field-line', '--card', 3],
  ['--red-fill', '--bg', 3],
];
const PALETTE_NAMES = [...new Set(PAIRS.flatMap(([a, b]) => [a, b]))];

function paletteFailures(palette: Record<string, string>): string[] {
  return PAIRS.flatMap(([fg, bg, needed]) => {
    const ratio = contrastRatio(palette[fg]!, palette[bg]!);
    return ratio < needed ? [`${fg} on ${bg}: ${ratio.toFixed(2)} < ${needed}`] : [];
  });
}

/** The dark palette before issue 14, in the roles its colours played (white text on --green and --blue). */
const OLD_DARK_PALETTE: Record<string, string> = {
  '--bg': '#0b1120',
  '--fg': '#e2e8f0',
  '--muted': '#94a3b8',
  '--card': '#111827',
  '--code-bg': '#111827',
  '--red': '#dc2626',
  '--green': '#22c55e',
  '--amber': '#f59e0b',
  '--blue': '#60a5fa',
  '--red-fill': '#dc2626',
  '--red-fill-strong': '#991b1b',
  '--green-fill': '#22c55e',
  '--blue-fill': '#60a5fa',
  '--neutral-fill': '#475569',
  '--on-fill': '#ffffff',
  '--field-line': '#64748b',
  // The diff's tints came later: today's, so the old palette is judged on the colours it had.
  '--added-bg': '#14532d',
  '--removed-bg': '#7f1d1d',
};
