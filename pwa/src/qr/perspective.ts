export type Point = { x: number; y: number };

/**
 * The projective map taking four points of the code's own grid (in modules) to where they lie
 * in the picture: what a screen filmed at an angle looks like. Solved as the eight linear
 * equations x = (a·u + b·v + c) / (g·u + h·v + 1), y = (d·u + e·v + f) / (g·u + h·v + 1).
 */
export function perspective(grid: Point[], picture: Point[]): ((u: number, v: number) => Point) | undefined {
  const rows = grid.flatMap(({ x: u, y: v }, i) => {
    const { x, y } = picture[i]!;
    return [
      [u, v, 1, 0, 0, 0, -u * x, -v * x, x],
      [0, 0, 0, u, v, 1, -u * y, -v * y, y],
    ];
  });
  // Gaussian elimination with partial pivoting.
  for (let column = 0; column < 8; column++) {
    let pivot = column;
    for (let row = column + 1; row < 8; row++)
      if (Math.abs(rows[row]![column]!) > Math.abs(rows[pivot]![column]!)) pivot = row;
    [rows[column], rows[pivot]] = [rows[pivot]!, rows[column]!];
    const lead = rows[column]![column]!;
    if (Math.abs(lead) < 1e-12) return undefined;
    for (let row = 0; row < 8; row++) {
      if (row === column) continue;
      const factor = rows[row]![column]! / lead;
      for (let k = column; k < 9; k++) rows[row]![k]! -= factor * rows[column]![k]!;
    }
  }
  const [a, b, c, d, e, f, g, h] = rows.map((row, i) => row[8]! / row[i]!) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return (u, v) => {
    const w = g * u + h * v + 1;
    return { x: (a * u + b * v + c) / w, y: (d * u + e * v + f) / w };
  };
}
