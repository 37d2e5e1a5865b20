/**
 * Draws the app's icons (a latch: a padlock on a dark tile) and writes them as PNG files into
 * pwa/public/icons. Run once; the PNGs are committed.   npx tsx scripts/icons.ts
 */
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

function crc32(bytes: Uint8Array): number {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), 8 + data.length);
  return out;
}

function png(size: number, pixel: (x: number, y: number) => [number, number, number, number]): Buffer {
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) raw.set(pixel(x, y), y * (size * 4 + 1) + 1 + x * 4);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

/** The padlock, in coordinates from 0 to 1, drawn within `safe` of the tile (maskable icons need 80 %). */
function icon(size: number, safe: number, rounded: boolean) {
  const tile: [number, number, number, number] = [17, 24, 39, 255];
  const metal: [number, number, number, number] = [248, 250, 252, 255];
  const accent: [number, number, number, number] = [220, 38, 38, 255];
  return png(size, (px, py) => {
    const x = (px + 0.5) / size;
    const y = (py + 0.5) / size;
    const corner = 0.18;
    const dx = Math.max(corner - x, x - (1 - corner), 0);
    const dy = Math.max(corner - y, y - (1 - corner), 0);
    if (rounded && dx * dx + dy * dy > corner * corner) return [0, 0, 0, 0];
    // Map into the safe zone.
    const u = (x - 0.5) / safe + 0.5;
    const v = (y - 0.5) / safe + 0.5;
    const inBody = u > 0.25 && u < 0.75 && v > 0.45 && v < 0.8;
    const ring = Math.hypot(u - 0.5, v - 0.45);
    const inShackle = v < 0.45 && ring > 0.13 && ring < 0.19;
    const inKeyhole =
      Math.hypot(u - 0.5, v - 0.58) < 0.045 || (Math.abs(u - 0.5) < 0.02 && v > 0.58 && v < 0.7);
    if (inBody && inKeyhole) return accent;
    if (inBody || inShackle) return metal;
    return tile;
  });
}

const out = new URL('../pwa/public/icons/', import.meta.url);
writeFileSync(new URL('icon-192.png', out), icon(192, 1, true));
writeFileSync(new URL('icon-512.png', out), icon(512, 1, true));
writeFileSync(new URL('maskable-512.png', out), icon(512, 0.8, false));
writeFileSync(new URL('apple-touch-icon.png', out), icon(180, 0.9, false));
console.log('icons written to pwa/public/icons');
