/** A camera frame as a canvas gives it: RGBA pixels, row by row. */
export interface Picture {
  width: number;
  height: number;
  data: Uint8ClampedArray | Uint8Array;
}

/** One bit per pixel: 1 dark, 0 light. */
export interface BitPicture {
  width: number;
  height: number;
  dark: Uint8Array;
}

/** How much darker than its surroundings a pixel must be to count as dark (Bradley and Roth). */
const DARKER_BY = 0.85;

/**
 * Dark or light for every pixel, against the mean of the square around it rather than one
 * threshold for the frame: a phone filming a screen sees glare and shading across the code.
 * The square is an eighth of the frame, far wider than a finder pattern's dark centre.
 */
export function binarize({ width, height, data }: Picture): BitPicture {
  // Sums of brightness over every rectangle from the origin (an integral image), one row and
  // column of zeros first, so any square's mean costs four reads.
  const stride = width + 1;
  const sums = new Float64Array(stride * (height + 1));
  for (let y = 0; y < height; y++) {
    let row = 0;
    for (let x = 0; x < width; x++) {
      const pixel = (y * width + x) * 4;
      row += data[pixel]! + 2 * data[pixel + 1]! + data[pixel + 2]!;
      sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1]! + row;
    }
  }
  const half = Math.max(4, Math.floor(Math.max(width, height) / 16));
  const dark = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const top = Math.max(0, y - half);
    const bottom = Math.min(height, y + half + 1);
    for (let x = 0; x < width; x++) {
      const left = Math.max(0, x - half);
      const right = Math.min(width, x + half + 1);
      const area = (bottom - top) * (right - left);
      const total =
        sums[bottom * stride + right]! -
        sums[top * stride + right]! -
        sums[bottom * stride + left]! +
        sums[top * stride + left]!;
      const pixel = (y * width + x) * 4;
      const brightness = data[pixel]! + 2 * data[pixel + 1]! + data[pixel + 2]!;
      dark[y * width + x] = brightness * area < total * DARKER_BY ? 1 : 0;
    }
  }
  return { width, height, dark };
}
