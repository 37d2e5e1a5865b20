import type { BitPicture } from './binarize.ts';
import { crossCheck, type Finder } from './findFinders.ts';
import { perspective, type Point } from './perspective.ts';

/** A code's modules as read from the picture: `size` by `size`, 1 dark, row by row. */
export interface Modules {
  size: number;
  dark: Uint8Array;
}

const distance = (a: Finder, b: Finder) => Math.hypot(a.x - b.x, a.y - b.y);

/**
 * The three finders that sit at a code's corners: the pair farthest apart is the diagonal, the
 * third the top-left corner, with both sides to it about equal. Returned as top-left, top-right,
 * bottom-left, or undefined when no three candidates form such a corner.
 */
function cornerFinders(finders: Finder[]): [Finder, Finder, Finder] | undefined {
  let best: { corners: [Finder, Finder, Finder]; misfit: number } | undefined;
  for (let i = 0; i < finders.length; i++)
    for (let j = i + 1; j < finders.length; j++)
      for (let k = j + 1; k < finders.length; k++) {
        const [a, b, c] = [finders[i]!, finders[j]!, finders[k]!];
        const sides = [
          { corner: a, ends: [b, c], length: distance(b, c) },
          { corner: b, ends: [a, c], length: distance(a, c) },
          { corner: c, ends: [a, b], length: distance(a, b) },
        ].sort((x, y) => y.length - x.length);
        const { corner, ends } = sides[0]!;
        const [first, second] = [sides[1]!.length, sides[2]!.length];
        const diagonal = sides[0]!.length;
        // Equal sides at a right angle, and finders of about one module size.
        const misfit =
          Math.abs(first - second) / first +
          Math.abs(diagonal ** 2 - first ** 2 - second ** 2) / diagonal ** 2;
        const sizes = [a, b, c].map((finder) => finder.moduleSize);
        if (misfit > 0.3 || Math.max(...sizes) > 1.5 * Math.min(...sizes)) continue;
        if (best && best.misfit <= misfit) continue;
        // Clockwise from top-left, in picture coordinates (y down): top-right, then bottom-left.
        const [p, q] = ends as [Finder, Finder];
        const clockwise = (p.x - corner.x) * (q.y - corner.y) - (p.y - corner.y) * (q.x - corner.x) > 0;
        best = { corners: clockwise ? [corner, p, q] : [corner, q, p], misfit };
      }
  return best?.corners;
}

/**
 * How many modules apart two finders' centres are, with the module size measured through both
 * along the line that joins them (a code turned in the picture shows longer runs across rows).
 */
function modulesBetween(picture: BitPicture, from: Finder, to: Finder): number {
  const length = distance(from, to);
  const [dx, dy] = [(to.x - from.x) / length, (to.y - from.y) / length];
  const sizes = [crossCheck(picture, from.x, from.y, dx, dy), crossCheck(picture, to.x, to.y, -dx, -dy)];
  const measured = sizes.filter((size) => size !== undefined).map((size) => size.moduleSize);
  return measured.length ? length / (measured.reduce((sum, size) => sum + size, 0) / measured.length) : NaN;
}

/** ISO/IEC 18004:2024 §6.3.6: a dark module, a light ring around it, and a dark ring around that. */
const ALIGNMENT_RINGS = [-1, 0, 1].flatMap((i) => [-1, 0, 1].filter((j) => i || j).map((j) => ({ i, j })));

/**
 * The bottom-right alignment pattern's centre, searched within four modules of where the three
 * finders' grid puts it: the mean of the pixels that sit in a dark module ringed light, then
 * dark, one module out along the grid's own axes.
 */
function findAlignment(picture: BitPicture, guess: Point, across: Point, down: Point): Point | undefined {
  const at = (x: number, y: number, i: number, j: number) => {
    const px = Math.round(x + i * across.x + j * down.x);
    const py = Math.round(y + i * across.y + j * down.y);
    if (px < 0 || py < 0 || px >= picture.width || py >= picture.height) return -1;
    return picture.dark[py * picture.width + px]!;
  };
  const radius = Math.ceil(4 * Math.hypot(across.x, across.y));
  let [sumX, sumY, count] = [0, 0, 0];
  for (let y = Math.round(guess.y) - radius; y <= guess.y + radius; y++)
    for (let x = Math.round(guess.x) - radius; x <= guess.x + radius; x++) {
      const fits =
        at(x, y, 0, 0) === 1 &&
        ALIGNMENT_RINGS.every(({ i, j }) => at(x, y, i, j) === 0 && at(x, y, 2 * i, 2 * j) === 1);
      if (!fits) continue;
      sumX += x;
      sumY += y;
      count++;
    }
  return count ? { x: sumX / count, y: sumY / count } : undefined;
}

/**
 * The code's modules, sampled at each module's centre. The grid is the projective map through
 * the three finders and the bottom-right alignment pattern, which takes in a screen filmed at
 * an angle; a code without one (version 1), or where it is not found, gets the parallelogram the
 * finders span. Its size comes from the finders' distance in modules, rounded to a size a
 * version has (17 + 4 × version).
 */
export function sampleSymbol(picture: BitPicture, finders: Finder[]): Modules | undefined {
  const corners = cornerFinders(finders);
  if (!corners) return undefined;
  const [topLeft, topRight, bottomLeft] = corners;
  const between =
    (modulesBetween(picture, topLeft, topRight) + modulesBetween(picture, topLeft, bottomLeft)) / 2;
  const version = Math.round((between + 7 - 17) / 4);
  if (!(version >= 1 && version <= 40)) return undefined;
  const size = 17 + 4 * version;
  // Finder centres are 3.5 modules in from the edges, the alignment pattern's 6.5.
  const [near, far, alignment] = [3.5, size - 3.5, size - 6.5];
  const across = { x: (topRight.x - topLeft.x) / (far - near), y: (topRight.y - topLeft.y) / (far - near) };
  const down = { x: (bottomLeft.x - topLeft.x) / (far - near), y: (bottomLeft.y - topLeft.y) / (far - near) };
  const guess = {
    x: topLeft.x + (alignment - near) * (across.x + down.x),
    y: topLeft.y + (alignment - near) * (across.y + down.y),
  };
  const fourth = (version > 1 && findAlignment(picture, guess, across, down)) || guess;
  const map = perspective(
    [
      { x: near, y: near },
      { x: far, y: near },
      { x: near, y: far },
      { x: alignment, y: alignment },
    ],
    [topLeft, topRight, bottomLeft, fourth],
  );
  if (!map) return undefined;
  const dark = new Uint8Array(size * size);
  for (let row = 0; row < size; row++)
    for (let column = 0; column < size; column++) {
      const point = map(column + 0.5, row + 0.5);
      const [x, y] = [Math.round(point.x), Math.round(point.y)];
      if (x < 0 || y < 0 || x >= picture.width || y >= picture.height) return undefined;
      dark[row * size + column] = picture.dark[y * picture.width + x]!;
    }
  return { size, dark };
}
