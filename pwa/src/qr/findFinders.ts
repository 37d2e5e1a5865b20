import type { BitPicture } from './binarize.ts';

/** A finder pattern's centre, its module size in pixels, and how many scan lines crossed it. */
export interface Finder {
  x: number;
  y: number;
  moduleSize: number;
  seen: number;
}

/** Most candidates kept for the search for three that form a code's corners. */
const MOST_CANDIDATES = 8;
/** Most distinct hits tracked in one frame: a busy scene (text, foliage) must not cost seconds. */
const MOST_HITS = 64;

/** ISO/IEC 18004:2024 §6.3.3: dark, light, dark, light, dark runs in the ratio 1:1:3:1:1. */
function finderRatio(runs: number[]): number | undefined {
  const total = runs.reduce((sum, run) => sum + run, 0);
  const moduleSize = total / 7;
  if (moduleSize < 1) return undefined;
  const expected = [1, 1, 3, 1, 1];
  const fits = runs.every((run, i) => Math.abs(run - expected[i]! * moduleSize) < moduleSize * 0.7);
  return fits ? moduleSize : undefined;
}

/**
 * The runs of a finder pattern crossing (x, y) along (dx, dy), a unit step, which must fall in
 * its dark centre: where that centre's middle lies along the line, and the module size along it.
 */
export function crossCheck(
  picture: BitPicture,
  x: number,
  y: number,
  dx: number,
  dy: number,
): { offset: number; moduleSize: number } | undefined {
  const at = (t: number) => {
    const px = Math.round(x + dx * t);
    const py = Math.round(y + dy * t);
    if (px < 0 || py < 0 || px >= picture.width || py >= picture.height) return -1;
    return picture.dark[py * picture.width + px]!;
  };
  if (at(0) !== 1) return undefined;
  const runs = [0, 0, 0, 0, 0];
  const edges = [0, 0];
  for (const [side, step, order] of [
    [0, -1, [2, 1, 0]],
    [1, 1, [2, 3, 4]],
  ] as const) {
    let t = side === 0 ? 0 : 1;
    order.forEach((run, i) => {
      const colour = i % 2 === 0 ? 1 : 0;
      while (at(t) === colour) {
        runs[run]!++;
        t += step;
      }
      if (i === 0) edges[side] = t - step;
    });
  }
  const moduleSize = finderRatio(runs);
  return moduleSize === undefined ? undefined : { offset: (edges[0]! + edges[1]!) / 2, moduleSize };
}

/**
 * Finder pattern candidates: every row scanned for the 1:1:3:1:1 runs, each hit confirmed down
 * its column and again along its row, then merged with the hits of neighbouring rows.
 */
export function findFinders(picture: BitPicture): Finder[] {
  const found: Finder[] = [];
  const { width, height, dark } = picture;
  for (let y = 0; y < height; y++) {
    // Where each run of this row starts, alternating colours from the row's first pixel.
    const starts: number[] = [0];
    for (let x = 1; x < width; x++) if (dark[y * width + x] !== dark[y * width + x - 1]) starts.push(x);
    starts.push(width);
    for (let i = dark[y * width]! ? 0 : 1; i + 5 < starts.length; i += 2) {
      const runs = [0, 1, 2, 3, 4].map((k) => starts[i + k + 1]! - starts[i + k]!);
      if (finderRatio(runs) === undefined) continue;
      const column = Math.round((starts[i + 2]! + starts[i + 3]!) / 2);
      const vertical = crossCheck(picture, column, y, 0, 1);
      if (!vertical) continue;
      const centreY = y + vertical.offset;
      const horizontal = crossCheck(picture, column, Math.round(centreY), 1, 0);
      if (!horizontal) continue;
      const centreX = column + horizontal.offset;
      const moduleSize = (vertical.moduleSize + horizontal.moduleSize) / 2;
      const same = found.find(
        (finder) =>
          Math.abs(finder.x - centreX) < 2 * moduleSize && Math.abs(finder.y - centreY) < 2 * moduleSize,
      );
      if (!same) {
        if (found.length < MOST_HITS) found.push({ x: centreX, y: centreY, moduleSize, seen: 1 });
        continue;
      }
      // A running mean over the rows that crossed it.
      same.x = (same.x * same.seen + centreX) / (same.seen + 1);
      same.y = (same.y * same.seen + centreY) / (same.seen + 1);
      same.moduleSize = (same.moduleSize * same.seen + moduleSize) / (same.seen + 1);
      same.seen++;
    }
  }
  return found
    .filter((finder) => finder.seen > 1)
    .sort((a, b) => b.seen - a.seen)
    .slice(0, MOST_CANDIDATES);
}
