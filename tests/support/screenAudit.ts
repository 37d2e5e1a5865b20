import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { expect } from 'vitest';
import { TEST_OUTPUT } from './browserPhone.ts';

/** axe-core, a devDependency: put into the page under test, never into the app's bundle. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const SCREENS = join(TEST_OUTPUT, 'screens');
export const SCHEMES = ['light', 'dark'] as const;
export const SIZES = [
  { width: 390, height: 844 },
  { width: 320, height: 640 },
] as const;
export const BACKGROUND = { light: 'rgb(248, 250, 252)', dark: 'rgb(11, 17, 32)' } as const;

/** What axe found on one screen, in one scheme, at one width: for the person reading the run. */
export interface ScreenFinding {
  screen: string;
  scheme: string;
  width: number;
  serious: number;
  lesser: string;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

export async function runAxe(page: Page): Promise<AxeViolation[]> {
  // The relay's CSP allows no inline script, so a <script> tag with axe's source would be
  // refused (that is the CSP working); evaluating it over CDP leaves the app's CSP in force.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<unknown> } })
      .axe;
    const results = (await axe.run(document, { resultTypes: ['violations'] })) as {
      violations: AxeViolation[];
    };
    return results.violations.map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
    }));
  });
}

const settle = (page: Page) =>
  page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

/**
 * One screen, as it is, at each width and in each colour scheme: axe's serious and critical
 * violations, sideways scrolling, and a screenshot in test-output/screens/ to look at.
 * Returns what is wrong, for the test to show.
 */
export async function auditScreen(
  page: Page,
  cdp: CDPSession,
  screen: string,
  found: ScreenFinding[],
): Promise<string[]> {
  mkdirSync(SCREENS, { recursive: true });
  const problems: string[] = [];
  for (const { width, height } of SIZES) {
    await page.setViewportSize({ width, height });
    for (const scheme of SCHEMES) {
      await cdp.send('Emulation.setEmulatedMedia', {
        features: [{ name: 'prefers-color-scheme', value: scheme }],
      });
      await settle(page);
      // The scheme really switched: the palette follows prefers-color-scheme.
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
        BACKGROUND[scheme],
      );
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      if (scrollWidth > width)
        problems.push(`${scheme} ${width}px: ${scrollWidth}px wide, it scrolls sideways`);
      const violations = await runAxe(page);
      const serious = violations.filter(({ impact }) => impact === 'serious' || impact === 'critical');
      for (const violation of serious)
        problems.push(
          `${scheme} ${width}px: ${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes
            .map(({ target, failureSummary }) => `${target.join(' ')}: ${failureSummary ?? ''}`)
            .join('; ')}`,
        );
      found.push({
        screen,
        scheme,
        width,
        serious: serious.length,
        lesser: violations
          .filter((violation) => !serious.includes(violation))
          .map(({ id, impact }) => `${id} (${impact})`)
          .join(', '),
      });
      await page.screenshot({ path: join(SCREENS, `${screen}-${scheme}-${width}.png`), fullPage: true });
    }
  }
  await cdp.send('Emulation.setEmulatedMedia', { features: [] });
  problems.push(...(await largeTextOrZoom(page, screen)));
  await page.setViewportSize(SIZES[0]);
  return problems;
}

/**
 * Text at twice its size (the phone's larger-text setting) at each width, and a 390 px phone
 * zoomed to 200% (195 CSS px): the page must still not scroll sideways, where a button would
 * be half off the screen.
 */
async function largeTextOrZoom(page: Page, screen: string): Promise<string[]> {
  const problems: string[] = [];
  const sideways = async (what: string, width: number) => {
    await settle(page);
    const [scrollWidth, widest] = await page.evaluate(() => {
      // What sticks out, or what a word too long for it sticks out of: the deepest names it.
      const past = [...document.body.querySelectorAll('*')].filter(
        (element) =>
          element.getBoundingClientRect().right > document.documentElement.clientWidth ||
          (element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1),
      );
      const deepest = past.find(
        (element) => !past.some((other) => other !== element && element.contains(other)),
      );
      return [
        document.documentElement.scrollWidth,
        deepest ? `${deepest.tagName.toLowerCase()}.${deepest.className}` : '',
      ];
    });
    if (scrollWidth > width)
      problems.push(`${screen}, ${what}: ${scrollWidth}px wide (${widest}), it scrolls sideways`);
  };
  const textSize = (size: string) =>
    page.evaluate((value) => (document.documentElement.style.fontSize = value), size);
  for (const { width, height } of SIZES) {
    await page.setViewportSize({ width, height });
    await textSize('200%');
    await sideways(`text at 200% ${width}px`, width);
    await textSize('');
  }
  await page.setViewportSize({ width: 195, height: 422 });
  await sideways('zoomed to 200% (195px)', 195);
  return problems;
}
