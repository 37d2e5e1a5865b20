import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeQR } from 'qr';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { PAIRING_SECRET_BYTES } from '../../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../../shared/pairing/pairingLink.ts';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { launchChromium } from '../support/browserPhone.ts';

const state = mkdtempSync(join(tmpdir(), 'latch-scan-'));
let relay: RelayProcess;
let origin: string;

beforeAll(async () => {
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  relay = await startRelay({ persistTo: state, envFile });
  origin = `http://localhost:${relay.port}`;
});

afterAll(async () => {
  await relay?.stop();
  rmSync(state, { recursive: true, force: true });
});

/**
 * A one-frame Y4M video of `text` as a QR code, black on white, for Chromium's fake camera
 * (it loops the file). 4:2:0 with neutral chroma: the picture is all in the luma plane.
 */
function qrVideo(text: string): string {
  const modules = encodeQR(text, 'raw');
  const size = 400;
  const scale = Math.floor(size / (modules.length + 8));
  const offset = Math.floor((size - modules.length * scale) / 2);
  const luma = Buffer.alloc(size * size, 255);
  modules.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (!dark) return;
      for (let dy = 0; dy < scale; dy++) {
        const start = (offset + y * scale + dy) * size + offset + x * scale;
        luma.fill(0, start, start + scale);
      }
    }),
  );
  const chroma = Buffer.alloc((size / 2) * (size / 2) * 2, 128);
  const path = join(state, `qr-${Math.random().toString(36).slice(2)}.y4m`);
  writeFileSync(
    path,
    Buffer.concat([Buffer.from(`YUV4MPEG2 W${size} H${size} F10:1 Ip A1:1 C420jpeg\nFRAME\n`), luma, chroma]),
  );
  return path;
}

/** Opens the app's scanner with a camera that films `text`'s QR code. */
async function scan(text: string, prepare?: (context: BrowserContext) => Promise<void>) {
  const context = await launchChromium('scan', [
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-video-capture=${qrVideo(text)}`,
  ]);
  await context.grantPermissions(['camera'], { origin });
  await prepare?.(context);
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${origin}/scan`);
  return { context, page };
}

const link = (relayOrigin: string) =>
  pairingLink({ origin: relayOrigin, secret: randomBytes(PAIRING_SECRET_BYTES) });

describe('the in-app QR scanner', () => {
  it('reads a pairing code from the camera and opens its pair screen', async () => {
    const pairing = link(origin);
    const { context, page } = await scan(pairing);
    try {
      // Linux Chromium has no BarcodeDetector: this is the JavaScript decoder at work.
      expect(await page.evaluate(() => 'BarcodeDetector' in window)).toBe(false);
      await page.waitForURL((url) => url.pathname === '/pair', { timeout: 20_000 });
      expect(page.url()).toBe(pairing);
    } finally {
      await context.close();
    }
  });

  it('lets the camera go when the scanner is left before the camera was given', async () => {
    const { context, page } = await scan(link(origin), async (context) => {
      // The camera is given only when the test says so: after the person has left.
      await context.addInitScript(() => {
        const given = new Promise<void>((resolve) => Object.assign(window, { giveCamera: resolve }));
        const ask = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
        navigator.mediaDevices.getUserMedia = async (constraints) => {
          await given;
          const stream = await ask(constraints);
          Object.assign(window, { cameraStream: stream });
          return stream;
        };
      });
    });
    try {
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.waitForURL((url) => url.pathname === '/');
      await page.evaluate(() => (window as unknown as { giveCamera: () => void }).giveCamera());
      const cameraOn = () =>
        page.evaluate(() => {
          const stream = (window as unknown as { cameraStream?: MediaStream }).cameraStream;
          return stream?.getTracks().map((track) => track.readyState);
        });
      await expect.poll(cameraOn).toEqual(['ended']);
    } finally {
      await context.close();
    }
  });

  it('refuses a code for another relay, and stays on the scanner', async () => {
    const { context, page } = await scan(link('https://relay.attacker.example'));
    try {
      await page
        .getByText('This code is for another relay. Open its link instead.')
        .waitFor({ timeout: 20_000 });
      expect(new URL(page.url()).pathname).toBe('/scan');
    } finally {
      await context.close();
    }
  });
});
